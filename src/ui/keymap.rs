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
    /// The write-policy window when there is no config file to write into.
    NoConfigFile,
    CallTool,
    Elicitation,
    /// The sign-in window (OAuth): waiting for the browser.
    SignIn,
    /// The diff view of changed definitions.
    PinDiff,
    /// Accepting them: y/n.
    PinConfirm,
}

impl Scope {
    /// A window over the panes: its own keys only (Ctrl-C still works).
    pub fn is_modal(self) -> bool {
        !matches!(
            self,
            Scope::Global
                | Scope::Input
                | Scope::Conversation
                | Scope::Servers
                | Scope::Registry
                | Scope::Health
        )
    }

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
            Scope::NoConfigFile => "Write policy (no config file)",
            Scope::CallTool => "Call a tool by hand",
            Scope::Elicitation => "A server asks for input",
            Scope::SignIn => "Sign in",
            Scope::PinDiff => "Changed definitions (diff)",
            Scope::PinConfirm => "Accept the definitions",
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
    SignIn,
    SignOut,
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
    /// Open the diff view of an alias's changed definitions.
    ViewPins,
    /// Accept the definitions shown (asks to confirm).
    Accept,
    /// Passed to the text being edited (cursor moves, new lines, undo, …).
    Edit,
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
    /// What it does, in help.
    pub desc: &'static str,
    /// What it does, shortly, in the footer when this scope is active ("": not
    /// in the footer). Footers are fitted to the width in table order.
    pub hint: &'static str,
}

use Action::*;
use KeyCode::{
    BackTab, Backspace, Char, Down as KDown, End, Enter, Esc, F, Home, Left, PageDown as PgDn,
    PageUp as PgUp, Right, Tab, Up as KUp,
};

macro_rules! b {
    ($scope:ident, [$($c:expr),+], $keys:literal, $action:ident, $desc:literal, $hint:literal) => {
        Binding { scope: Scope::$scope, chords: &[$($c),+], keys: $keys, action: $action, desc: $desc, hint: $hint }
    };
}

