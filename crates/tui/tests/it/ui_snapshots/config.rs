//! Snapshots of the session without a model (status bar and the first notice,
//! then a refused message) at 80×24, 120×40 and a narrow 60×20.

use crossterm::event::KeyCode;
use mcp_harness::ui::msg::Msg;
use mcp_harness::ui::state::AppState;
use mcp_harness::ui::update::update;

use super::snapshot_at;
use crate::ui_reducer::model::without_a_model;

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (60, 20)];

fn typed(s: &mut AppState, text: &str) {
    for c in text.chars() {
        update(
            s,
            Msg::Key(crossterm::event::KeyEvent::from(KeyCode::Char(c))),
        );
    }
}

#[test]
fn no_model() {
    let mut s = without_a_model();
    snapshot_at("no_model", &mut s, &SIZES);
    typed(&mut s, "hello");
    update(
        &mut s,
        Msg::Key(crossterm::event::KeyEvent::from(KeyCode::Enter)),
    );
    snapshot_at("no_model_refused", &mut s, &SIZES);
}
