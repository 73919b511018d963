//! JSON string escapes → UTF-8, one byte at a time (for text that streams into a
//! file instead of through a parser). Malformed escapes and lone surrogates
//! become U+FFFD, as a lenient reader would show them.

#[derive(Debug, Default)]
pub struct Unescaper {
    state: State,
    /// A high surrogate waiting for its low half.
    high: Option<u16>,
}

#[derive(Debug, Default, Clone, Copy)]
enum State {
    #[default]
    Plain,
    Escape,
    Hex {
        left: u8,
        value: u16,
    },
}

const REPLACEMENT: char = '\u{FFFD}';

impl Unescaper {
    /// Whether a `\uDxxx` high surrogate was just read (a cut here would split a pair).
    pub fn awaits_low_surrogate(&self) -> bool {
        self.high.is_some()
    }

    /// Takes one raw byte of a string's content; writes what it decodes to into
    /// `out` and returns how many bytes that is (at most 7).
    pub fn push(&mut self, b: u8, out: &mut [u8; 8]) -> usize {
        match self.state {
            State::Plain if b == b'\\' => {
                self.state = State::Escape;
                0
            }
            State::Plain => {
                let mut n = self.flush_high(out);
                out[n] = b;
                n += 1;
                n
            }
            State::Escape => {
                let c = match b {
                    b'u' => {
                        self.state = State::Hex { left: 4, value: 0 };
                        return 0;
                    }
                    b'n' => '\n',
                    b't' => '\t',
                    b'r' => '\r',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    _ => REPLACEMENT,
                };
                self.state = State::Plain;
                let n = self.flush_high(out);
                n + encode(c, &mut out[n..])
            }
            State::Hex { left, value } => {
                let Some(digit) = (b as char).to_digit(16) else {
                    self.state = State::Plain;
                    let n = self.flush_high(out);
                    return n + encode(REPLACEMENT, &mut out[n..]);
                };
                let value = value << 4 | digit as u16;
                if left > 1 {
                    self.state = State::Hex {
                        left: left - 1,
                        value,
                    };
                    return 0;
                }
                self.state = State::Plain;
                match (self.high.take(), value) {
                    (Some(high), 0xDC00..=0xDFFF) => {
                        let c = 0x10000
                            + ((u32::from(high) - 0xD800) << 10)
                            + (u32::from(value) - 0xDC00);
                        encode(char::from_u32(c).unwrap_or(REPLACEMENT), out)
                    }
                    (previous, 0xD800..=0xDBFF) => {
                        self.high = Some(value);
                        if previous.is_some() {
                            encode(REPLACEMENT, out)
                        } else {
                            0
                        }
                    }
                    (previous, _) => {
                        let mut n = 0;
                        if previous.is_some() {
                            n = encode(REPLACEMENT, out);
                        }
                        let c = char::from_u32(u32::from(value)).unwrap_or(REPLACEMENT);
                        n + encode(c, &mut out[n..])
                    }
                }
            }
        }
    }

    /// A high surrogate not followed by its low half.
    fn flush_high(&mut self, out: &mut [u8]) -> usize {
        match self.high.take() {
            Some(_) => encode(REPLACEMENT, out),
            None => 0,
        }
    }
}

fn encode(c: char, out: &mut [u8]) -> usize {
    c.encode_utf8(out).len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(raw: &str) -> String {
        let mut u = Unescaper::default();
        let mut bytes = Vec::new();
        for b in raw.bytes() {
            let mut out = [0u8; 8];
            let n = u.push(b, &mut out);
            bytes.extend_from_slice(&out[..n]);
        }
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn escapes_decode_like_serde_json() {
        for raw in [
            r#"plain é"#,
            r#"a\nb\t\"q\"\\ \/"#,
            r#"\u00e9\u4e2d\ud83d\ude00 end"#,
        ] {
            let expected: String = serde_json::from_str(&format!("\"{raw}\"")).unwrap();
            assert_eq!(decode(raw), expected, "{raw}");
        }
        assert_eq!(decode(r#"\ud83d x"#), "\u{FFFD} x");
    }
}
