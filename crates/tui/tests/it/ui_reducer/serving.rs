//! The control room's gateway in the views: the state follows what the
//! backend says (where it serves, how many client sessions are live), and
//! forgets it when the gateway stops.

use std::sync::Arc;
use std::time::Instant;

use mcp_harness::protocol::{ServingView, Views};
use mcp_harness::ui::msg::Msg;
use mcp_harness::ui::state::AppState;
use mcp_harness::ui::update::update;

use crate::fixtures::servers;

fn views(serving: Option<ServingView>) -> Msg {
    Msg::Views(Views {
        servers: Arc::from(servers()),
        snapshot: 4,
        grants: Arc::from(Vec::new()),
        serving,
    })
}

#[test]
fn the_state_holds_where_the_gateway_serves_and_its_live_sessions() {
    let mut s = AppState::new(Instant::now());
    assert_eq!(s.serving, None, "not serving until the backend says so");
    let at = |sessions| ServingView {
        addr: "127.0.0.1:8765".parse().unwrap(),
        sessions,
    };
    update(&mut s, views(Some(at(0))));
    assert_eq!(s.serving, Some(at(0)));
    update(&mut s, views(Some(at(2))));
    assert_eq!(s.serving.map(|v| v.sessions), Some(2));
    // The gateway stopped (or never started): the state says nothing.
    update(&mut s, views(None));
    assert_eq!(s.serving, None);
}
