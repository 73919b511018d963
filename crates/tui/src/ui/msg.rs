//! What the loop feeds the reducer (`Msg`) and what the reducer asks the loop
//! to do (`Effect`). Below both the reducer and the renderer: neither owns them.

use crossterm::event::{KeyEvent, MouseEvent};

use crate::protocol::{BackendEvent, Command, Views};

/// Everything that can change the state.
#[derive(Debug, Clone)]
pub enum Msg {
    Key(KeyEvent),
    Paste(String),
    Mouse(MouseEvent),
    Backend(BackendEvent),
    /// Fresh views from the backend (servers, registry version).
    Views(Views),
    /// Time passed (only sent while something animates).
    Tick,
    /// The terminal is now this big.
    Resize {
        width: u16,
        height: u16,
    },
}

/// What the loop must do after an update.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Send(Command),
    /// Leave the UI (the backend has stopped).
    Exit,
}
