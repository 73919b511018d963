//! The arguments editor of a hand-made call: a real text editor (the cursor
//! moves), prefilled from the schema and validated live.

use std::time::Instant;

use crossterm::event::KeyCode;
use mcp_harness::protocol::Command;
use mcp_harness::ui::msg::{Effect, Msg};
use mcp_harness::ui::state::{AppState, CallEditor, Focus, Overlay};
use mcp_harness::ui::update::update;

use super::{ctrl, key, typed};
use crate::fixtures::servers;

fn editor(s: &AppState) -> &CallEditor {
    match &s.overlay {
        Some(Overlay::CallTool(editor)) => editor,
        other => panic!("no editor: {other:?}"),
    }
}

#[test]
fn a_hand_made_call_is_prefilled_edited_anywhere_and_validated_live() {
    let mut s = AppState::new(Instant::now());
    update(&mut s, crate::fixtures::views(servers()));
    s.focus = Focus::Registry;
    update(&mut s, key(KeyCode::Char('x')));
    assert_eq!(editor(&s).tool, "mcp__demo_alpha__lookup");
    assert_eq!(editor(&s).text(), "{\n  \"key\": \"\"\n}");
    assert_eq!(editor(&s).problem, None);
    // The cursor starts inside the first empty string: typing fills it.
    typed(&mut s, "apple");
    assert_eq!(editor(&s).text(), "{\n  \"key\": \"apple\"\n}");
    // Left, Home and End move; typing lands where the cursor is.
    for _ in 0..5 {
        update(&mut s, key(KeyCode::Left));
    }
    typed(&mut s, "green ");
    update(&mut s, key(KeyCode::End));
    typed(&mut s, ",");
    assert!(
        editor(&s)
            .problem
            .as_deref()
            .unwrap_or_default()
            .contains("not valid JSON"),
        "{:?}",
        editor(&s)
    );
    assert!(
        update(&mut s, ctrl('s')).is_empty(),
        "invalid arguments are not sent"
    );
    update(&mut s, key(KeyCode::Backspace));
    update(&mut s, key(KeyCode::Home));
    update(&mut s, key(KeyCode::Up));
    update(&mut s, key(KeyCode::End));
    // A pasted line with a CR becomes its own line.
    update(&mut s, Msg::Paste("\r".into()));
    assert_eq!(
        editor(&s).text(),
        "{\n\n  \"key\": \"green apple\"\n}",
        "the editor keeps its lines"
    );
    assert_eq!(editor(&s).problem, None, "{:?}", editor(&s));
    let effects = update(&mut s, ctrl('s'));
    let [Effect::Send(Command::CallTool { name, arguments })] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(name, "mcp__demo_alpha__lookup");
    assert_eq!(arguments, &serde_json::json!({"key": "green apple"}));
}
