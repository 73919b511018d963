//! The real binary in tmux, used as a person uses it: connect `demo_alpha` from the
//! side panel, see its tools exposed, kill its process, see them revoked, quit;
//! and a server with escape sequences in every text it sends, shown inert in every
//! view; keys typed as an approval prompt opens do not decide it, and pasted
//! lines stay lines. (Every way of ending the TUI is in tui_exits.rs.)

mod boundary;
mod config;
pub(crate) mod control_room;
mod control_room_elicit;
mod control_room_subscribe;
mod scale;

use crate::common::TestEnv;
use crate::common::tmux::{Tmux, tui_command};

const POLICY: &str = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";

fn setup(env: &TestEnv) -> String {
    env.config(&format!(
        "[model]\nprovider = \"scripted\"\n{}[servers.demo_alpha.tools]\n{POLICY}{}[servers.demo_beta.tools]\n{POLICY}",
        env.demo("demo_alpha", "alpha", &[]),
        env.demo("demo_beta", "beta", &[])
    ));
    tui_command(env)
}

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[test]
fn connect_from_the_side_panel_then_kill_and_watch_the_revocation() {
    let env = TestEnv::new();
    let tmux = Tmux::start(&env, &setup(&env), 120, 40);
    tmux.wait("the main screen", |s| {
        s.contains("Servers") && s.contains("demo_alpha")
    });
    // Input → Conversation → Servers; demo_alpha is selected; c connects it.
    tmux.keys(&["Tab", "Tab"]);
    tmux.keys(&["c"]);
    let screen = tmux.wait("demo_alpha's tools in the registry", |s| {
        s.contains("mcp__demo_alpha__lookup") && s.contains("ready")
    });
    assert!(screen.contains("Registry v1"), "{screen}");
    // The effect in a fixed right-hand column: the row ends with it.
    assert!(
        screen
            .lines()
            .any(|l| l.contains("set    → mcp__demo_alpha__set")
                && l.trim_end().ends_with("confirm│")),
        "{screen}"
    );
    // Health counts the connection's age by itself (no key pressed meanwhile).
    let up = |s: &str| {
        s.lines()
            .find_map(|l| l.split("│up").nth(1).map(|r| r.trim().to_string()))
            .unwrap_or_default()
    };
    let before = up(&screen);
    tmux.wait("the age to move on", |s| {
        !up(s).is_empty() && up(s) != before
    });
    // K asks first; a y typed at once does not count (it arms like a prompt).
    tmux.keys(&["K", "y"]);
    tmux.wait("the question", |s| s.contains("Kill demo_alpha?"));
    // Armed after a quiet second, and still asking: that y did not count.
    let screen = tmux.wait("the question to arm", |s| !s.contains("arming:"));
    assert!(screen.contains("Kill demo_alpha?"), "{screen}");
    tmux.keys(&["y"]);
    // The watchdog notices and revokes; the rows stay in place, struck out,
    // reading ALIAS/TOOL.
    let screen = tmux.wait("the revocation", |s| {
        s.contains("lost") && s.contains("demo_alpha/lookup")
    });
    assert!(screen.contains("killed by signal 9"), "{screen}");
    assert!(screen.contains("Registry v2"), "{screen}");
    // They stay until the next key (no timer takes them away).
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(tmux.screen().contains("demo_alpha/lookup"));
    tmux.keys(&["Down"]);
    tmux.wait("the revoked tools to go", |s| {
        !s.contains("demo_alpha/lookup")
    });
    // Ctrl-C while idle, with nothing connected, quits at once.
    tmux.keys(&["C-c"]);
    tmux.wait_gone();
    env.assert_no_leaks();
}

/// No byte of `styled` (a `capture-pane -e` screen) is a control a terminal acts
/// on, except the SGR styling tmux re-encodes from the harness's own cells.
fn assert_only_styling(styled: &str, what: &str) {
    let mut rest = styled;
    while let Some(at) = rest.find('\u{1b}') {
        let sequence = &rest[at + 1..];
        let params = sequence
            .strip_prefix('[')
            .unwrap_or_else(|| panic!("{what}: an escape that is not CSI: {sequence:.20?}"));
        let end = params
            .find(|c: char| !(c.is_ascii_digit() || c == ';' || c == ':'))
            .unwrap_or(params.len());
        assert!(
            params[end..].starts_with('m'),
            "{what}: a CSI that is not SGR styling: {params:.20?}"
        );
        rest = &params[end + 1..];
    }
    assert_no_raw_controls(styled, what);
}

fn assert_no_raw_controls(text: &str, what: &str) {
    for c in text.chars() {
        let control = (c.is_control() && c != '\n' && c != '\u{1b}')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        assert!(!control, "{what}: raw {c:?} on the screen");
    }
}

