//! Flow control in the reducer (issue 24): the backend's taint is the status
//! bar's, and `c` in the rules view asks the backend to clear it — the only
//! way it is cleared (the model has none).

use std::time::Instant;

use crossterm::event::KeyCode;
use mcp_harness::protocol::{BackendEvent, Command, TaintView};
use mcp_harness::ui::msg::Effect;
use mcp_harness::ui::state::{AppState, Overlay};
use mcp_harness::ui::update::update;

use super::{backend, key};
use crate::fixtures::{servers, views};

#[test]
fn the_taint_follows_the_backend_and_c_in_the_rules_view_asks_to_clear_it() {
    let mut s = AppState::new(Instant::now());
    update(&mut s, views(servers()));
    assert!(s.taint.is_clean());
    let both = TaintView {
        untrusted: true,
        private: true,
    };
    backend(&mut s, BackendEvent::Taint(both));
    assert_eq!(s.taint, both);
    assert_eq!(s.taint.label(), Some("untrusted+private"));
    // `c` outside the rules view clears nothing.
    let effects = update(&mut s, key(KeyCode::Char('c')));
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, Effect::Send(Command::ClearTaint))),
        "{effects:?}"
    );
    update(&mut s, key(KeyCode::F(2)));
    assert!(matches!(s.overlay, Some(Overlay::Rules { .. })));
    let effects = update(&mut s, key(KeyCode::Char('c')));
    assert_eq!(effects, vec![Effect::Send(Command::ClearTaint)]);
    // The state changes only when the backend says it did.
    assert_eq!(s.taint, both);
    backend(&mut s, BackendEvent::Taint(TaintView::default()));
    assert!(s.taint.is_clean());
    assert_eq!(s.taint.label(), None);
}

#[test]
fn a_clients_taint_is_kept_by_client_and_x_on_its_row_asks_to_clear_it() {
    let mut s = AppState::new(Instant::now());
    update(&mut s, views(servers()));
    let private = TaintView {
        untrusted: false,
        private: true,
    };
    backend(
        &mut s,
        BackendEvent::ClientTaint {
            client: "ide".into(),
            taint: private,
        },
    );
    backend(
        &mut s,
        BackendEvent::ClientTaint {
            client: "ci".into(),
            taint: private,
        },
    );
    assert!(s.taint.is_clean(), "the Lead's session is another");
    assert_eq!(s.client_taints.len(), 2);
    update(&mut s, key(KeyCode::F(2)));
    // No grants: the first row is ci's (by name), then ide's.
    update(&mut s, key(KeyCode::Down));
    let effects = update(&mut s, key(KeyCode::Char('x')));
    assert_eq!(
        effects,
        vec![Effect::Send(Command::ClearClientTaint("ide".into()))]
    );
    // `c` is still the Lead's.
    let effects = update(&mut s, key(KeyCode::Char('c')));
    assert_eq!(effects, vec![Effect::Send(Command::ClearTaint)]);
    // Cleared when the backend says so; the other client keeps its taint.
    backend(
        &mut s,
        BackendEvent::ClientTaint {
            client: "ide".into(),
            taint: TaintView::default(),
        },
    );
    assert_eq!(s.client_taints.keys().collect::<Vec<_>>(), ["ci"]);
}
