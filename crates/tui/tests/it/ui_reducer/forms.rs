//! The elicitation form in the reducer: every field type of the spec's
//! restricted schema, the focus on the first field, Enter from any field, and
//! every problem shown on its field (nothing is sent until it is right).

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use mcp_harness::protocol::{
    BackendEvent, Choice, Command, ElicitAnswer, ElicitationView, FieldKind, FieldProblem,
    FieldView, TextFormat,
};
use mcp_harness::ui::msg::Effect;
use mcp_harness::ui::state::{AppState, FieldValue};
use mcp_harness::ui::update::update;
use serde_json::{Value, json};

use super::{backend, key, typed};

fn field(name: &str, kind: FieldKind, required: bool, default: Option<Value>) -> FieldView {
    FieldView {
        name: name.into(),
        title: None,
        description: None,
        kind,
        required,
        default,
    }
}

fn titled(pairs: &[(&str, &str)]) -> Vec<Choice> {
    pairs
        .iter()
        .map(|(v, t)| Choice {
            value: (*v).into(),
            title: Some((*t).into()),
        })
        .collect()
}

/// Every field type, in a deliberately unalphabetical order.
pub fn every_field(id: u64) -> ElicitationView {
    ElicitationView {
        id,
        alias: "demo_alpha".into(),
        during: None,
        may_be: Vec::new(),
        message: "Tell us about yourself.".into(),
        fields: vec![
            field(
                "name",
                FieldKind::Text {
                    format: None,
                    min_length: Some(2),
                    max_length: Some(20),
                },
                true,
                None,
            ),
            field(
                "email",
                FieldKind::Text {
                    format: Some(TextFormat::Email),
                    min_length: None,
                    max_length: None,
                },
                false,
                None,
            ),
            field(
                "age",
                FieldKind::Integer {
                    minimum: Some(0),
                    maximum: Some(150),
                },
                false,
                Some(json!(30)),
            ),
            field(
                "score",
                FieldKind::Number {
                    minimum: None,
                    maximum: Some(10.0),
                },
                false,
                None,
            ),
            field(
                "plan",
                FieldKind::Choice(titled(&[("basic", "Basic plan"), ("pro", "Pro plan")])),
                true,
                None,
            ),
            field(
                "extras",
                FieldKind::Choices {
                    options: titled(&[("milk", "Milk"), ("sugar", "Sugar"), ("lemon", "Lemon")]),
                    min: Some(1),
                    max: Some(2),
                },
                true,
                Some(json!(["sugar"])),
            ),
            field("agree", FieldKind::Boolean, true, None),
        ],
    }
}

fn open(id: u64) -> AppState {
    let mut s = AppState::new(Instant::now());
    backend(&mut s, BackendEvent::ElicitationRequested(every_field(id)));
    s.now += Duration::from_secs(2);
    s
}

#[test]
fn every_field_type_is_filled_from_its_default_and_the_first_has_the_focus() {
    let s = open(1);
    let form = &s.elicitations[0];
    assert_eq!(form.selected, 0, "the first field has the focus");
    assert_eq!(
        form.values,
        [
            FieldValue::Text(String::new()),
            FieldValue::Text(String::new()),
            FieldValue::Text("30".into()),
            FieldValue::Text(String::new()),
            FieldValue::One(None),
            FieldValue::Many {
                chosen: vec![false, true, false],
                cursor: 0
            },
            FieldValue::Bool(Some(false)),
        ]
    );
}

