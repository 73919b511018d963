//! A streaming pass over one server's stdout, below rmcp, that keeps every
//! message small: it follows the JSON structure byte by byte (strings, keys,
//! nesting — no values are built) and cuts long strings as they stream past.
//! A long text (`content[].text`, `content[].resource.text`, `contents[].text`,
//! `messages[].content.text` of a result) keeps its head in the message and
//! goes whole, decoded, into a file beside it; a long binary (`data`, `blob`)
//! is left out; any other long string is cut. So a 100 MiB result costs a few
//! MiB of memory however it is spelled, and rmcp only ever parses the head.

use std::io::Write as _;

use super::paths::{Frame, Key, Role, role_at};
use super::unescape::Unescaper;
use super::{Omitted, Piece, SpillTable, Spilled};

/// How long a string may grow before it is cut, by what it is.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    /// Result text: bytes of it kept in the message (the rest goes to a file).
    pub text: usize,
    /// Base64 payloads: kept whole up to this, else left out entirely.
    pub binary: usize,
    /// Keys and every other string.
    pub other: usize,
    /// A `requestState`, decoded (`max_request_state_bytes`): a longer one is
    /// not echoed, so it is cut and its length reported.
    pub state: usize,
}

/// One string being read.
struct Str {
    role: Role,
    /// Raw (escaped) bytes passed on so far.
    emitted: usize,
    /// Raw bytes seen.
    seen: usize,
    cut: bool,
    /// After a backslash, or inside `\uXXXX` (hex digits left).
    escape: bool,
    hex_left: u8,
    /// The last complete escape was a high surrogate: its low half must follow.
    high_surrogate: bool,
    /// Keys: the first bytes, to recognise the ones that matter.
    key: Vec<u8>,
    /// Text: decoded bytes so far (until cut), then the file they went to.
    /// Every string is decoded (to know where a surrogate pair is); only a
    /// text keeps what comes out.
    decoder: Unescaper,
    head: Vec<u8>,
    file: Option<(std::io::BufWriter<std::fs::File>, std::path::PathBuf)>,
    decoded: u64,
    /// Binary: held back until the string ends.
    held: Vec<u8>,
}

/// The state of one connection's stdout.
pub struct Lexer {
    caps: Caps,
    table: std::sync::Arc<SpillTable>,
    stack: Vec<Frame>,
    string: Option<Str>,
    /// The raw `id` of the message, once seen (number or string content).
    id: Vec<u8>,
    capturing_id: bool,
    texts: usize,
    message: Spilled,
    /// Runs of plain string bytes taken whole (`plain_run`); off only in the
    /// test that checks it changes nothing.
    bulk: bool,
}

impl Lexer {
    pub fn new(caps: Caps, table: std::sync::Arc<SpillTable>) -> Self {
        Self {
            caps,
            table,
            stack: Vec::new(),
            string: None,
            id: Vec::new(),
            capturing_id: false,
            texts: 0,
            message: Spilled::default(),
            bulk: true,
        }
    }

    /// Byte by byte only, as the reference for the bulk path.
    #[cfg(test)]
    pub(super) fn byte_by_byte(mut self) -> Self {
        self.bulk = false;
        self
    }

