//! Keys as the terminal meant them. crossterm parses each read of the terminal
//! on its own: when a read ends right after the ESC that starts a key's escape
//! sequence (a burst of arrow keys bigger than one read, cut by the terminal
//! or the kernel), it reports a lone Esc, then the rest of the sequence as
//! plain characters (`[`, `B`). This adapter holds a lone Esc for a moment
//! and, when the rest follows, puts the key back together: 500 Downs in one
//! write are 500 Downs, never an Esc that moves the focus and a `[B` typed.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use futures::Stream;
use tokio::time::Sleep;

/// How long a lone Esc waits for the rest of a sequence (an Esc pressed on
/// its own arrives this much later; nobody notices).
const ESC_WAIT: Duration = Duration::from_millis(25);
/// Longer than any key's sequence: give up and pass the keys on as they are.
const LONGEST: usize = 8;

/// `inner`'s events, with split escape sequences joined again.
pub struct Unsplit<S> {
    inner: S,
    /// A lone Esc and what followed it so far (all key presses).
    held: Vec<KeyEvent>,
    timer: Option<Pin<Box<Sleep>>>,
    ready: VecDeque<Event>,
    done: bool,
}

impl<S> Unsplit<S> {
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            held: Vec::new(),
            timer: None,
            ready: VecDeque::new(),
            done: false,
        }
    }

    fn flush(&mut self) {
        self.timer = None;
        self.ready.extend(self.held.drain(..).map(Event::Key));
    }

    fn feed(&mut self, event: Event) {
        let Event::Key(key) = event else {
            self.flush();
            self.ready.push_back(event);
            return;
        };
        let plain = key.kind == KeyEventKind::Press
            && key.modifiers.difference(KeyModifiers::SHIFT).is_empty();
        if self.held.is_empty() {
            if plain && key.code == KeyCode::Esc {
                self.held.push(key);
                self.timer = Some(Box::pin(tokio::time::sleep(ESC_WAIT)));
            } else {
                self.ready.push_back(Event::Key(key));
            }
            return;
        }
        let KeyCode::Char(c) = key.code else {
            self.flush();
            return self.feed(Event::Key(key));
        };
        if !plain {
            self.flush();
            return self.feed(Event::Key(key));
        }
        if self.held.len() == 1 && !matches!(c, '[' | 'O') {
            // Esc then a letter: a real Esc, then the letter.
            self.flush();
            return self.feed(Event::Key(key));
        }
        self.held.push(key);
        let text: String = self.held[1..]
            .iter()
            .filter_map(|k| match k.code {
                KeyCode::Char(c) => Some(c),
                _ => None,
            })
            .collect();
        match decode(&text) {
            Decoded::Key(joined) => {
                self.held.clear();
                self.timer = None;
                self.ready.push_back(Event::Key(joined));
            }
            Decoded::More if self.held.len() < LONGEST => {}
            Decoded::More | Decoded::Unknown => self.flush(),
        }
    }
}

enum Decoded {
    Key(KeyEvent),
    /// A prefix of a sequence: wait for more.
    More,
    Unknown,
}

/// The key of the sequence after ESC (`[B`, `OA`, `[5~`, `[1;5C`).
fn decode(text: &str) -> Decoded {
    let Some(first) = text.chars().next() else {
        return Decoded::More;
    };
    let rest = &text[first.len_utf8()..];
    let Some(last) = rest.chars().last() else {
        return Decoded::More;
    };
    let key = |code: KeyCode, modifiers: KeyModifiers| Decoded::Key(KeyEvent::new(code, modifiers));
    if first == 'O' {
        return match last {
            'A' => key(KeyCode::Up, KeyModifiers::NONE),
            'B' => key(KeyCode::Down, KeyModifiers::NONE),
            'C' => key(KeyCode::Right, KeyModifiers::NONE),
            'D' => key(KeyCode::Left, KeyModifiers::NONE),
            'H' => key(KeyCode::Home, KeyModifiers::NONE),
            'F' => key(KeyCode::End, KeyModifiers::NONE),
            c @ 'P'..='S' => key(KeyCode::F(1 + (c as u8 - b'P')), KeyModifiers::NONE),
            _ => Decoded::Unknown,
        };
    }
    // CSI: parameters (digits and `;`), then one final character.
    let params = &rest[..rest.len() - last.len_utf8()];
    if !params.chars().all(|c| c.is_ascii_digit() || c == ';') {
        return Decoded::Unknown;
    }
    if last.is_ascii_digit() || last == ';' {
        return Decoded::More;
    }
    let mut numbers = params.split(';').map(|n| n.parse::<u8>().unwrap_or(1));
    let number = numbers.next().unwrap_or(1);
    let modifiers = modifiers(numbers.next().unwrap_or(1));
    let code = match last {
        'A' => KeyCode::Up,
        'B' => KeyCode::Down,
        'C' => KeyCode::Right,
        'D' => KeyCode::Left,
        'H' => KeyCode::Home,
        'F' => KeyCode::End,
        'Z' => return key(KeyCode::BackTab, KeyModifiers::SHIFT),
        '~' => match number {
            1 | 7 => KeyCode::Home,
            2 => KeyCode::Insert,
            3 => KeyCode::Delete,
            4 | 8 => KeyCode::End,
            5 => KeyCode::PageUp,
            6 => KeyCode::PageDown,
            _ => return Decoded::Unknown,
        },
        _ => return Decoded::Unknown,
    };
    key(code, modifiers)
}

