//! The demo MCP servers (placeholder until the real module lands).

/// Arguments of `mcp-harness demo-server`.
#[derive(Debug, Clone, clap::Args)]
pub struct DemoServerArgs {
    /// alpha or beta
    pub name: String,
}

pub async fn run(_args: DemoServerArgs) -> anyhow::Result<()> {
    anyhow::bail!("not built yet")
}
