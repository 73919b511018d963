//! The windows over the panes: what each one holds while it is open.

use std::time::Instant;

use ratatui_textarea::TextArea;

use crate::protocol::{ArgsCheck, ExplainView, GrantId, ResourcesView, SignInView};

/// A window over everything else; it takes the keys while open.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    Help {
        scroll: u16,
    },
    /// The registry's detail view of one published tool of `alias`.
    ToolDetail {
        alias: String,
        tool: String,
        scroll: u16,
    },
    /// Confirm writing a policy block for `alias` into the config file.
    WritePolicy {
        alias: String,
    },
    /// The definitions `alias` publishes that differ from their pins, as
    /// diffs; `confirming`: the operator asked to accept them (y/n).
    PinDiff {
        alias: String,
        scroll: u16,
        confirming: bool,
    },
    /// Edit the arguments of a hand-made call of `tool` (exposed name).
    CallTool(Box<CallEditor>),
    /// "Kill `alias`'s processes?" — armed like an approval prompt: `y` counts
    /// only after a quiet moment since it opened.
    ConfirmKill {
        alias: String,
        opened: Instant,
    },
    /// The session's grants; `saving` while "write allow for it?" is asked.
    Rules {
        selected: usize,
        saving: Option<GrantId>,
    },
    /// How a call was decided (`view` arrives from the backend).
    Explain {
        call_id: crate::protocol::CallId,
        view: Option<ExplainView>,
        scroll: u16,
    },
    /// A server's resources (`view` arrives from the backend).
    Resources {
        alias: String,
        view: Option<ResourcesView>,
        scroll: u16,
        /// The resource Enter reads (an index into `view.resources`).
        selected: usize,
    },
    /// A sign-in waiting for the browser.
    SignIn(Box<SignInWindow>),
}

/// The sign-in window: the URL, the waiting, a field for a pasted redirect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInWindow {
    pub view: SignInView,
    /// What the operator pasted (or typed): the address the browser was sent to.
    pub paste: String,
    /// Why the last paste was refused.
    pub problem: Option<String>,
}

/// The arguments editor of a hand-made call.
#[derive(Clone)]
pub struct CallEditor {
    pub tool: String,
    /// The arguments being edited (a real editor: the cursor moves, undo works).
    pub area: TextArea<'static>,
    /// The exposed tool's own compiled validator (every keystroke checks with
    /// exactly what the call path will check).
    pub check: Option<ArgsCheck>,
    /// Live validation against the schema: `None` when valid.
    pub problem: Option<String>,
}

impl CallEditor {
    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }
}

impl PartialEq for CallEditor {
    fn eq(&self, other: &Self) -> bool {
        self.tool == other.tool && self.text() == other.text() && self.problem == other.problem
    }
}

impl std::fmt::Debug for CallEditor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallEditor")
            .field("tool", &self.tool)
            .field("text", &self.text())
            .field("problem", &self.problem)
            .finish()
    }
}