/// The keymap.
#[rustfmt::skip]
pub const BINDINGS: &[Binding] = &[
    b!(Global, [Chord(Char('q'), CTRL)], "Ctrl-Q", Quit, "quit (closes every server)", ""),
    // `?` is bound in `is_help`: whether it opens help depends on the input box.
    b!(Global, [Chord(F(1), NONE)], "?/F1", Help, "help (in the input box ? is typed, unless the box is empty)", ""),
    b!(Global, [Chord(Tab, NONE)], "Tab", NextFocus, "next pane", "next pane"),
    // The footer says "interrupt" instead while something runs (status_bar.rs).
    b!(Global, [Chord(Char('c'), CTRL)], "Ctrl-C", InterruptOrQuit, "interrupt the turn or a hand-made call; quit when nothing runs", "quit"),
    b!(Global, [Chord(BackTab, SHIFT), Chord(BackTab, NONE)], "Shift-Tab", PrevFocus, "previous pane", ""),
    b!(Input, [Chord(Enter, NONE)], "Enter", Send, "send", "send"),
    b!(Input, [Chord(Enter, ALT), Chord(Char('j'), CTRL), Chord(Enter, SHIFT)], "Alt-Enter/Ctrl-J", Newline, "new line (most terminals send Shift-Enter as a plain Enter)", "new line"),
    b!(Input, [Chord(KUp, NONE)], "↑/↓", HistoryPrev, "earlier / later messages (on the first / last line)", ""),
    b!(Input, [Chord(KDown, NONE)], "↓", HistoryNext, "", ""),
    b!(Input, [Chord(PgUp, NONE)], "PgUp/PgDn", PageUp, "scroll the conversation", ""),
    b!(Input, [Chord(PgDn, NONE)], "PgDn", PageDown, "", ""),
    b!(Conversation, [Chord(KUp, NONE), Chord(Char('k'), NONE)], "↑↓/jk", Up, "move between entries (the view follows)", ""),
    b!(Conversation, [Chord(KDown, NONE), Chord(Char('j'), NONE)], "↓/j", Down, "", ""),
    b!(Conversation, [Chord(Enter, NONE), Chord(Char(' '), NONE)], "Enter", Toggle, "expand / collapse a tool call", "expand"),
    b!(Conversation, [Chord(PgUp, NONE)], "PgUp/PgDn", PageUp, "scroll", ""),
    b!(Conversation, [Chord(PgDn, NONE)], "PgDn", PageDown, "", ""),
    b!(Conversation, [Chord(Home, NONE), Chord(Char('g'), NONE)], "g/G", Top, "top / bottom", ""),
    b!(Conversation, [Chord(End, NONE), Chord(Char('G'), SHIFT), Chord(Char('G'), NONE)], "G", Bottom, "", ""),
    b!(Conversation, [Chord(Char('r'), NONE)], "r", Retry, "retry the failed turn", "retry"),
    b!(Servers, [Chord(KUp, NONE), Chord(Char('k'), NONE)], "↑/↓", Up, "select", ""),
    b!(Servers, [Chord(KDown, NONE), Chord(Char('j'), NONE)], "↓", Down, "", ""),
    b!(Servers, [Chord(Char('c'), NONE)], "c", Connect, "connect", "connect"),
    b!(Servers, [Chord(Char('d'), NONE)], "d", Disconnect, "disconnect", "disconnect"),
    b!(Servers, [Chord(Char('r'), NONE)], "r", Reconnect, "reconnect", "reconnect"),
    b!(Servers, [Chord(Char('K'), SHIFT), Chord(Char('K'), NONE)], "K", Kill, "kill the server process (watch the watchdog)", "kill"),
    b!(Servers, [Chord(Char('p'), NONE)], "p", WritePolicy, "write the policy for what it publishes", "write policy"),
    b!(Servers, [Chord(Char('s'), NONE)], "s", SignIn, "sign in (OAuth): its authorization page in a browser, then connect", ""),
    b!(Servers, [Chord(Char('o'), NONE)], "o", SignOut, "sign out: its tools are revoked at once, then its token", ""),
    b!(Servers, [Chord(Char('v'), NONE)], "v", ViewPins, "review definitions that differ from their pins (diff), and accept them", "definitions"),
    b!(Servers, [Chord(Enter, NONE)], "Enter", ShowRegistry, "its tools in the registry", "tools"),
    b!(Registry, [Chord(KUp, NONE), Chord(Char('k'), NONE)], "↑/↓", Up, "select", ""),
    b!(Registry, [Chord(KDown, NONE), Chord(Char('j'), NONE)], "↓", Down, "", ""),
    b!(Registry, [Chord(Enter, NONE)], "Enter", Detail, "details (schema, server claims)", "details"),
    b!(Registry, [Chord(Char('x'), NONE)], "x", CallByHand, "call it by hand", "call by hand"),
    b!(Registry, [Chord(Char('a'), NONE)], "a", ToggleAll, "all servers / selected server", "all/selected"),
    b!(Registry, [Chord(Char('v'), NONE)], "v", ViewPins, "review its server's changed definitions (diff), and accept them", "definitions"),
    b!(Health, [Chord(Char('u'), NONE)], "u", Refresh, "refresh (stderr tail)", "refresh"),
    b!(Approval, [Chord(Char('y'), NONE)], "y", ApproveOnce, "approve once", "approve once"),
    b!(Approval, [Chord(Char('a'), NONE)], "a", ApproveAlways, "approve this tool for the session (this definition, this connection)", "always for this tool"),
    b!(Approval, [Chord(Char('n'), NONE), Chord(Esc, NONE)], "n/Esc", Deny, "deny", "deny"),
    b!(Approval, [Chord(KUp, NONE)], "↑/↓", Up, "scroll the arguments", "scroll"),
    b!(Approval, [Chord(KDown, NONE)], "↓", Down, "", ""),
    b!(Help, [Chord(Esc, NONE), Chord(Char('?'), NONE), Chord(Char('q'), NONE)], "Esc", Close, "close", "close"),
    b!(Help, [Chord(KUp, NONE)], "↑/↓", Up, "scroll", "scroll"),
    b!(Help, [Chord(KDown, NONE)], "↓", Down, "", ""),
    b!(Help, [Chord(PgUp, NONE)], "PgUp/PgDn", PageUp, "scroll a page", ""),
    b!(Help, [Chord(PgDn, NONE)], "PgDn", PageDown, "", ""),
    b!(Detail, [Chord(Esc, NONE), Chord(Char('q'), NONE)], "Esc", Close, "close", "close"),
    b!(Detail, [Chord(KUp, NONE)], "↑/↓", Up, "scroll", "scroll"),
    b!(Detail, [Chord(KDown, NONE)], "↓", Down, "", ""),
    b!(Detail, [Chord(PgUp, NONE)], "PgUp/PgDn", PageUp, "scroll a page", ""),
    b!(Detail, [Chord(PgDn, NONE)], "PgDn", PageDown, "", ""),
    b!(Detail, [Chord(Char('x'), NONE)], "x", CallByHand, "call it by hand", "call by hand"),
    b!(Detail, [Chord(Char('v'), NONE)], "v", ViewPins, "its server's changed definitions (diff)", "definitions"),
    b!(WritePolicy, [Chord(Char('y'), NONE)], "y", Confirm, "write it (only with a config file)", "write it"),
    b!(WritePolicy, [Chord(Char('n'), NONE), Chord(Esc, NONE)], "n/Esc", Close, "cancel", "cancel"),
    b!(PinDiff, [Chord(Char('a'), NONE)], "a", Accept, "accept these definitions: pin them and reconnect (asks first)", "accept"),
    b!(PinDiff, [Chord(Esc, NONE), Chord(Char('q'), NONE)], "Esc", Close, "close (nothing is accepted)", "close"),
    b!(PinDiff, [Chord(KUp, NONE)], "↑/↓", Up, "scroll", "scroll"),
    b!(PinDiff, [Chord(KDown, NONE)], "↓", Down, "", ""),
    b!(PinDiff, [Chord(PgUp, NONE)], "PgUp/PgDn", PageUp, "scroll a page", ""),
    b!(PinDiff, [Chord(PgDn, NONE)], "PgDn", PageDown, "", ""),
    b!(PinConfirm, [Chord(Char('y'), NONE)], "y", Confirm, "yes: pin exactly what is shown and reconnect", "accept"),
    b!(PinConfirm, [Chord(Char('n'), NONE), Chord(Esc, NONE)], "n/Esc", Close, "no: back to the diff", "back"),
    b!(NoConfigFile, [Chord(Esc, NONE), Chord(Char('n'), NONE), Chord(Char('q'), NONE)], "Esc", Close, "close", "close"),
    b!(CallTool, [Chord(Char('s'), CTRL)], "Ctrl-S", Submit, "call", "call"),
    b!(CallTool, [Chord(Esc, NONE)], "Esc", Close, "cancel", "cancel"),
    b!(CallTool, [Chord(Left, NONE), Chord(Right, NONE), Chord(KUp, NONE), Chord(KDown, NONE), Chord(Home, NONE), Chord(End, NONE)], "←→↑↓ Home End", Edit, "move in the arguments", ""),
    b!(CallTool, [Chord(Enter, NONE), Chord(Tab, NONE), Chord(Backspace, NONE)], "Enter/Tab/⌫", Edit, "new line / indent / delete (paste works too)", ""),
    b!(CallTool, [Chord(Char('z'), CTRL), Chord(Char('y'), CTRL)], "Ctrl-Z/Ctrl-Y", Edit, "undo / redo", ""),
    b!(Elicitation, [Chord(Enter, NONE)], "Enter", Submit, "send the answer", "send"),
    b!(Elicitation, [Chord(KUp, NONE), Chord(BackTab, SHIFT), Chord(BackTab, NONE)], "↑/↓", Up, "field", "field"),
    b!(Elicitation, [Chord(KDown, NONE), Chord(Tab, NONE)], "↓", Down, "", ""),
    b!(Elicitation, [Chord(Char(' '), NONE), Chord(Left, NONE), Chord(Right, NONE)], "Space/←/→", Edit, "toggle a checkbox, pick a choice (typed in text fields)", "toggle/choose"),
    b!(Elicitation, [Chord(Char('d'), CTRL)], "Ctrl-D", Deny, "decline", "decline"),
    b!(Elicitation, [Chord(Esc, NONE)], "Esc", Close, "cancel", "cancel"),
    b!(SignIn, [Chord(Enter, NONE)], "Enter", Submit, "use the pasted address (a browser on another machine)", "use pasted address"),
    b!(SignIn, [Chord(Esc, NONE)], "Esc", Close, "cancel the sign-in", "cancel"),
    b!(SignIn, [Chord(Backspace, NONE)], "⌫", Edit, "delete (paste the address; typing works too)", ""),
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

/// The footer hints of a scope, then — outside modal windows, where they do
/// not apply — the global ones.
pub fn hints(scope: Scope) -> Vec<(&'static str, &'static str)> {
    let of = |s: Scope| {
        BINDINGS
            .iter()
            .filter(move |b| !b.hint.is_empty() && b.scope == s)
            .map(|b| (b.keys, b.hint))
    };
    let global = (!scope.is_modal()).then(|| of(Scope::Global));
    of(scope).chain(global.into_iter().flatten()).collect()
}

/// `?` opens help, except in an input box with text in it, where it is typed.
pub fn is_help(key: &KeyEvent, typing_text: bool) -> bool {
    (key.code == Char('?') && key.modifiers.difference(SHIFT).is_empty() && !typing_text)
        || key.code == F(1)
}
