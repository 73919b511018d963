//! The keymap is data: the dispatcher, the footer hints and the `?` help overlay
//! all read this one table, so they cannot drift apart.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Everywhere (unless a modal takes the key first).
    Global,
    Input,
    Conversation,
    Servers,
    Registry,
    Health,
    /// The approval prompt.
    Approval,
    Help,
    Detail,
    WritePolicy,
    CallTool,
    Elicitation,
}

impl Scope {
    pub fn title(self) -> &'static str {
        match self {
            Scope::Global => "Everywhere",
            Scope::Input => "Input box",
            Scope::Conversation => "Conversation",
            Scope::Servers => "Servers",
            Scope::Registry => "Registry",
            Scope::Health => "Health",
            Scope::Approval => "Approval prompt",
            Scope::Help => "Help",
            Scope::Detail => "Tool detail",
            Scope::WritePolicy => "Write policy",
            Scope::CallTool => "Call a tool by hand",
            Scope::Elicitation => "A server asks for input",
        }
    }
}

/// What a key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Quit,
    InterruptOrQuit,
    Help,
    NextFocus,
    PrevFocus,
    FocusInput,
    Send,
    Newline,
    HistoryPrev,
    HistoryNext,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Toggle,
    Retry,
    Connect,
    Disconnect,
    Reconnect,
    Kill,
    WritePolicy,
    ShowRegistry,
    Detail,
    CallByHand,
    ToggleAll,
    Refresh,
    ApproveOnce,
    ApproveAlways,
    Deny,
    Close,
    Confirm,
    Submit,
}

/// One key (code + modifiers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chord(pub KeyCode, pub KeyModifiers);

const NONE: KeyModifiers = KeyModifiers::NONE;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const ALT: KeyModifiers = KeyModifiers::ALT;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;

/// One row of the keymap.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub scope: Scope,
    pub chords: &'static [Chord],
    /// How the keys are written in hints and help.
    pub keys: &'static str,
    pub action: Action,
    pub desc: &'static str,
    /// Shown in the footer when this scope is active.
    pub hint: bool,
}

use Action::*;
use KeyCode::{
    BackTab, Char, Down as KDown, End, Enter, Esc, F, Home, PageDown as PgDn, PageUp as PgUp, Tab,
    Up as KUp,
};

macro_rules! b {
    ($scope:ident, [$($c:expr),+], $keys:literal, $action:ident, $desc:literal, $hint:literal) => {
        Binding { scope: Scope::$scope, chords: &[$($c),+], keys: $keys, action: $action, desc: $desc, hint: $hint }
    };
}