/// Every byte the harness wrote to its terminal: valid UTF-8 (so no lone 0x9b
/// CSI), no OSC (title, clipboard), no BEL, no C1 control, no bidi override, and
/// every escape a plain CSI (cursor position, styling, modes).
fn assert_inert_stream(bytes: &[u8]) {
    let text = std::str::from_utf8(bytes).expect("the terminal output is valid UTF-8");
    assert!(!text.contains("\u{1b}]"), "an OSC reached the terminal");
    let mut rest = text;
    while let Some(at) = rest.find('\u{1b}') {
        let sequence = &rest[at + 1..];
        let params = sequence
            .strip_prefix('[')
            .unwrap_or_else(|| panic!("an escape that is not CSI: {sequence:.20?}"));
        let end = params
            .find(|c: char| !(c.is_ascii_digit() || c == ';' || c == '?'))
            .unwrap_or(params.len());
        assert!(
            params[end..].starts_with(|c: char| c.is_ascii_alphabetic()),
            "a malformed CSI: {params:.20?}"
        );
        rest = &params[end + 1..];
    }
    for c in text.chars() {
        let bad = matches!(c, '\u{7}' | '\u{80}'..='\u{9f}')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        assert!(!bad, "raw {c:?} reached the terminal");
    }
}

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[test]
fn escapes_from_a_server_stay_inert_in_every_view() {
    let env = TestEnv::new();
    // Escapes in names, versions, descriptions, titles, inputSchema texts, results,
    // an isError text (fail), a JSON-RPC error message (reset), stderr; and in the
    // hostile server's elicitation message and field titles.
    let tainted = env.demo(
        "tainted",
        "alpha",
        &["--fault", "escapes", "--fault", "rpc-error-on=reset"],
    );
    let hostile = env.demo(
        "hostile",
        "hostile",
        &["--scenario", "elicit-on-call", "--fault", "escapes"],
    );
    env.config(&format!(
        "[model]\nprovider = \"scripted\"\n{tainted}[servers.tainted.tools]\n{}{hostile}[servers.hostile.tools]\nlookup = \"allow\"\n",
        POLICY.replace("confirm", "allow")
    ));
    // Start the harness only once its output is being recorded.
    let go = env.path("go");
    let command = format!(
        "sh -c 'while [ ! -e {} ]; do sleep 0.05; done; exec {}'",
        go.display(),
        tui_command(&env)
    );
    let tmux = Tmux::start(&env, &command, 120, 40);
    let raw = env.path("terminal-output");
    tmux.record_output(&raw);
    std::fs::write(&go, "").unwrap();
    let mut screens = Vec::new();
    let mut look = |what: &str, screen: String| {
        // Shown, neutralized: `^[]0;pw…` (or `\u001b]0;pw…` inside JSON).
        assert!(
            screen.contains("]0;pw"),
            "{what}: the payload is not shown: {screen}"
        );
        screens.push((what.to_owned(), tmux.styled_screen()));
    };
    tmux.wait("the main screen", |s| s.contains("tainted"));
    // Servers: `hostile` is first; connect both.
    tmux.keys(&["Tab", "Tab", "c"]);
    tmux.wait("hostile connected", |s| s.contains("ready 1 tools"));
    tmux.keys(&["Down", "c"]);
    let screen = tmux.wait("tainted connected", |s| {
        s.contains("ready 5 tools") && s.contains("server   demo-alpha^[")
    });
    look("the health pane", screen);
    // Registry → lookup's detail: server claims and the input schema.
    tmux.keys(&["Tab", "Enter"]);
    look(
        "the detail view",
        tmux.wait("the detail view", |s| s.contains("Input schema")),
    );
    // Call by hand: the editor prefilled from the schema (a tainted default).
    tmux.keys(&["x"]);
    look(
        "the editor",
        tmux.wait("the editor", |s| s.contains("prefilled")),
    );
    tmux.keys(&["C-s"]);
    tmux.wait("the lookup result", |s| s.contains("no entry for"));
    // reset (JSON-RPC error) and fail (isError), by hand too.
    tmux.keys(&["Down", "Down", "x"]);
    tmux.wait("reset's editor", |s| s.contains("Call mcp__tainted__reset"));
    tmux.keys(&["C-s"]);
    tmux.wait("reset's error", |s| s.contains("JSON-RPC error"));
    tmux.keys(&["Down", "x"]);
    tmux.wait("fail's editor", |s| s.contains("Call mcp__tainted__fail"));
    tmux.keys(&["C-s"]);
    tmux.wait("fail's error", |s| s.contains("__fail` reported"));
    // Expand fail's entry: its server output, to the tainted last line.
    tmux.keys(&["BTab", "BTab", "Enter"]);
    look(
        "a call's server output",
        tmux.wait("fail expanded", |s| s.contains("ConnectionRefusedError")),
    );
    // The hostile server's lookup asks for input: the form shows its words.
    // (The registry keeps its row from `tainted`: back to the first.)
    tmux.keys(&["Tab", "Up", "Tab", "Up", "Up", "Up", "Up", "x"]);
    tmux.wait("hostile's editor", |s| {
        s.contains("Call mcp__hostile__lookup")
    });
    tmux.keys(&["C-s"]);
    look(
        "the elicitation form",
        tmux.wait("the form", |s| s.contains("Input requested")),
    );
    // Like an approval, the form takes keys after a quiet moment.
    tmux.wait("the form to arm", |s| {
        s.contains("Input requested") && !s.contains("arming:")
    });
    tmux.keys(&["Enter"]);
    look(
        "the elicitation result",
        tmux.wait("the answer", |s| s.contains("elicitation answered: accept")),
    );
    for (what, styled) in &screens {
        assert_only_styling(styled, what);
    }
    assert!(
        !tmux.pane_title().contains("pwned"),
        "{}",
        tmux.pane_title()
    );
    tmux.keys(&["C-q"]);
    tmux.wait_gone();
    assert_inert_stream(&std::fs::read(&raw).unwrap());
    env.assert_no_leaks();
}

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[test]
fn keys_typed_as_a_prompt_opens_do_not_decide_it_and_pasted_lines_stay_lines() {
    let env = TestEnv::new();
    // A Lead that connects demo_alpha and then asks for `set` (confirm).
    std::fs::write(
        env.path("scenario.toml"),
        "[[act]]\n\
         [[act.turn]]\ntool_calls = [{ name = \"connect_mcp\", arguments = { alias = \"demo_alpha\" } }]\n\
         [[act.turn]]\ntext = \"setting\"\ntool_calls = [{ name = \"mcp__demo_alpha__set\", arguments = { key = \"apple\", value = \"red\" } }]\n\
         [[act.turn]]\ntext = \"done\"\n",
    )
    .unwrap();
    env.config(&format!(
        "[model]\nprovider = \"scripted\"\nscenario = \"{{DIR}}/scenario.toml\"\n{}[servers.demo_alpha.tools]\n{POLICY}",
        env.demo("demo_alpha", "alpha", &[])
    ));
    let tmux = Tmux::start(&env, &tui_command(&env), 80, 24);
    tmux.wait("the main screen", |s| s.contains("Chat"));
    // A bracketed paste of two lines (tmux sends the line break as CR).
    tmux.run(&["set-buffer", "-b", "p", "first line\nsecond line"]);
    tmux.run(&["paste-buffer", "-p", "-b", "p", "-t", "t"]);
    tmux.wait("two lines in the input box", |s| {
        s.contains("│first line") && s.contains("│second line")
    });
    tmux.keys(&["Enter"]);
    tmux.wait("the prompt", |s| s.contains("Approval needed"));
    // Keys typed as it opens go on into the input box: y, a and n decide
    // nothing.
    tmux.keys(&["y", "y", "a", "n"]);
    let screen = tmux.wait("the arming note", |s| {
        s.contains("arming: keys go to the input box")
    });
    assert!(screen.contains("Approval needed"), "{screen}");
    // A quiet second arms it.
    let screen = tmux.wait("the prompt armed after a pause", |s| !s.contains("arming:"));
    assert!(screen.contains("Approval needed"), "{screen}");
    tmux.keys(&["y"]);
    let screen = tmux.wait("the prompt to go", |s| !s.contains("Approval needed"));
    assert!(
        screen.contains("│yyan"),
        "the stray keys are text in the box: {screen}"
    );
    // 1: the conversation (from the input box: Alt-1), where the call's row
    // says how it was decided and the pasted lines are two lines.
    tmux.keys(&["M-1"]);
    // (Its own row's words: connect_mcp's row says " ok " too, and under load
    // the screen can show it before `set` has finished.)
    let screen = tmux.wait("the approved call", |s| {
        s.contains("mcp__demo_alpha__set") && s.contains("approved once")
    });
    assert!(screen.contains("approved once"), "{screen}");
    // g: the top, the operator's message as pasted.
    tmux.keys(&["g"]);
    let screen = tmux.wait("the message", |s| {
        s.contains("▌first line") && s.contains("▌second line")
    });
    assert!(!screen.contains("second liney"), "{screen}");
    tmux.keys(&["C-q"]);
    tmux.wait_gone();
    env.assert_no_leaks();
}
