//! The keymap is data: the dispatcher, the footer hints and the `?` help overlay
//! all read this one table, so they cannot drift apart.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Everywhere (unless a modal takes the key first).
    Global,
    Input,
    /// The input box's completion list (after `@` or a leading `/`).
    Complete,
    /// Every list pane (conversation, servers, registry, health).
    Lists,
    Conversation,
    Servers,
    Registry,
    /// Typing the registry's filter.
    Filter,
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
    /// "Kill this server?"
    ConfirmKill,
    /// The session's grants ("always" approvals).
    Rules,
    /// "Write `allow` for this tool into the config file?"
    SaveGrant,
    /// How a call was decided.
    Explain,
    Resources,
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
                | Scope::Complete
                | Scope::Lists
                | Scope::Conversation
                | Scope::Servers
                | Scope::Registry
                | Scope::Filter
                | Scope::Health
        )
    }

    /// A pane whose letters are keys, never text for the input box.
    pub fn is_list(self) -> bool {
        matches!(
            self,
            Scope::Conversation | Scope::Servers | Scope::Registry | Scope::Health
        )
    }

    pub fn title(self) -> &'static str {
        match self {
            Scope::Global => "Everywhere",
            Scope::Input => "Input box",
            Scope::Complete => "Completion (after @ or a leading /)",
            Scope::Lists => "Every list pane",
            Scope::Conversation => "Conversation",
            Scope::Servers => "Servers",
            Scope::Registry => "Registry",
            Scope::Filter => "Registry filter (after /)",
            Scope::Health => "Health",
            Scope::Approval => "Approval prompt",
            Scope::Help => "Help",
            Scope::Detail => "Tool detail",
            Scope::WritePolicy => "Write policy",
            Scope::NoConfigFile => "Write policy (no config file)",
            Scope::CallTool => "Call a tool by hand",
            Scope::Elicitation => "A server asks for input",
            Scope::ConfirmKill => "Kill a server",
            Scope::Rules => "Rules (session grants)",
            Scope::SaveGrant => "Save a grant to the config",
            Scope::Explain => "How a call was decided",
            Scope::Resources => "A server's resources",
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
    /// `1`–`4`: Conversation, Servers, Registry, Health.
    Pane(u8),
    Rules,
    /// A prompt or form put aside (behind a window, or by this key): to the
    /// front, and aside again.
    Waiting,
    ReconnectResumed,
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
    Explain,
    Resources,
    /// Read the selected resource (the Resources window).
    Read,
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
    Filter,
    ClearFilter,
    KeepFilter,
    Refresh,
    ApproveOnce,
    ApproveAlways,
    Deny,
    Close,
    Confirm,
    Submit,
    RevokeGrant,
    SaveGrant,
    /// Clear the session's flow taint (the operator's act, logged).
    ClearTaint,
    /// Clear the selected outside client's flow taint (logged).
    ClearClientTaint,
    Undo,
    Redo,
    /// Open the diff view of an alias's changed definitions.
    ViewPins,
    /// Accept the definitions shown (asks to confirm).
    Accept,
    /// Put the selected completion in place of the word.
    Insert,
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
    BackTab, Backspace, Char, Delete, Down as KDown, End, Enter, Esc, F, Home, Left,
    PageDown as PgDn, PageUp as PgUp, Right, Tab, Up as KUp,
};

