//! The registry at scale, in the reducer: the filter (live, with M of N), the
//! page and end keys, a burst of 500 Downs, and struck-out rows in place.

use std::sync::Arc;
use std::time::Instant;

use crossterm::event::KeyCode;
use mcp_harness::protocol::{AliasStatus, ServerView};
use mcp_harness::ui::state::{AppState, Focus, RegistryRow};
use mcp_harness::ui::update::update;

use super::{key, typed};
use crate::fixtures::{servers, tool, views};

/// One connected server with `n` tools, every seventh `confirm`.
pub fn big(n: usize) -> Vec<ServerView> {
    let published = (0..n)
        .map(|i| {
            let name = format!("tool_{i:05}");
            let effect = if i % 7 == 0 { "confirm" } else { "allow" };
            tool(
                &name,
                Some(&format!("mcp__big__{name}")),
                Some(effect),
                None,
            )
        })
        .collect::<Vec<_>>();
    let mut server = servers()[0].clone();
    server.alias = "big".into();
    server.state = AliasStatus::Ready;
    server.exposed = n;
    server.published = Arc::from(published);
    vec![server]
}

fn state(n: usize) -> AppState {
    let mut s = AppState::new(Instant::now());
    update(&mut s, views(big(n)));
    s.focus = Focus::Registry;
    s
}

fn selected_name(s: &AppState) -> String {
    s.selected_row().unwrap().tool().name.clone()
}

#[test]
fn the_filter_narrows_live_shows_m_of_n_and_esc_clears_it() {
    let mut s = state(2_000);
    update(&mut s, key(KeyCode::Char('/')));
    assert!(s.filter.as_ref().unwrap().editing);
    typed(&mut s, "01999");
    assert_eq!(s.rows().refs.len(), 1, "live, as it is typed");
    assert_eq!(s.rows().total, 2_000);
    assert_eq!(selected_name(&s), "tool_01999");
    // Letters typed into the filter never reach the input box.
    assert_eq!(s.input_text(), "");
    // Backspace widens it again.
    update(&mut s, key(KeyCode::Backspace));
    assert_eq!(s.rows().refs.len(), 11, "tool_00199 and tool_0199x");
    // Enter keeps it and gives the keys back to the rows.
    update(&mut s, key(KeyCode::Enter));
    assert!(!s.filter.as_ref().unwrap().editing);
    update(&mut s, key(KeyCode::Down));
    assert_eq!(selected_name(&s), "tool_01990");
    // Esc clears it: every row is back.
    update(&mut s, key(KeyCode::Esc));
    assert!(s.filter.is_none());
    assert_eq!(s.rows().refs.len(), 2_000);
    // With no filter, Esc goes to the input box.
    update(&mut s, key(KeyCode::Esc));
    assert_eq!(s.focus, Focus::Input);
}

#[test]
fn the_filter_matches_the_effect_the_state_and_the_exposed_name() {
    let mut s = state(100);
    update(&mut s, key(KeyCode::Char('/')));
    typed(&mut s, "confirm");
    assert_eq!(s.rows().refs.len(), 15, "every seventh of 100");
    update(&mut s, key(KeyCode::Esc));
    update(&mut s, key(KeyCode::Char('/')));
    typed(&mut s, "mcp__big__tool_0004");
    assert_eq!(s.rows().refs.len(), 10);
    // Words are ANDed; case does not matter.
    update(&mut s, key(KeyCode::Esc));
    update(&mut s, key(KeyCode::Char('/')));
    typed(&mut s, "TOOL_0004 confirm");
    assert_eq!(s.rows().refs.len(), 2, "tool_00042 and tool_00049");
    // The one-server fixture: a denied tool is found by its state.
    let mut s = AppState::new(Instant::now());
    update(&mut s, views(servers()));
    s.focus = Focus::Registry;
    update(&mut s, key(KeyCode::Char('/')));
    typed(&mut s, "denied");
    assert_eq!(selected_name(&s), "reset");
}

