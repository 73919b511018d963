//! In-process checks that rmcp's own client can use the demo server (over a duplex pipe), both
//! with the `initialize` handshake and with rmcp's default (handshake-free) protocol revision.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use rmcp::{
    ClientHandler, RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation,
        ProgressNotificationParam, ProtocolVersion,
    },
    service::{NotificationContext, RunningService},
};
use serde_json::json;

use super::{faults::Faults, kind::Flavor, tools::DemoHandler, toolsets};

#[derive(Clone)]
struct Client {
    config: ClientConfig,
    progress: Arc<AtomicUsize>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn on_progress(
        &self,
        _params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.fetch_add(1, Ordering::SeqCst);
    }
}

async fn connect(
    flavor: Flavor,
    page_size: Option<usize>,
    version: Option<ProtocolVersion>,
) -> (RunningService<RoleClient, Client>, Arc<AtomicUsize>) {
    let tool_set = toolsets::build(flavor, None, None, false, false, false);
    let handler = DemoHandler::new(
        flavor,
        tool_set,
        page_size,
        Faults::default(),
        None,
        super::DemoProtocol::Both,
        false,
    );
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(service) = handler.serve(server_io).await {
            let _ = service.waiting().await;
        }
    });
    let mut config = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("test", "0"),
    );
    if let Some(version) = version {
        config = config.with_protocol_version(version);
    }
    let progress = Arc::new(AtomicUsize::new(0));
    let client = Client {
        config,
        progress: progress.clone(),
    };
    let running = client.serve(client_io).await.expect("client connects");
    (running, progress)
}

fn text_of(result: &rmcp::model::CallToolResult) -> String {
    let value = serde_json::to_value(&result.content).expect("content serializes");
    value[0]["text"].as_str().unwrap_or_default().to_owned()
}

fn args(value: serde_json::Value) -> rmcp::model::JsonObject {
    value.as_object().cloned().expect("object literal")
}

#[tokio::test]
async fn rmcp_client_lists_pages_and_calls() {
    let version = Some(ProtocolVersion::LATEST_WITH_INITIALIZE);
    let (client, progress) = connect(Flavor::Beta, Some(2), version).await;
    let info = client.peer_info().expect("peer info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("demo-beta")
    );
    let tools = client.list_all_tools().await.expect("list");
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["lookup", "set", "reset", "fail", "slow"]);

    let lookup = CallToolRequestParams::new("lookup").with_arguments(args(json!({"key": "oslo"})));
    let result = client.call_tool(lookup).await.expect("call");
    assert_eq!(text_of(&result), "oslo = Norway (demo-beta)");

    let fail = client
        .call_tool(CallToolRequestParams::new("fail"))
        .await
        .expect("call");
    assert_eq!(fail.is_error, Some(true));
    assert!(text_of(&fail).contains("sk-demo-0123456789abcdef"));

    let slow = CallToolRequestParams::new("slow")
        .with_arguments(args(json!({"seconds": 0.2, "steps": 3})));
    let result = client.call_tool(slow).await.expect("call");
    assert_eq!(text_of(&result), "done after 0.2s");
    // Progress notifications are handled in their own tasks: give them a moment.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(progress.load(Ordering::SeqCst), 3);
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn rmcp_default_revision_works_too() {
    let (client, _) = connect(Flavor::Alpha, None, None).await;
    let lookup = CallToolRequestParams::new("lookup").with_arguments(args(json!({"key": "apple"})));
    let result = client.call_tool(lookup).await.expect("call");
    assert_eq!(text_of(&result), "apple = red (demo-alpha)");
    client.cancel().await.expect("close");
}