/// xterm's modifier parameter: 1 + (shift 1 | alt 2 | ctrl 4).
fn modifiers(n: u8) -> KeyModifiers {
    let bits = n.saturating_sub(1);
    let mut m = KeyModifiers::NONE;
    if bits & 1 != 0 {
        m |= KeyModifiers::SHIFT;
    }
    if bits & 2 != 0 {
        m |= KeyModifiers::ALT;
    }
    if bits & 4 != 0 {
        m |= KeyModifiers::CONTROL;
    }
    m
}

impl<S: Stream<Item = Event> + Unpin> Stream for Unsplit<S> {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let this = &mut *self;
        loop {
            if let Some(event) = this.ready.pop_front() {
                return Poll::Ready(Some(event));
            }
            if this.done {
                this.flush();
                if let Some(event) = this.ready.pop_front() {
                    return Poll::Ready(Some(event));
                }
                return Poll::Ready(None);
            }
            match Pin::new(&mut this.inner).poll_next(cx) {
                Poll::Ready(Some(event)) => this.feed(event),
                Poll::Ready(None) => this.done = true,
                Poll::Pending => {
                    let expired = this
                        .timer
                        .as_mut()
                        .is_some_and(|t| t.as_mut().poll(cx).is_ready());
                    if !expired {
                        return Poll::Pending;
                    }
                    // Nothing followed the Esc in time: it was a real Esc.
                    this.flush();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    fn key(code: KeyCode) -> Event {
        Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn chars(s: &str) -> Vec<Event> {
        s.chars()
            .map(|c| {
                let m = if c.is_ascii_uppercase() {
                    KeyModifiers::SHIFT
                } else {
                    KeyModifiers::NONE
                };
                Event::Key(KeyEvent::new(KeyCode::Char(c), m))
            })
            .collect()
    }

    async fn run(events: Vec<Event>) -> Vec<Event> {
        Unsplit::new(futures::stream::iter(events)).collect().await
    }

    #[tokio::test]
    async fn a_sequence_split_after_its_esc_is_one_key_again() {
        // …Down, Down, ESC | [B, Down…: what crossterm makes of a cut read.
        let mut events = vec![key(KeyCode::Down), key(KeyCode::Down), key(KeyCode::Esc)];
        events.extend(chars("[B"));
        events.push(key(KeyCode::Down));
        assert_eq!(run(events).await, vec![key(KeyCode::Down); 4]);
        let mut paging = vec![key(KeyCode::Esc)];
        paging.extend(chars("[6~"));
        assert_eq!(run(paging).await, vec![key(KeyCode::PageDown)]);
        let mut ctrl_right = vec![key(KeyCode::Esc)];
        ctrl_right.extend(chars("[1;5C"));
        assert_eq!(
            run(ctrl_right).await,
            vec![Event::Key(KeyEvent::new(
                KeyCode::Right,
                KeyModifiers::CONTROL
            ))]
        );
    }

    #[tokio::test]
    async fn a_real_esc_stays_an_esc() {
        // Alone (the stream ends: flushed), before a letter, and before a
        // `[` that no key sequence follows.
        assert_eq!(run(vec![key(KeyCode::Esc)]).await, vec![key(KeyCode::Esc)]);
        let mut typed = vec![key(KeyCode::Esc)];
        typed.extend(chars("q"));
        assert_eq!(run(typed.clone()).await, typed);
        let mut bracket = vec![key(KeyCode::Esc)];
        bracket.extend(chars("[x"));
        assert_eq!(run(bracket.clone()).await, bracket);
    }

    #[tokio::test]
    async fn a_lone_esc_is_let_go_after_a_moment() {
        let (tx, rx) = futures::channel::mpsc::unbounded();
        let mut stream = Unsplit::new(rx);
        tx.unbounded_send(key(KeyCode::Esc)).unwrap();
        let next = tokio::time::timeout(Duration::from_secs(5), stream.next()).await;
        assert_eq!(next.unwrap(), Some(key(KeyCode::Esc)));
        drop(tx);
    }
}