#[test]
fn page_keys_and_the_ends_move_by_the_page_and_to_the_first_and_last_row() {
    let mut s = state(2_000);
    s.area = ratatui::layout::Rect::new(0, 0, 120, 40);
    update(&mut s, key(KeyCode::Char('G')));
    assert_eq!(selected_name(&s), "tool_01999");
    update(&mut s, key(KeyCode::Char('g')));
    assert_eq!(selected_name(&s), "tool_00000");
    update(&mut s, key(KeyCode::End));
    assert_eq!(s.selected_tool, 1_999);
    update(&mut s, key(KeyCode::Home));
    assert_eq!(s.selected_tool, 0);
    update(&mut s, key(KeyCode::PageDown));
    let page = s.selected_tool;
    assert!(page > 20, "a page at 120×40 is most of the pane: {page}");
    update(&mut s, key(KeyCode::PageDown));
    assert_eq!(s.selected_tool, 2 * page);
    update(&mut s, key(KeyCode::PageUp));
    assert_eq!(s.selected_tool, page);
    // The selection is always on screen.
    assert!(s.registry_offset <= s.selected_tool);
}

#[test]
fn a_burst_of_500_downs_from_the_first_row_selects_row_500() {
    let mut s = state(2_000);
    for _ in 0..500 {
        update(&mut s, key(KeyCode::Down));
    }
    assert_eq!(s.selected_tool, 500);
    assert_eq!(selected_name(&s), "tool_00500");
    assert_eq!(s.focus, Focus::Registry);
}

#[test]
fn a_revoked_listing_reads_alias_slash_tool_in_the_all_servers_view_too() {
    let mut s = AppState::new(Instant::now());
    update(&mut s, views(servers()));
    s.focus = Focus::Registry;
    update(&mut s, key(KeyCode::Char('a')));
    assert!(s.registry_all);
    super::backend(
        &mut s,
        mcp_harness::protocol::BackendEvent::ToolsRevoked {
            alias: "demo_alpha".into(),
            tools: vec!["mcp__demo_alpha__lookup".into()],
            cause: mcp_harness::protocol::EndCause {
                kind: mcp_harness::protocol::EndKind::Disconnected,
                text: "disconnected".into(),
            },
        },
    );
    let mut lost = servers();
    lost[0].state = AliasStatus::Disconnected;
    lost[0].published = Arc::from(Vec::new());
    update(&mut s, views(lost));
    let rows: Vec<String> = (0..s.rows().refs.len())
        .map(|i| match s.registry_row(i).unwrap() {
            RegistryRow::Struck { alias, tool, .. } => format!("~{alias}/{}", tool.name),
            RegistryRow::Tool { alias, tool, .. } => format!("{alias}/{}", tool.name),
        })
        .collect();
    assert_eq!(
        rows,
        [
            "~demo_alpha/lookup",
            "~demo_alpha/set",
            "~demo_alpha/reset",
            "~demo_alpha/fail",
            "demo_beta/lookup",
            "demo_beta/reset"
        ]
    );
}

/// In the compact layout (full exposed names do not fit), names take the room
/// no row needs for text between name and effect: at 120×40 the all-servers
/// view's `demo_alpha/guarded_set` is whole, not cut at two thirds.
#[test]
fn compact_rows_give_the_names_the_room_no_row_needs_for_a_reason() {
    let named = |names: &[(&str, Option<&str>)]| {
        let published = names
            .iter()
            .map(|(n, why)| match why {
                None => tool(
                    n,
                    Some(&format!("mcp__demo_alpha__{n}")),
                    Some("allow"),
                    None,
                ),
                Some(why) => tool(n, None, Some("deny"), Some(why)),
            })
            .collect::<Vec<_>>();
        let mut server = servers()[0].clone();
        server.state = AliasStatus::Ready;
        server.published = Arc::from(published);
        let mut s = AppState::new(Instant::now());
        update(&mut s, views(vec![server]));
        s.registry_all = true;
        s
    };
    // A 40-column pane: 32 columns left of the effect.
    let s = named(&[("lookup", None), ("guarded_set", None)]);
    assert_eq!(s.rows().name_width, "demo_alpha/guarded_set".len());
    assert_eq!(
        s.rows().name_column(40, true),
        "demo_alpha/guarded_set".len()
    );
    // A row with a reason keeps a third of the room for it.
    let s = named(&[("guarded_set", None), ("reset", Some("local policy: deny"))]);
    assert_eq!(s.rows().name_column(40, true), 32 - 32 / 3);
}
