//! The reader rmcp reads a stdio server through: each chunk of the server's
//! stdout goes through the `Lexer`, which passes it on less what it cuts. The
//! output of a chunk is never larger than the chunk, so memory stays bounded
//! by the chunk size plus what the lexer holds (a text head, a small binary).

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};

use super::lexer::Lexer;

const CHUNK: usize = 64 * 1024;

pub struct Gate<R> {
    inner: R,
    lexer: Lexer,
    chunk: Box<[u8]>,
    pending: Vec<u8>,
    at: usize,
}

impl<R> Gate<R> {
    pub fn new(inner: R, lexer: Lexer) -> Self {
        Self {
            inner,
            lexer,
            chunk: vec![0; CHUNK].into_boxed_slice(),
            pending: Vec::with_capacity(CHUNK),
            at: 0,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Gate<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.at < this.pending.len() {
                let n = buf.remaining().min(this.pending.len() - this.at);
                buf.put_slice(&this.pending[this.at..this.at + n]);
                this.at += n;
                return Poll::Ready(Ok(()));
            }
            this.pending.clear();
            this.at = 0;
            let mut read = ReadBuf::new(&mut this.chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            let n = read.filled().len();
            if n == 0 {
                return Poll::Ready(Ok(()));
            }
            // Local file writes of at most one chunk: page-cache fast, and
            // bounded, so they may run on the reading task.
            this.lexer.feed(&this.chunk[..n], &mut this.pending);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::io::AsyncReadExt as _;

    use super::super::SpillTable;
    use super::super::lexer::Caps;
    use super::*;

    async fn pass(input: &[u8], caps: Caps, table: &Arc<SpillTable>) -> Vec<u8> {
        let mut gate = Gate::new(input, Lexer::new(caps, Arc::clone(table)));
        let mut out = Vec::new();
        gate.read_to_end(&mut out).await.unwrap();
        out
    }

    const CAPS: Caps = Caps {
        text: 10,
        binary: 16,
        other: 20,
        state: 24,
    };

    #[tokio::test]
    async fn small_messages_pass_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let table = Arc::new(SpillTable::new(dir.path().join("spill")));
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"short\"}]}}\n{\"method\":\"x\"}\n";
        assert_eq!(pass(input, CAPS, &table).await, input);
        assert!(table.take("3").is_none());
    }

    #[tokio::test]
    async fn long_text_keeps_its_head_and_goes_whole_to_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let table = Arc::new(SpillTable::new(dir.path().join("spill")));
        let text = "line one\nline two é \"quoted\" \u{1F600} and much more text after that";
        let message = serde_json::json!({"jsonrpc":"2.0","result":{"content":[
            {"type":"text","text":"first"},
            {"type":"image","mimeType":"image/png","data":"A".repeat(40)},
            {"type":"resource","resource":{"uri":"x:/r","text":text}},
        ],"structuredContent":{"k":"v".repeat(30)}},"id":"req-7"});
        let line = format!("{message}\n");
        let out = pass(line.as_bytes(), CAPS, &table).await;
        let parsed: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let head = parsed["result"]["content"][2]["resource"]["text"]
            .as_str()
            .unwrap();
        assert!(
            text.starts_with(head) && head.len() < text.len(),
            "{head:?}"
        );
        assert_eq!(
            parsed["result"]["content"][1]["data"], "",
            "a long binary is left out"
        );
        assert_eq!(parsed["result"]["content"][0]["text"], "first");
        let spilled = table.take("req-7").expect("filed under the id");
        assert!(spilled.cut_other, "structuredContent was cut");
        assert_eq!(spilled.pieces.len(), 1);
        assert_eq!(spilled.pieces[0].ordinal, 1);
        assert_eq!(
            std::fs::read_to_string(spilled.pieces[0].path.as_ref().unwrap()).unwrap(),
            text
        );
        assert_eq!(spilled.pieces[0].bytes, text.len() as u64);
        assert_eq!(spilled.omitted[0].bytes, 40);
        let path = spilled.pieces[0].path.clone().unwrap();
        drop(spilled);
        assert!(!path.exists(), "an unclaimed piece is removed");
    }

    #[tokio::test]
    async fn cuts_never_split_an_escape_or_a_character() {
        let dir = tempfile::tempdir().unwrap();
        let table = Arc::new(SpillTable::new(dir.path().join("spill")));
        for text in [
            "éééééééééééééééé",
            "\\n\\n\\n\\n\\n\\n\\n\\n",
            "\\ud83d\\ude00\\ud83d\\ude00\\ud83d\\ude00\\ud83d\\ude00",
        ] {
            for cap in 1..14 {
                let line = format!(
                    "{{\"id\":1,\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}]}}}}\n"
                );
                let caps = Caps {
                    text: cap,
                    binary: 4,
                    other: 64,
                    state: 64,
                };
                let out = pass(line.as_bytes(), caps, &table).await;
                let parsed: serde_json::Value = serde_json::from_slice(&out).unwrap_or_else(|e| {
                    panic!(
                        "{text} cut at {cap}: {e}: {}",
                        String::from_utf8_lossy(&out)
                    )
                });
                let whole: String = serde_json::from_str(&format!("\"{text}\"")).unwrap();
                let head = parsed["result"]["content"][0]["text"].as_str().unwrap();
                assert!(whole.starts_with(head));
                if let Some(spilled) = table.take("1") {
                    assert_eq!(
                        std::fs::read_to_string(spilled.pieces[0].path.as_ref().unwrap()).unwrap(),
                        whole
                    );
                }
            }
        }
    }

    /// What one lexer made of `line`, fed in chunks of `chunk` bytes: the
    /// bytes passed on, and what was filed (each piece with its file's text).
    fn lexed(line: &[u8], caps: Caps, chunk: usize, bulk: bool) -> (Vec<u8>, String) {
        let dir = tempfile::tempdir().unwrap();
        let table = Arc::new(SpillTable::new(dir.path().join("spill")));
        let mut lexer = Lexer::new(caps, Arc::clone(&table));
        if !bulk {
            lexer = lexer.byte_by_byte();
        }
        let mut out = Vec::new();
        for piece in line.chunks(chunk) {
            lexer.feed(piece, &mut out);
        }
        let filed = table.take("9").map_or_else(String::new, |spilled| {
            let pieces: Vec<_> = spilled
                .pieces
                .iter()
                .map(|p| {
                    let text = p.path.as_ref().map(|f| std::fs::read_to_string(f).unwrap());
                    (p.ordinal, p.bytes, text)
                })
                .collect();
            format!(
                "{pieces:?} {:?} {} {} {:?}",
                spilled.omitted, spilled.cut_other, spilled.failed, spilled.state_cut
            )
        });
        (out, filed)
    }

    /// The bulk path (runs of plain bytes taken whole) passes on and files
    /// exactly what byte-by-byte lexing does: every cap, every chunking,
    /// texts and other strings with escapes, surrogates and multi-byte
    /// characters around the cut.
    #[test]
    fn runs_taken_whole_change_nothing() {
        let texts = [
            "plain words and more plain words",
            "é€😀 mixed ünïcödé text, then ascii",
            r#"esc \" quote \\ back \n nl \u00e9 \ud83d\ude00 pair \ud83d lone \ude00 low"#,
            r#"\u0041\u00"#,
            "",
        ];
        for text in texts {
            let message = format!(
                r#"{{"jsonrpc":"2.0","id":9,"result":{{"content":[{{"type":"text","text":"{text}"}},{{"type":"image","data":"QUJD{text}"}},{{"type":"text","text":"second {text} second"}}],"structuredContent":{{"k{text}":"v {text} v"}}}}}}"#
            );
            let line = format!("{message}\n{message}\n");
            for cap in [0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 200] {
                let caps = Caps {
                    text: cap,
                    binary: cap,
                    other: cap + 3,
                    state: cap,
                };
                let reference = lexed(line.as_bytes(), caps, 1, false);
                for chunk in [1, 2, 7, 64, line.len()] {
                    assert_eq!(
                        lexed(line.as_bytes(), caps, chunk, true),
                        reference,
                        "{text:?}, cap {cap}, chunks of {chunk}"
                    );
                }
            }
        }
    }
}