macro_rules! b {
    ($scope:ident, [$($c:expr),+], $keys:literal, $action:expr, $desc:literal, $hint:literal) => {
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
    b!(Global, [Chord(Char('c'), CTRL)], "Ctrl-C", InterruptOrQuit, "in a window: close it · while a turn or a hand-made call runs: interrupt · otherwise quit (twice within a second while servers are connected)", "quit"),
    b!(Global, [Chord(BackTab, SHIFT), Chord(BackTab, NONE)], "Shift-Tab", PrevFocus, "previous pane", ""),
    b!(Global, [Chord(Char('1'), ALT)], "Alt-1…4", Pane(1), "Conversation, Servers, Registry, Health (also from the input box)", ""),
    b!(Global, [Chord(Char('2'), ALT)], "Alt-2", Pane(2), "", ""),
    b!(Global, [Chord(Char('3'), ALT)], "Alt-3", Pane(3), "", ""),
    b!(Global, [Chord(Char('4'), ALT)], "Alt-4", Pane(4), "", ""),
    b!(Global, [Chord(F(2), NONE)], "F2", Rules, "rules: the session's \"always\" grants (revoke, save to config)", "rules"),
    // Handled before any window: a window the operator opened keeps its keys
    // while a prompt waits behind it, and this is how the prompt comes back.
    b!(Global, [Chord(F(3), NONE)], "F3", Waiting, "bring back a prompt or form put aside (a window you open keeps its keys; what waits shows as a badge)", ""),
    b!(Global, [Chord(Char('r'), CTRL)], "Ctrl-R", ReconnectResumed, "reconnect the servers a resumed session had connected", ""),
    b!(Input, [Chord(Enter, NONE)], "Enter", Send, "send (on an empty box: go on with a paused replay)", "send"),
    b!(Input, [Chord(Enter, ALT), Chord(Char('j'), CTRL), Chord(Enter, SHIFT)], "Alt-Enter/Ctrl-J", Newline, "new line (most terminals send Shift-Enter as a plain Enter)", "new line"),
    b!(Input, [Chord(KUp, NONE)], "↑/↓", HistoryPrev, "earlier / later messages (on the first / last line)", ""),
    b!(Input, [Chord(KDown, NONE)], "↓", HistoryNext, "", ""),
    b!(Input, [Chord(PgUp, NONE)], "PgUp/PgDn", PageUp, "scroll the conversation", ""),
    b!(Input, [Chord(PgDn, NONE)], "PgDn", PageDown, "", ""),
    b!(Input, [Chord(Char('z'), CTRL)], "Ctrl-Z/Ctrl-Y", Undo, "undo / redo", ""),
    b!(Input, [Chord(Char('y'), CTRL)], "Ctrl-Y", Redo, "", ""),
    b!(Complete, [Chord(Tab, NONE), Chord(Enter, NONE)], "Tab/Enter", Insert, "put the selected resource, prompt or argument in place of the word (Enter sends once the word is complete)", "insert"),
    b!(Complete, [Chord(KUp, NONE)], "↑/↓", Up, "select", "select"),
    b!(Complete, [Chord(KDown, NONE)], "↓", Down, "", ""),
    b!(Complete, [Chord(Esc, NONE)], "Esc", Close, "close the list (it opens again on the next word)", "close"),
    b!(Lists, [Chord(Char('1'), NONE)], "1…4", Pane(1), "Conversation, Servers, Registry, Health", ""),
    b!(Lists, [Chord(Char('2'), NONE)], "2", Pane(2), "", ""),
    b!(Lists, [Chord(Char('3'), NONE)], "3", Pane(3), "", ""),
    b!(Lists, [Chord(Char('4'), NONE)], "4", Pane(4), "", ""),
    b!(Lists, [Chord(Char('i'), NONE), Chord(Esc, NONE)], "i/Esc", FocusInput, "to the input box (letters in a list pane are keys, never text)", ""),
    b!(Conversation, [Chord(KUp, NONE), Chord(Char('k'), NONE)], "↑↓/jk", Up, "move between entries (the view follows)", ""),
    b!(Conversation, [Chord(KDown, NONE), Chord(Char('j'), NONE)], "↓/j", Down, "", ""),
    b!(Conversation, [Chord(Enter, NONE), Chord(Char(' '), NONE)], "Enter", Toggle, "expand / collapse a tool call", "expand"),
    b!(Conversation, [Chord(Char('e'), NONE)], "e", Explain, "explain a call: which local rule decided it", "explain"),
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
    b!(Servers, [Chord(Char('K'), SHIFT), Chord(Char('K'), NONE)], "K", Kill, "kill the server process, after a y (watch the watchdog revoke)", "kill"),
    b!(Servers, [Chord(Char('p'), NONE)], "p", WritePolicy, "write the policy for what it publishes", "write policy"),
    b!(Servers, [Chord(Char('s'), NONE)], "s", SignIn, "sign in (OAuth): its authorization page in a browser, then connect", "sign in"),
    b!(Servers, [Chord(Char('o'), NONE)], "o", SignOut, "sign out: its tools are revoked at once, then its token", "sign out"),
    b!(Servers, [Chord(Char('R'), SHIFT), Chord(Char('R'), NONE)], "R", Resources, "its resources: URI, name, MIME type, size (and templates)", "resources"),
    b!(Servers, [Chord(Char('v'), NONE)], "v", ViewPins, "review definitions that differ from their pins (diff), and accept them", "definitions"),
    b!(Servers, [Chord(Enter, NONE)], "Enter", ShowRegistry, "its tools in the registry", "tools"),
    b!(Registry, [Chord(KUp, NONE), Chord(Char('k'), NONE)], "↑/↓", Up, "select", ""),
    b!(Registry, [Chord(KDown, NONE), Chord(Char('j'), NONE)], "↓", Down, "", ""),
    b!(Registry, [Chord(PgUp, NONE)], "PgUp/PgDn", PageUp, "a page up / down", ""),
    b!(Registry, [Chord(PgDn, NONE)], "PgDn", PageDown, "", ""),
    b!(Registry, [Chord(Home, NONE), Chord(Char('g'), NONE)], "g/G", Top, "first / last row (also Home/End)", ""),
    b!(Registry, [Chord(End, NONE), Chord(Char('G'), SHIFT), Chord(Char('G'), NONE)], "G", Bottom, "", ""),
    b!(Registry, [Chord(Char('/'), NONE)], "/", Filter, "filter by alias, name, exposed name, effect or state", "filter"),
    b!(Registry, [Chord(Enter, NONE)], "Enter", Detail, "details (schema, server claims)", "details"),
    b!(Registry, [Chord(Char('x'), NONE)], "x", CallByHand, "call it by hand", "call by hand"),
    b!(Registry, [Chord(Char('a'), NONE)], "a", ToggleAll, "all servers / selected server", "all/selected"),
    // Esc first clears a filter; with none it goes to the input box (Lists).
    b!(Registry, [Chord(Esc, NONE)], "Esc", ClearFilter, "clear the filter (with none: to the input box)", ""),
    b!(Filter, [Chord(Enter, NONE)], "Enter", KeepFilter, "keep the filter, back to the rows", "keep"),
    b!(Filter, [Chord(Esc, NONE)], "Esc", ClearFilter, "clear the filter", "clear"),
    b!(Filter, [Chord(KUp, NONE)], "↑/↓ PgUp/PgDn", Up, "move through what matches while typing", ""),
    b!(Filter, [Chord(KDown, NONE)], "↓", Down, "", ""),
    b!(Filter, [Chord(PgUp, NONE)], "PgUp", PageUp, "", ""),
    b!(Filter, [Chord(PgDn, NONE)], "PgDn", PageDown, "", ""),
    b!(Registry, [Chord(Char('v'), NONE)], "v", ViewPins, "review its server's changed definitions (diff), and accept them", "definitions"),
    b!(Health, [Chord(Char('u'), NONE)], "u", Refresh, "refresh (stderr tail)", "refresh"),
    b!(Approval, [Chord(Char('y'), NONE)], "y", ApproveOnce, "approve once", "approve once"),
    b!(Approval, [Chord(Char('a'), NONE)], "a", ApproveAlways, "approve this tool for the session (this definition, this connection; settles its queued prompts)", "always for this tool"),
    b!(Approval, [Chord(Char('n'), NONE), Chord(Esc, NONE)], "n/Esc", Deny, "deny", "deny"),
    b!(Approval, [Chord(KUp, NONE)], "↑/↓", Up, "scroll", "scroll"),
    b!(Approval, [Chord(KDown, NONE)], "↓", Down, "", ""),
    b!(Approval, [Chord(F(3), NONE)], "F3", Waiting, "put it aside (the status bar keeps a badge; F3 brings it back); other keys do nothing while it is shown, except typing in the input box", "put aside"),
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
    b!(CallTool, [Chord(Char('z'), CTRL)], "Ctrl-Z/Ctrl-Y", Undo, "undo / redo", ""),
    b!(CallTool, [Chord(Char('y'), CTRL)], "Ctrl-Y", Redo, "", ""),
    b!(Elicitation, [Chord(Enter, NONE)], "Enter", Submit, "send the answer (from any field)", "send"),
    b!(Elicitation, [Chord(KUp, NONE), Chord(BackTab, SHIFT), Chord(BackTab, NONE)], "↑/↓", Up, "field (Tab / Shift-Tab too)", "field"),
    b!(Elicitation, [Chord(KDown, NONE), Chord(Tab, NONE)], "↓", Down, "", ""),
    b!(Elicitation, [Chord(Char(' '), NONE), Chord(Left, NONE), Chord(Right, NONE)], "Space/←/→", Edit, "toggle a checkbox or an option, pick a choice (typed in text fields)", "toggle/choose"),
    b!(Elicitation, [Chord(Char('d'), CTRL)], "Ctrl-D", Deny, "decline", "decline"),
    b!(Elicitation, [Chord(Esc, NONE)], "Esc", Close, "cancel", "cancel"),
    b!(Elicitation, [Chord(F(3), NONE)], "F3", Waiting, "put it aside (the status bar keeps a badge; F3 brings it back)", "put aside"),
    b!(ConfirmKill, [Chord(Char('y'), NONE)], "y", Confirm, "kill it (SIGKILL to its processes)", "kill"),
    b!(ConfirmKill, [Chord(Char('n'), NONE), Chord(Esc, NONE)], "n/Esc", Close, "cancel", "cancel"),
    b!(Rules, [Chord(KUp, NONE), Chord(Char('k'), NONE)], "↑/↓", Up, "select", ""),
    b!(Rules, [Chord(KDown, NONE), Chord(Char('j'), NONE)], "↓", Down, "", ""),
    b!(Rules, [Chord(Char('d'), NONE), Chord(Delete, NONE)], "d", RevokeGrant, "revoke the grant (its tool asks again)", "revoke"),
    b!(Rules, [Chord(Char('s'), NONE)], "s", SaveGrant, "save to config: write allow for its tool (asks first)", "save to config"),
    b!(Rules, [Chord(Char('c'), NONE)], "c", ClearTaint, "clear the session's flow taint (logged)", "clear taint"),
    b!(Rules, [Chord(Char('x'), NONE)], "x", ClearClientTaint, "clear the selected client's flow taint (logged)", "clear client"),
    b!(Rules, [Chord(Esc, NONE), Chord(Char('q'), NONE)], "Esc", Close, "close", "close"),
    b!(SaveGrant, [Chord(Char('y'), NONE)], "y", Confirm, "write it", "write it"),
    b!(SaveGrant, [Chord(Char('n'), NONE), Chord(Esc, NONE)], "n/Esc", Close, "cancel", "cancel"),
    b!(Explain, [Chord(Esc, NONE), Chord(Char('q'), NONE), Chord(Char('e'), NONE)], "Esc", Close, "close", "close"),
    b!(Explain, [Chord(KUp, NONE)], "↑/↓", Up, "scroll", "scroll"),
    b!(Explain, [Chord(KDown, NONE)], "↓", Down, "", ""),
    b!(Resources, [Chord(Esc, NONE), Chord(Char('q'), NONE), Chord(Char('R'), SHIFT), Chord(Char('R'), NONE)], "Esc", Close, "close", "close"),
    b!(Resources, [Chord(KUp, NONE)], "↑/↓", Up, "select a resource", "select"),
    b!(Resources, [Chord(KDown, NONE)], "↓", Down, "", ""),
    b!(Resources, [Chord(Enter, NONE)], "Enter", Read, "read it, for you (under its read policy: your key is the approval confirm asks for; the model does not get it)", "read"),
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

/// The bindings shown in the footer for a scope, then — outside modal
/// windows, where they do not apply — the global ones.
pub fn hints(scope: Scope) -> Vec<&'static Binding> {
    let of = |s: Scope| {
        BINDINGS
            .iter()
            .filter(move |b| !b.hint.is_empty() && b.scope == s)
    };
    let global = (!scope.is_modal()).then(|| of(Scope::Global));
    of(scope).chain(global.into_iter().flatten()).collect()
}

/// `?` opens help, except in an input box with text in it, where it is typed.
pub fn is_help(key: &KeyEvent, typing_text: bool) -> bool {
    (key.code == Char('?') && key.modifiers.difference(SHIFT).is_empty() && !typing_text)
        || key.code == F(1)
}

/// The keys of a modal window, from this table (so they cannot drift).
pub fn keys_of(scope: Scope) -> String {
    key_items(scope).join(" · ")
}

/// [`keys_of`], one `KEYS hint` item each.
pub fn key_items(scope: Scope) -> Vec<String> {
    hints(scope)
        .iter()
        .map(|b| format!("{} {}", b.keys, b.hint))
        .collect()
}
