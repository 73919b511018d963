//! A server's form with every field type of the spec's restricted schema, in
//! the server's order; an answer its schema refuses stays on screen with the
//! problems on their fields — never a silent `cancel`.

use mcp_harness::protocol::{BackendEvent, Command, ElicitAnswer, FieldKind, TextFormat};
use serde_json::json;

use super::{next, start, stop};
use crate::common::TestEnv;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_field_type_in_the_servers_order_and_a_refused_answer_stays() {
    let env = TestEnv::new();
    let server = env.demo("hostile", "hostile", &["--scenario", "elicit-every-field"]);
    let mut handle = start(
        &env,
        &format!("{server}[servers.hostile.tools]\nlookup = \"allow\"\n"),
    );
    super::connect(&mut handle, "hostile").await;
    handle
        .commands
        .send(Command::CallTool {
            name: "mcp__hostile__lookup".into(),
            arguments: json!({"key": "x"}),
        })
        .unwrap();
    let BackendEvent::ElicitationRequested(form) = next(&mut handle, "the form", |e| {
        matches!(e, BackendEvent::ElicitationRequested(_))
    })
    .await
    else {
        unreachable!()
    };
    let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "name", "email", "age", "score", "plan", "size", "extras", "colours", "agree", "when"
        ],
        "the server's order, not the alphabet's"
    );
    let field = |name: &str| form.fields.iter().find(|f| f.name == name).unwrap();
    assert_eq!(field("name").title.as_deref(), Some("Your name"));
    assert!(field("name").required && !field("email").required);
    assert!(matches!(
        field("email").kind,
        FieldKind::Text {
            format: Some(TextFormat::Email),
            ..
        }
    ));
    assert!(matches!(
        field("when").kind,
        FieldKind::Text {
            format: Some(TextFormat::Date),
            ..
        }
    ));
    assert_eq!(
        field("age").kind,
        FieldKind::Integer {
            minimum: Some(0),
            maximum: Some(150)
        }
    );
    assert!(matches!(field("score").kind, FieldKind::Number { maximum: Some(m), .. } if m == 10.0));
    assert!(
        matches!(&field("plan").kind, FieldKind::Choice(o) if o[1].title.as_deref() == Some("Pro plan"))
    );
    assert!(
        matches!(&field("size").kind, FieldKind::Choice(o) if o[2].title.as_deref() == Some("Large"))
    );
    assert!(matches!(
        &field("extras").kind,
        FieldKind::Choices { options, min: Some(1), max: Some(2) } if options.len() == 3
    ));
    assert!(matches!(
        &field("colours").kind,
        FieldKind::Choices { options, .. } if options[0].title.as_deref() == Some("Red")
    ));
    assert_eq!(field("agree").kind, FieldKind::Boolean);
    assert_eq!(field("size").default, Some(json!("m")));
    // An answer the server's schema refuses: the form stays, told why, field
    // by field; nothing goes to the server.
    let bad = json!({"name": "x", "plan": "gold", "agree": true, "extras": []});
    handle
        .commands
        .send(Command::Elicitation {
            id: form.id,
            answer: ElicitAnswer::Accept(bad.as_object().cloned().unwrap()),
        })
        .unwrap();
    let BackendEvent::ElicitationInvalid { id, problems } = next(&mut handle, "the refusal", |e| {
        matches!(
            e,
            BackendEvent::ElicitationInvalid { .. } | BackendEvent::ToolCallFinished(_)
        )
    })
    .await
    else {
        panic!("the refused answer was sent")
    };
    assert_eq!(id, form.id);
    let on = |name: &str| problems.iter().any(|p| p.field.as_deref() == Some(name));
    assert!(on("name") && on("plan") && on("extras"), "{problems:?}");
    // A good one goes through, in full.
    let good = json!({"name": "Ada", "plan": "pro", "agree": true, "extras": ["milk"], "colours": ["g"], "size": "l", "age": 36});
    handle
        .commands
        .send(Command::Elicitation {
            id: form.id,
            answer: ElicitAnswer::Accept(good.as_object().cloned().unwrap()),
        })
        .unwrap();
    next(&mut handle, "the form to leave", |e| {
        *e == BackendEvent::ElicitationWithdrawn(form.id)
    })
    .await;
    let BackendEvent::ToolCallFinished(done) = next(&mut handle, "the result", |e| {
        matches!(e, BackendEvent::ToolCallFinished(_))
    })
    .await
    else {
        unreachable!()
    };
    assert!(done.ok, "{done:?}");
    assert!(
        done.text.contains("elicitation answered: accept")
            && done.text.contains("\"extras\":[\"milk\"]")
            && done.text.contains("\"plan\":\"pro\""),
        "{}",
        done.text
    );
    stop(handle).await;
    env.assert_no_leaks();
}
