//! Everything the UI shows, as data. Rendering reads it; only the reducer
//! (`update/`) changes it.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::layout::Rect;
use ratatui_textarea::TextArea;

pub use super::cells::{CallStatus, Cell, ToolCallCell, Transcript};
use super::keymap::Scope;
use crate::protocol::{
    ApprovalView, ArgsCheck, ElicitationView, EndCause, ServerView, SessionInfo, SignInView,
};

/// How long a status-bar message stays.
const STATUS_VISIBLE: Duration = Duration::from_secs(6);
/// How long revoked tools stay visible, struck out, before they disappear.
pub const REVOKED_VISIBLE: Duration = Duration::from_secs(4);
/// An approval prompt takes a decision only once this long has passed with no
/// key at all, counted from when it came to the front and from every key since:
/// while the operator keeps typing, keys go where they were going, so a stray
/// `y` typed into a sentence can never approve a call.
pub const APPROVAL_ARM: Duration = Duration::from_millis(1000);

/// Which pane receives keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Input,
    Conversation,
    Servers,
    Registry,
    Health,
}

impl Focus {
    pub const ORDER: [Focus; 5] = [
        Focus::Input,
        Focus::Conversation,
        Focus::Servers,
        Focus::Registry,
        Focus::Health,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Focus::Input => "input",
            Focus::Conversation => "conversation",
            Focus::Servers => "servers",
            Focus::Registry => "registry",
            Focus::Health => "health",
        }
    }
}

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

/// A tool that just left the registry (struck out until `until`).
#[derive(Debug, Clone, PartialEq)]
pub struct Revoked {
    pub alias: String,
    pub tool: String,
    pub cause: EndCause,
    pub until: Instant,
}

/// A server's request for input, being filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitForm {
    pub view: ElicitationView,
    /// One text per field (booleans "true"/"false", choices the chosen option).
    pub values: Vec<String>,
    pub selected: usize,
    /// Why the last submit was refused.
    pub problem: Option<String>,
    /// When it came to the front: like an approval prompt, a form takes keys
    /// only after a quiet moment, so an Enter meant for the input box never
    /// sends it.
    pub opened: Instant,
}

/// A queued approval prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub view: ApprovalView,
    pub opened: Instant,
    pub scroll: u16,
}

/// The whole UI state.
pub struct AppState {
    pub session: SessionInfo,
    pub cells: Transcript,
    /// Lines scrolled up from the bottom of the conversation (0: follow the end).
    pub scroll_back: u16,
    /// The selected cell when the conversation has focus.
    pub selected_cell: Option<usize>,
    pub input: TextArea<'static>,
    pub history: Vec<String>,
    /// Position while browsing history (`None`: editing a new message).
    pub history_pos: Option<usize>,
    pub servers: Arc<[ServerView]>,
    pub selected_server: usize,
    /// Selected row of the registry (over the selected server's published tools).
    pub selected_tool: usize,
    /// Show every alias's tools in the registry, not just the selected server's.
    pub registry_all: bool,
    pub revoked: Vec<Revoked>,
    pub snapshot_version: u64,
    pub approvals: VecDeque<Prompt>,
    /// Servers' requests for input, in order.
    pub elicitations: VecDeque<ElicitForm>,
    pub focus: Focus,
    pub overlay: Option<Overlay>,
    /// A short message in the status bar, and when it goes away.
    pub status: Option<(String, Instant)>,
    /// A turn is running.
    pub busy: bool,
    /// Ctrl-C asked for an interruption; cleared once nothing runs.
    pub interrupting: bool,
    /// The operator's hand-made calls still running (their ids): Ctrl-C cancels
    /// them as it interrupts a turn.
    pub hand_calls: Vec<String>,
    /// The last turn failed; `r` retries it.
    pub can_retry: bool,
    pub now: Instant,
    /// When the operator last pressed a key (or pasted), in any pane.
    pub last_key: Option<Instant>,
    /// The first-run banner is showing.
    pub banner: bool,
    pub quitting: bool,
    /// The terminal's size as of the last draw (for mouse hit-testing).
    pub area: Rect,
}