/// The keymap.
#[rustfmt::skip]
pub const BINDINGS: &[Binding] = &[
    b!(Global, [Chord(Char('c'), CTRL)], "Ctrl-C", InterruptOrQuit, "interrupt the turn / quit when idle", true),
    b!(Global, [Chord(Char('q'), CTRL)], "Ctrl-Q", Quit, "quit (closes every server)", false),
    b!(Global, [Chord(F(1), NONE)], "F1", Help, "help", false),
    b!(Global, [Chord(Tab, NONE)], "Tab", NextFocus, "next pane", true),
    b!(Global, [Chord(BackTab, SHIFT), Chord(BackTab, NONE)], "Shift-Tab", PrevFocus, "previous pane", false),
    b!(Input, [Chord(Enter, NONE)], "Enter", Send, "send", true),
    b!(Input, [Chord(Enter, ALT), Chord(Enter, SHIFT), Chord(Char('j'), CTRL)], "Alt-Enter", Newline, "new line", true),
    b!(Input, [Chord(KUp, NONE)], "↑/↓", HistoryPrev, "earlier / later messages (on the first / last line)", false),
    b!(Input, [Chord(KDown, NONE)], "↓", HistoryNext, "", false),
    b!(Input, [Chord(PgUp, NONE)], "PgUp/PgDn", PageUp, "scroll the conversation", false),
    b!(Input, [Chord(PgDn, NONE)], "PgDn", PageDown, "", false),
    b!(Conversation, [Chord(KUp, NONE), Chord(Char('k'), NONE)], "↑↓/jk", Up, "move between entries", false),
    b!(Conversation, [Chord(KDown, NONE), Chord(Char('j'), NONE)], "↓/j", Down, "", false),
    b!(Conversation, [Chord(Enter, NONE), Chord(Char(' '), NONE)], "Enter", Toggle, "expand / collapse a tool call", true),
    b!(Conversation, [Chord(PgUp, NONE)], "PgUp/PgDn", PageUp, "scroll", false),
    b!(Conversation, [Chord(PgDn, NONE)], "PgDn", PageDown, "", false),
    b!(Conversation, [Chord(Home, NONE), Chord(Char('g'), NONE)], "g/G", Top, "top / bottom", false),
    b!(Conversation, [Chord(End, NONE), Chord(Char('G'), SHIFT), Chord(Char('G'), NONE)], "G", Bottom, "", false),
    b!(Conversation, [Chord(Char('r'), NONE)], "r", Retry, "retry the failed turn", true),
    b!(Servers, [Chord(KUp, NONE), Chord(Char('k'), NONE)], "↑/↓", Up, "select", false),
    b!(Servers, [Chord(KDown, NONE), Chord(Char('j'), NONE)], "↓", Down, "", false),
    b!(Servers, [Chord(Char('c'), NONE)], "c", Connect, "connect", true),
    b!(Servers, [Chord(Char('d'), NONE)], "d", Disconnect, "disconnect", true),
    b!(Servers, [Chord(Char('r'), NONE)], "r", Reconnect, "reconnect", true),
    b!(Servers, [Chord(Char('K'), SHIFT), Chord(Char('K'), NONE)], "K", Kill, "kill the server process (watch the watchdog)", true),
    b!(Servers, [Chord(Char('p'), NONE)], "p", WritePolicy, "write the policy for what it publishes", true),
    b!(Servers, [Chord(Enter, NONE)], "Enter", ShowRegistry, "its tools in the registry", false),
    b!(Registry, [Chord(KUp, NONE), Chord(Char('k'), NONE)], "↑/↓", Up, "select", false),
    b!(Registry, [Chord(KDown, NONE), Chord(Char('j'), NONE)], "↓", Down, "", false),
    b!(Registry, [Chord(Enter, NONE)], "Enter", Detail, "details (schema, server claims)", true),
    b!(Registry, [Chord(Char('x'), NONE)], "x", CallByHand, "call it by hand", true),
    b!(Registry, [Chord(Char('a'), NONE)], "a", ToggleAll, "all servers / selected server", true),
    b!(Health, [Chord(Char('u'), NONE)], "u", Refresh, "refresh (stderr tail)", true),
    b!(Approval, [Chord(Char('y'), NONE)], "y", ApproveOnce, "approve once", true),
    b!(Approval, [Chord(Char('a'), NONE)], "a", ApproveAlways, "approve this tool for the session", true),
    b!(Approval, [Chord(Char('n'), NONE), Chord(Esc, NONE)], "n/Esc", Deny, "deny", true),
    b!(Approval, [Chord(KUp, NONE)], "↑/↓", Up, "scroll the arguments", true),
    b!(Approval, [Chord(KDown, NONE)], "↓", Down, "", false),
    b!(Help, [Chord(Esc, NONE), Chord(Char('?'), NONE), Chord(Char('q'), NONE)], "Esc", Close, "close", true),
    b!(Help, [Chord(KUp, NONE)], "↑/↓", Up, "scroll", true),
    b!(Help, [Chord(KDown, NONE)], "↓", Down, "", false),
    b!(Detail, [Chord(Esc, NONE), Chord(Char('q'), NONE)], "Esc", Close, "close", true),
    b!(Detail, [Chord(KUp, NONE)], "↑/↓", Up, "scroll", true),
    b!(Detail, [Chord(KDown, NONE)], "↓", Down, "", false),
    b!(Detail, [Chord(Char('x'), NONE)], "x", CallByHand, "call it by hand", true),
    b!(WritePolicy, [Chord(Char('y'), NONE)], "y", Confirm, "write it", true),
    b!(WritePolicy, [Chord(Char('n'), NONE), Chord(Esc, NONE)], "n/Esc", Close, "cancel", true),
    b!(CallTool, [Chord(Char('s'), CTRL)], "Ctrl-S", Submit, "call", true),
    b!(CallTool, [Chord(Esc, NONE)], "Esc", Close, "cancel", true),
    b!(Elicitation, [Chord(Enter, NONE)], "Enter", Submit, "send the answer", true),
    b!(Elicitation, [Chord(KUp, NONE), Chord(BackTab, SHIFT), Chord(BackTab, NONE)], "↑/↓", Up, "field", true),
    b!(Elicitation, [Chord(KDown, NONE), Chord(Tab, NONE)], "↓", Down, "", false),
    b!(Elicitation, [Chord(Char('d'), CTRL)], "Ctrl-D", Deny, "decline", true),
    b!(Elicitation, [Chord(Esc, NONE)], "Esc", Close, "cancel", true),
];

/// The action bound to `key` in `scope`, if any.
pub fn lookup(scope: Scope, key: &KeyEvent) -> Option<Action> {
    BINDINGS
        .iter()
        .filter(|b| b.scope == scope)
        .find(|b| {
            b.chords
                .iter()
                .any(|c| c.0 == key.code && c.1 == key.modifiers)
        })
        .map(|b| b.action)
}

/// Rows with an empty description are second keys of a row above: they work,
/// but help and hints show them once, with the first.
pub fn listed(binding: &Binding) -> bool {
    !binding.desc.is_empty()
}

/// The footer hints of a scope, then the global ones.
pub fn hints(scope: Scope) -> Vec<(&'static str, &'static str)> {
    let of = |s: Scope| {
        BINDINGS
            .iter()
            .filter(move |b| b.hint && b.scope == s)
            .map(|b| (b.keys, b.desc))
    };
    of(scope).chain(of(Scope::Global)).collect()
}

/// `?` opens help from any pane but the input box, where it is typed.
pub fn is_help(key: &KeyEvent, typing: bool) -> bool {
    (key.code == Char('?') && !typing) || (key.code == F(1))
}