#[test]
fn problems_show_on_their_fields_and_enter_sends_from_any_field_once_right() {
    let mut s = open(2);
    // Enter on the first field: nothing sent, each problem on its field.
    typed(&mut s, "A");
    assert!(update(&mut s, key(KeyCode::Enter)).is_empty());
    let problems = s.elicitations[0].problems.clone();
    assert_eq!(problems[0].as_deref(), Some("at least 2 characters"));
    assert_eq!(problems[4].as_deref(), Some("required"), "plan");
    assert_eq!(problems[1], None, "an empty optional email is fine");
    assert_eq!(
        s.elicitations[0].selected, 0,
        "the focus on the first problem"
    );
    typed(&mut s, "da");
    // Down to the email: a malformed one is refused with its format hint.
    update(&mut s, key(KeyCode::Down));
    typed(&mut s, "ada-at-example");
    update(&mut s, key(KeyCode::Down));
    update(&mut s, key(KeyCode::Backspace));
    update(&mut s, key(KeyCode::Backspace));
    typed(&mut s, "151");
    assert!(update(&mut s, key(KeyCode::Enter)).is_empty());
    let problems = s.elicitations[0].problems.clone();
    assert!(
        problems[1].as_deref().unwrap().contains("email"),
        "{problems:?}"
    );
    assert_eq!(problems[2].as_deref(), Some("at most 150"));
    // Fix them: the email, the age, a plan (→ picks Basic, → Pro), two extras.
    s.elicitations[0].selected = 1;
    for _ in 0.."ada-at-example".len() {
        update(&mut s, key(KeyCode::Backspace));
    }
    typed(&mut s, "ada@example.org");
    update(&mut s, key(KeyCode::Down));
    update(&mut s, key(KeyCode::Backspace));
    update(&mut s, key(KeyCode::Down));
    update(&mut s, key(KeyCode::Down));
    update(&mut s, key(KeyCode::Right));
    update(&mut s, key(KeyCode::Right));
    update(&mut s, key(KeyCode::Down));
    // The cursor on milk: pick it; then lemon too — three is over the max.
    update(&mut s, key(KeyCode::Char(' ')));
    update(&mut s, key(KeyCode::Right));
    update(&mut s, key(KeyCode::Right));
    update(&mut s, key(KeyCode::Char(' ')));
    assert!(update(&mut s, key(KeyCode::Enter)).is_empty());
    assert_eq!(
        s.elicitations[0].problems[5].as_deref(),
        Some("choose at most 2")
    );
    update(&mut s, key(KeyCode::Char(' ')));
    update(&mut s, key(KeyCode::Down));
    update(&mut s, key(KeyCode::Char(' ')));
    // Enter from the checkbox, the last field: sent, in the form's order.
    let effects = update(&mut s, key(KeyCode::Enter));
    let expected = json!({
        "name": "Ada", "email": "ada@example.org", "age": 15, "plan": "pro",
        "extras": ["milk", "sugar"], "agree": true
    });
    let Value::Object(content) = expected else {
        unreachable!()
    };
    assert_eq!(
        effects,
        vec![Effect::Send(Command::Elicitation {
            id: 2,
            answer: ElicitAnswer::Accept(content)
        })]
    );
}

#[test]
fn a_refusal_from_the_backend_goes_on_its_field_and_the_form_stays() {
    let mut s = open(3);
    typed(&mut s, "Ada");
    s.elicitations[0].values[4] = FieldValue::One(Some(0));
    s.elicitations[0].values[6] = FieldValue::Bool(Some(true));
    let effects = update(&mut s, key(KeyCode::Enter));
    assert_eq!(effects.len(), 1);
    assert!(s.elicitations[0].sent, "waiting for the backend's word");
    backend(
        &mut s,
        BackendEvent::ElicitationInvalid {
            id: 3,
            problems: vec![FieldProblem {
                field: Some("plan".into()),
                message: "\"basic\" is not one of the server's values".into(),
            }],
        },
    );
    let form = &s.elicitations[0];
    assert!(!form.sent);
    assert_eq!(form.selected, 4, "the focus on the refused field");
    assert!(form.problems[4].as_deref().unwrap().contains("not one of"));
    assert!(
        form.problem
            .as_deref()
            .unwrap()
            .contains("nothing was sent")
    );
}