impl AppState {
    pub fn new(now: Instant) -> Self {
        let mut input = TextArea::default();
        // Short enough for the narrowest input box; every key is in the footer
        // and in help. `?` does open help here: the box is empty while it shows.
        input.set_placeholder_text("Message the Lead  (Enter send · ? help)");
        Self {
            session: SessionInfo::default(),
            cells: Transcript::default(),
            scroll_back: 0,
            selected_cell: None,
            input,
            history: Vec::new(),
            history_pos: None,
            servers: Arc::from(Vec::new()),
            selected_server: 0,
            selected_tool: 0,
            registry_all: false,
            revoked: Vec::new(),
            snapshot_version: 0,
            approvals: VecDeque::new(),
            elicitations: VecDeque::new(),
            focus: Focus::Input,
            overlay: None,
            status: None,
            busy: false,
            interrupting: false,
            hand_calls: Vec::new(),
            can_retry: false,
            now,
            last_key: None,
            banner: false,
            quitting: false,
            area: Rect::new(0, 0, 80, 24),
        }
    }

    pub fn selected_server(&self) -> Option<&ServerView> {
        self.servers.get(self.selected_server)
    }

    /// The tool call cell with this id.
    pub fn call_mut(&mut self, id: &str) -> Option<&mut ToolCallCell> {
        self.cells.call_mut(id)
    }

    /// When the front approval prompt starts taking decisions: [`APPROVAL_ARM`]
    /// after it came to the front or after the last key, whichever is later.
    pub fn arms_at(&self) -> Option<Instant> {
        Some(self.armed_after(self.approvals.front()?.opened))
    }

    /// The front approval prompt takes decisions now (see [`Self::arms_at`]).
    pub fn prompt_armed(&self) -> bool {
        self.arms_at().is_some_and(|t| self.now >= t)
    }

    /// When the front elicitation form starts taking keys (as [`Self::arms_at`]).
    pub fn form_arms_at(&self) -> Option<Instant> {
        Some(self.armed_after(self.elicitations.front()?.opened))
    }

    /// The front elicitation form takes keys now.
    pub fn form_armed(&self) -> bool {
        self.form_arms_at().is_some_and(|t| self.now >= t)
    }

    fn armed_after(&self, opened: Instant) -> Instant {
        self.last_key.map_or(opened, |k| k.max(opened)) + APPROVAL_ARM
    }

    /// Something Ctrl-C would interrupt: a turn, or a hand-made call.
    pub fn interruptible(&self) -> bool {
        self.busy || !self.hand_calls.is_empty()
    }

    /// Shows a short message in the status bar.
    pub fn say(&mut self, text: impl Into<String>) {
        self.status = Some((text.into(), self.now + STATUS_VISIBLE));
    }

    pub fn input_text(&self) -> String {
        self.input.lines().join("\n")
    }

    /// Whose keys are active now: the prompt, a form, an overlay, or a pane.
    pub fn scope(&self) -> Scope {
        if !self.approvals.is_empty() {
            return Scope::Approval;
        }
        if !self.elicitations.is_empty() {
            return Scope::Elicitation;
        }
        match (&self.overlay, self.focus) {
            (Some(Overlay::Help { .. }), _) => Scope::Help,
            (Some(Overlay::ToolDetail { .. }), _) => Scope::Detail,
            (Some(Overlay::WritePolicy { .. }), _) => self.write_policy_scope(),
            (Some(Overlay::PinDiff { confirming, .. }), _) => {
                if *confirming {
                    Scope::PinConfirm
                } else {
                    Scope::PinDiff
                }
            }
            (Some(Overlay::CallTool(_)), _) => Scope::CallTool,
            (Some(Overlay::SignIn(_)), _) => Scope::SignIn,
            (None, Focus::Input) => Scope::Input,
            (None, Focus::Conversation) => Scope::Conversation,
            (None, Focus::Servers) => Scope::Servers,
            (None, Focus::Registry) => Scope::Registry,
            (None, Focus::Health) => Scope::Health,
        }
    }

    /// The write-policy window offers to write only when there is a file to write.
    pub fn write_policy_scope(&self) -> Scope {
        if self.session.config_file.is_some() {
            Scope::WritePolicy
        } else {
            Scope::NoConfigFile
        }
    }
}
