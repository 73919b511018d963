//! Names at 120 columns (issue 21, items 5 and 12): the registry's effect
//! column is never cut, names are cut in the middle so two rows never read the
//! same (registry rows, the conversation's `mcp__everything__…` calls), the
//! filter title keeps its `M/N` count, and a form widens to its labels.

use std::sync::Arc;

use crossterm::event::KeyCode;
use mcp_harness::protocol::{BackendEvent, FieldKind, FieldView, ServerView, Target};
use mcp_harness::ui::msg::Msg;
use mcp_harness::ui::state::{AppState, Focus};
use mcp_harness::ui::update::update;

use super::{backend, screen_text, session, snapshot_at};
use crate::fixtures::{call_started, elicitation, servers, tool, views};

const WIDE: (u16, u16) = (120, 40);

const LONG: &str = "long_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";

/// A server like server-everything: names sharing their start, and one long name.
fn everything() -> ServerView {
    let mut server = servers().remove(0);
    server.alias = "everything".into();
    let names = [
        "get-resource-links",
        "get-resource-reference",
        "toggle-simulated-logging",
        "toggle-subscriber-updates",
        LONG,
    ];
    let exposed: Vec<String> = names
        .iter()
        .map(|n| format!("mcp__everything__{}", n.replace('-', "_")))
        .collect();
    server.published = Arc::from(
        names
            .iter()
            .zip(&exposed)
            .map(|(n, e)| tool(n, Some(e), Some("confirm"), None))
            .collect::<Vec<_>>(),
    );
    server.exposed = names.len();
    server
}

fn with_everything() -> AppState {
    let mut s = session();
    let mut all = servers();
    all.insert(0, everything());
    update(&mut s, views(all));
    s.focus = Focus::Registry;
    s
}

fn key(code: KeyCode) -> Msg {
    Msg::Key(crossterm::event::KeyEvent::from(code))
}

/// The registry's rows as drawn (the lines that hold a `confirm` column).
fn rows_of(screen: &str, needle: &str) -> Vec<String> {
    screen
        .lines()
        .filter(|l| l.contains(needle))
        .map(|l| l.to_string())
        .collect()
}

#[test]
fn the_effect_word_is_never_cut_and_rows_read_apart() {
    for all in [false, true] {
        let mut s = with_everything();
        s.registry_all = all;
        let screen = screen_text(&mut s, WIDE);
        let long = rows_of(&screen, "long_x");
        assert!(!long.is_empty(), "{screen}");
        for row in &long {
            assert!(row.contains("confirm"), "effect cut: {row}");
        }
        // Every row of `everything` reads apart from the others.
        let mut seen = Vec::new();
        for row in rows_of(&screen, "confirm") {
            assert!(
                !seen.contains(&row),
                "two rows read the same: {row}\n{screen}"
            );
            seen.push(row);
        }
        assert!(seen.len() >= 5, "{screen}");
    }
    let mut s = with_everything();
    s.registry_all = true;
    snapshot_at("names_registry_all", &mut s, &[WIDE, (80, 24)]);
}

#[test]
fn the_filter_title_keeps_its_counts() {
    let mut s = with_everything();
    update(&mut s, key(KeyCode::Char('/')));
    for c in "resource-reference-and-more-than-fits".chars() {
        update(&mut s, key(KeyCode::Char(c)));
    }
    for size in [WIDE, (80, 24), (60, 20)] {
        let screen = screen_text(&mut s, size);
        assert!(screen.contains(" 0/5"), "{size:?}\n{screen}");
    }
}

#[test]
fn two_calls_of_one_server_read_apart_in_the_conversation() {
    let mut s = session();
    for (id, name) in [
        ("e1", "mcp__everything__toggle_simulated_logging"),
        ("e2", "mcp__everything__toggle_subscriber_updates"),
    ] {
        let mut call = call_started(id, name);
        call.target = Target::Mcp {
            alias: "everything".into(),
            remote_name: name.rsplit("__").next().unwrap_or(name).into(),
        };
        backend(&mut s, BackendEvent::ToolCallStarted(call));
    }
    let screen = screen_text(&mut s, WIDE);
    let heads: Vec<String> = screen
        .lines()
        .filter(|l| l.contains("mcp__"))
        .filter_map(|l| l.split("mcp__").nth(1).map(|r| r.to_string()))
        .filter(|r| r.contains("everything") || r.contains('…'))
        .collect();
    assert!(heads.len() >= 2, "{screen}");
    assert!(heads.iter().any(|h| h.contains("logging")), "{screen}");
    assert!(heads.iter().any(|h| h.contains("updates")), "{screen}");
}

#[test]
fn a_form_widens_to_its_labels() {
    let mut s = session();
    let mut form = elicitation(1);
    form.fields.push(FieldView {
        name: "notify".into(),
        title: Some("Notify the maintainers by e-mail".into()),
        description: None,
        kind: FieldKind::Boolean,
        required: false,
        default: None,
    });
    backend(&mut s, BackendEvent::ElicitationRequested(form));
    let screen = screen_text(&mut s, WIDE);
    assert!(
        screen.contains("Notify the maintainers by e-mail"),
        "{screen}"
    );
    snapshot_at("names_form_long_label", &mut s, &[WIDE, (80, 24)]);
}