    /// Passes `input` on into `out`, less what is cut.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let mut at = 0;
        while at < input.len() {
            let run = if self.bulk {
                self.plain_run(&input[at..], out)
            } else {
                0
            };
            if run > 0 {
                at += run;
                continue;
            }
            let b = input[at];
            at += 1;
            if b == b'\n' {
                self.end_of_message();
                out.push(b);
                continue;
            }
            if self.string.is_some() {
                self.string_byte(b, out);
                continue;
            }
            if self.capturing_id {
                match b {
                    b',' | b'}' | b']' => self.capturing_id = false,
                    b' ' | b'\t' | b'\r' => {}
                    _ if self.id.len() < 256 => self.id.push(b),
                    _ => {}
                }
            }
            match b {
                b'{' => self.stack.push(Frame::Object {
                    key: Key::Other,
                    expect_key: true,
                }),
                b'[' => self.stack.push(Frame::Array),
                b'}' | b']' => {
                    self.stack.pop();
                }
                b',' => {
                    if let Some(Frame::Object { expect_key, .. }) = self.stack.last_mut() {
                        *expect_key = true;
                    }
                }
                b':' => {
                    if let Some(Frame::Object { key, expect_key }) = self.stack.last_mut() {
                        *expect_key = false;
                        if *key == Key::Id && self.stack.len() == 1 {
                            self.capturing_id = true;
                            self.id.clear();
                        }
                    }
                }
                b'"' => self.open_string(),
                _ => {}
            }
            out.push(b);
        }
    }

    /// What `string_byte` does to a run of plain bytes (no quote, backslash or
    /// newline) in a text, a key or an ordinary string, done to the whole run at once:
    /// most of what a server sends (descriptions, schemas, result text) is
    /// such runs, and byte by byte they cost ~13 ns each — the largest share
    /// of the harness's own CPU in a listing of 1,000 tools. The run stops
    /// short of the cap, so any cut still happens byte by byte, at a safe
    /// place. Returns how many bytes it took (0: none, go byte by byte).
    fn plain_run(&mut self, input: &[u8], out: &mut Vec<u8>) -> usize {
        let caps = self.caps;
        let Some(s) = self.string.as_mut() else {
            return 0;
        };
        // Inside an escape, or with half a surrogate pair pending, a plain
        // byte means something else to the decoder.
        if s.escape || s.hex_left > 0 || s.high_surrogate {
            return 0;
        }
        let (cap, size) = match s.role {
            Role::Text => (caps.text, usize::try_from(s.decoded).unwrap_or(usize::MAX)),
            Role::Other | Role::Key => (caps.other, s.emitted),
            _ => return 0,
        };
        let plain = memchr::memchr3(b'"', b'\\', b'\n', input).unwrap_or(input.len());
        let take = if s.cut {
            plain
        } else {
            plain.min(cap.saturating_sub(size))
        };
        if take == 0 {
            return 0;
        }
        let run = &input[..take];
        s.seen += take;
        if s.role == Role::Key {
            // A key's first 16 bytes say which key it is.
            let room = 16usize.saturating_sub(s.key.len()).min(take);
            s.key.extend_from_slice(&run[..room]);
        }
        if s.role == Role::Text {
            // Plain bytes decode to themselves.
            s.decoded += take as u64;
            match (s.file.as_mut(), s.cut) {
                (Some((file, _)), _) => {
                    if file.write_all(run).is_err() {
                        self.message.failed = true;
                    }
                }
                (None, false) => s.head.extend_from_slice(run),
                (None, true) => {}
            }
        }
        if !s.cut {
            out.extend_from_slice(run);
            s.emitted += take;
        }
        take
    }

    fn open_string(&mut self) {
        self.capturing_id = false;
        let role = match self.stack.last() {
            Some(Frame::Object {
                expect_key: true, ..
            }) => Role::Key,
            _ => role_at(&self.stack),
        };
        if role == Role::Id {
            self.id.clear();
        }
        self.string = Some(Str {
            role,
            emitted: 0,
            seen: 0,
            cut: false,
            escape: false,
            hex_left: 0,
            high_surrogate: false,
            key: Vec::new(),
            decoder: Unescaper::default(),
            head: Vec::new(),
            file: None,
            decoded: 0,
            held: Vec::new(),
        });
    }

    fn string_byte(&mut self, b: u8, out: &mut Vec<u8>) {
        let caps = self.caps;
        let Some(s) = self.string.as_mut() else {
            return;
        };
        let closing = b == b'"' && !s.escape && s.hex_left == 0;
        if closing {
            self.close_string(out);
            return;
        }
        s.seen += 1;
        // Where a cut may fall: not inside an escape, not between the halves of
        // a surrogate pair, not inside a UTF-8 character.
        let safe = !s.escape && s.hex_left == 0 && !s.high_surrogate && (b & 0xC0) != 0x80;
        if s.escape {
            s.escape = false;
            if b == b'u' {
                s.hex_left = 4;
            }
        } else if s.hex_left > 0 {
            s.hex_left -= 1;
        } else if b == b'\\' {
            s.escape = true;
        }
        let decoded_before = s.decoded;
        let mut decoded = [0u8; 8];
        let n = s.decoder.push(b, &mut decoded);
        s.high_surrogate = s.decoder.awaits_low_surrogate();
        if s.role == Role::State {
            s.decoded += n as u64;
        }
        if s.role == Role::Text {
            s.decoded += n as u64;
            match (s.file.as_mut(), s.cut) {
                (Some((file, _)), _) => {
                    if file.write_all(&decoded[..n]).is_err() {
                        self.message.failed = true;
                    }
                }
                (None, false) => s.head.extend_from_slice(&decoded[..n]),
                // The file could not be made: the rest is lost (and said so).
                (None, true) => {}
            }
        }
        match s.role {
            Role::Key if s.key.len() < 16 => s.key.push(b),
            Role::Id if self.id.len() < 256 => self.id.push(b),
            Role::Binary => {
                if s.cut {
                } else if s.held.len() < caps.binary {
                    s.held.push(b);
                } else {
                    s.cut = true;
                    s.held = Vec::new();
                }
                return;
            }
            _ => {}
        }
        let cap = match s.role {
            Role::Text => caps.text,
            Role::Id => 256,
            Role::State => caps.state,
            _ => caps.other,
        };
        // Text is measured as the model will see it (decoded), a state as the
        // server will get it back (decoded), the rest raw.
        let size = if matches!(s.role, Role::Text | Role::State) {
            decoded_before as usize
        } else {
            s.emitted
        };
        if !s.cut && size >= cap && safe {
            s.cut = true;
            if s.role == Role::Text {
                // From here the whole text goes to a file: what was decoded so
                // far first (the head the message keeps, and the byte just read).
                match self.table.create_piece() {
                    Ok((mut file, path)) => {
                        if file.write_all(&s.head).is_err() {
                            self.message.failed = true;
                        }
                        s.head = Vec::new();
                        s.file = Some((file, path));
                    }
                    Err(_) => self.message.failed = true,
                }
            }
        }
        if !s.cut {
            out.push(b);
            s.emitted += 1;
        }
    }

    fn close_string(&mut self, out: &mut Vec<u8>) {
        let Some(s) = self.string.take() else {
            return;
        };
        match s.role {
            Role::Binary if s.cut => {
                self.message.omitted.push(Omitted {
                    what: "binary data",
                    bytes: s.seen as u64,
                });
            }
            Role::Binary => out.extend_from_slice(&s.held),
            Role::Key => {
                if let Some(Frame::Object { key, .. }) = self.stack.last_mut() {
                    *key = if s.cut { Key::Other } else { Key::of(&s.key) };
                }
            }
            Role::Text => {
                let ordinal = self.texts;
                self.texts += 1;
                if let Some((mut file, path)) = s.file {
                    if file.flush().is_err() {
                        self.message.failed = true;
                    }
                    self.message.pieces.push(Piece {
                        ordinal,
                        path: Some(path),
                        bytes: s.decoded,
                    });
                } else if s.cut {
                    self.message.pieces.push(Piece {
                        ordinal,
                        path: None,
                        bytes: s.decoded,
                    });
                }
            }
            Role::State if s.cut => self.message.state_cut = Some(s.decoded),
            Role::State => {}
            Role::Id | Role::Other => {
                if s.cut {
                    self.message.cut_other = true;
                    self.message.omitted.push(Omitted {
                        what: "text in another field",
                        bytes: (s.seen - s.emitted) as u64,
                    });
                }
            }
        }
        out.push(b'"');
    }

    /// A line ended: whatever was cut from it is filed under its id.
    fn end_of_message(&mut self) {
        if let Some(s) = self.string.take()
            && let Some((_, path)) = s.file
        {
            // A message cut off mid-string: its piece is worthless.
            let _ = std::fs::remove_file(path);
        }
        let message = std::mem::take(&mut self.message);
        if !message.is_empty() {
            self.table.file(id_key(&self.id), message);
        }
        self.stack.clear();
        self.id.clear();
        self.capturing_id = false;
        self.texts = 0;
    }
}

/// The id as the table keys it: a string's content, or a number's digits.
pub fn id_key(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).trim().to_string()
}
