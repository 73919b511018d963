//! Everything the UI shows, as data. Rendering reads it; only the reducer
//! (`update/`) changes it.

mod form;
mod overlay;

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::layout::Rect;
use ratatui_textarea::TextArea;

pub use super::cells::{CallStatus, Cell, ToolCallCell, Transcript};
use super::keymap::Scope;
use super::mentions::Completion;
pub use super::rows::{Filter, RegistryRow, Rows, Struck};
use super::rows::{RowsKey, Source};
use crate::protocol::{ApprovalView, GrantView, ServerView, ServingView, SessionInfo, ToolView};
pub use form::{ElicitForm, FieldValue, choice_label};
pub use overlay::{CallEditor, Overlay, SignInWindow};

/// How long a status-bar message stays.
const STATUS_VISIBLE: Duration = Duration::from_secs(6);
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
    /// Selected row of the registry (over its rows as filtered).
    pub selected_tool: usize,
    /// The registry row at the top of its pane.
    pub registry_offset: usize,
    /// Show every alias's tools in the registry, not just the selected server's.
    pub registry_all: bool,
    /// The registry's filter (`/`), while one is set.
    pub filter: Option<Filter>,
    /// Revoked listings, struck out in place until the next key.
    pub struck: Vec<Struck>,
    /// Counts changes of `struck` (the rows are rebuilt on a change).
    pub struck_gen: u64,
    /// Each alias's last live listing, to strike out when it is revoked.
    pub live: HashMap<String, Arc<[ToolView]>>,
    /// The registry's rows, built for the key they were built from.
    rows_cache: RefCell<Option<(RowsKey, Arc<Rows>)>>,
    pub snapshot_version: u64,
    /// The session's grants ("always"), as the backend keeps them.
    pub grants: Arc<[GrantView]>,
    /// The gateway of `--serve`, while it serves (the status bar says so).
    pub serving: Option<ServingView>,
    pub approvals: VecDeque<Prompt>,
    /// Servers' requests for input, in order.
    pub elicitations: VecDeque<ElicitForm>,
    /// The waiting prompts and forms are put aside: behind a window the
    /// operator opened (it keeps its keys until it closes) or by F3. A badge
    /// says they wait; they come back when the window closes, or on F3.
    pub aside: bool,
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
    pub hand_calls: Vec<crate::protocol::CallId>,
    /// The last turn failed; `r` retries it.
    pub can_retry: bool,
    /// What the Lead's session has read (flow control): shown in the status
    /// bar until the operator clears it.
    pub taint: crate::protocol::TaintView,
    /// What each outside client's session holds (`serve`), by client; only
    /// the tainted ones.
    pub client_taints: std::collections::BTreeMap<String, crate::protocol::TaintView>,
    pub now: Instant,
    /// When the operator last pressed a key (or pasted), in any pane.
    pub last_key: Option<Instant>,
    /// The first-run banner is showing.
    pub banner: bool,
    pub quitting: bool,
    /// A first Ctrl-C asked to quit while servers are connected: a second one
    /// within a second quits.
    pub quit_armed: Option<Instant>,
    /// The servers a resumed session had connected (Ctrl-R reconnects them).
    pub resumed: Vec<String>,
    /// The replay waits for the operator (Enter goes on), since when and how
    /// long at most.
    pub paused: Option<(Instant, u64)>,
    /// The terminal's size as of the last draw (for mouse hit-testing).
    pub area: Rect,
    /// What connected servers listed, for completing `@alias:uri` and `/alias:prompt`.
    pub catalog: super::mentions::Catalog,
    /// The completion popup's selection.
    pub picker: super::mentions::Picker,
    /// The last completion, kept while what it came from is unchanged.
    completion_memo: super::mentions::Memo,
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
            registry_offset: 0,
            registry_all: false,
            filter: None,
            struck: Vec::new(),
            struck_gen: 0,
            live: HashMap::new(),
            rows_cache: RefCell::new(None),
            snapshot_version: 0,
            grants: Arc::from(Vec::new()),
            serving: None,
            approvals: VecDeque::new(),
            elicitations: VecDeque::new(),
            aside: false,
            focus: Focus::Input,
            overlay: None,
            status: None,
            busy: false,
            interrupting: false,
            hand_calls: Vec::new(),
            can_retry: false,
            taint: Default::default(),
            client_taints: Default::default(),
            now,
            last_key: None,
            banner: false,
            quitting: false,
            quit_armed: None,
            resumed: Vec::new(),
            paused: None,
            area: Rect::new(0, 0, 80, 24),
            catalog: Default::default(),
            picker: Default::default(),
            completion_memo: Default::default(),
        }
    }

    pub fn selected_server(&self) -> Option<&ServerView> {
        self.servers.get(self.selected_server)
    }

    pub fn source(&self) -> Source<'_> {
        Source {
            servers: &self.servers,
            struck: &self.struck,
            filter: self.filter.as_ref(),
            all: self.registry_all,
            selected_server: self.selected_server,
        }
    }

    /// The registry's rows now: rebuilt only when what they come from changed.
    pub fn rows(&self) -> Arc<Rows> {
        let key = RowsKey {
            listings: self
                .servers
                .iter()
                .map(|s| (Arc::clone(&s.published), s.state))
                .collect(),
            struck: self.struck_gen,
            query: self.filter.as_ref().map(|f| f.query.clone()),
            all: self.registry_all,
            selected_server: self.selected_server,
        };
        let mut cache = self.rows_cache.borrow_mut();
        if let Some((built_for, rows)) = cache.as_ref()
            && *built_for == key
        {
            return Arc::clone(rows);
        }
        let rows = Arc::new(self.source().build());
        *cache = Some((key, Arc::clone(&rows)));
        rows
    }

    /// Registry row `i` (as filtered).
    pub fn registry_row(&self, i: usize) -> Option<RegistryRow<'_>> {
        let at = *self.rows().refs.get(i)?;
        self.source().resolve(at)
    }

    /// The selected registry row.
    pub fn selected_row(&self) -> Option<RegistryRow<'_>> {
        self.registry_row(self.selected_tool)
    }

    /// The tool call cell with this id.
    pub fn call_mut(&mut self, id: &crate::protocol::CallId) -> Option<&mut ToolCallCell> {
        self.cells.call_mut(id)
    }

    /// Something waits for the operator: an approval prompt or a form.
    pub fn waiting(&self) -> bool {
        !self.approvals.is_empty() || !self.elicitations.is_empty()
    }

    /// The front approval prompt is on screen (not put aside).
    pub fn prompt_shown(&self) -> bool {
        !self.approvals.is_empty() && !self.aside
    }

    /// The front form is on screen: no prompt before it, nothing put aside.
    pub fn form_shown(&self) -> bool {
        self.approvals.is_empty() && !self.elicitations.is_empty() && !self.aside
    }

    /// When the front approval prompt starts taking decisions: [`APPROVAL_ARM`]
    /// after it came to the front or after the last key, whichever is later
    /// (never while it is put aside).
    pub fn arms_at(&self) -> Option<Instant> {
        if !self.prompt_shown() {
            return None;
        }
        Some(self.armed_after(self.approvals.front()?.opened))
    }

    /// The front approval prompt takes decisions now (see [`Self::arms_at`]).
    pub fn prompt_armed(&self) -> bool {
        self.arms_at().is_some_and(|t| self.now >= t)
    }

    /// When the front elicitation form starts taking keys (as [`Self::arms_at`]).
    pub fn form_arms_at(&self) -> Option<Instant> {
        if !self.form_shown() {
            return None;
        }
        Some(self.armed_after(self.elicitations.front()?.opened))
    }

    /// The front elicitation form takes keys now.
    pub fn form_armed(&self) -> bool {
        self.form_arms_at().is_some_and(|t| self.now >= t)
    }

    /// When "kill this server?" starts taking `y` (as [`Self::arms_at`]).
    pub fn kill_arms_at(&self) -> Option<Instant> {
        match &self.overlay {
            Some(Overlay::ConfirmKill { opened, .. }) => Some(self.armed_after(*opened)),
            _ => None,
        }
    }

    /// "Kill this server?" takes `y` now.
    pub fn kill_armed(&self) -> bool {
        self.kill_arms_at().is_some_and(|t| self.now >= t)
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

    /// Whose keys are active now: the prompt, a form, an overlay, or a pane
    /// (a prompt or form put aside has none).
    pub fn scope(&self) -> Scope {
        if self.prompt_shown() {
            return Scope::Approval;
        }
        if self.form_shown() {
            return Scope::Elicitation;
        }
        if let Some(scope) = self.overlay_scope() {
            return scope;
        }
        match self.focus {
            Focus::Input if self.completing() => Scope::Complete,
            Focus::Input => Scope::Input,
            Focus::Conversation => Scope::Conversation,
            Focus::Servers => Scope::Servers,
            Focus::Registry if self.filter.as_ref().is_some_and(|f| f.editing) => Scope::Filter,
            Focus::Registry => Scope::Registry,
            Focus::Health => Scope::Health,
        }
    }

    /// What completes the word before the input box's cursor, if anything.
    pub fn completion(&self) -> Option<Completion> {
        let cursor = self.input.cursor();
        self.completion_memo.get(
            self.input.lines(),
            (cursor.0, cursor.1),
            &self.servers,
            &self.catalog,
            &self.picker,
        )
    }

    /// The completion popup shows candidates (its keys are active).
    pub fn completing(&self) -> bool {
        self.completion().is_some_and(|c| !c.candidates.is_empty())
    }

    /// The open overlay's keys (under a prompt or a form that may be on top).
    pub fn overlay_scope(&self) -> Option<Scope> {
        Some(match self.overlay.as_ref()? {
            Overlay::Help { .. } => Scope::Help,
            Overlay::ToolDetail { .. } => Scope::Detail,
            Overlay::WritePolicy { .. } => self.write_policy_scope(),
            Overlay::PinDiff {
                confirming: false, ..
            } => Scope::PinDiff,
            Overlay::PinDiff {
                confirming: true, ..
            } => Scope::PinConfirm,
            Overlay::CallTool(_) => Scope::CallTool,
            Overlay::ConfirmKill { .. } => Scope::ConfirmKill,
            Overlay::Rules { saving: None, .. } => Scope::Rules,
            Overlay::Rules {
                saving: Some(_), ..
            } => Scope::SaveGrant,
            Overlay::Explain { .. } => Scope::Explain,
            Overlay::Resources { .. } => Scope::Resources,
            Overlay::SignIn(_) => Scope::SignIn,
        })
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
