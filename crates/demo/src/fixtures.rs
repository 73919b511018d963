//! The test fixtures of `demo-server`, built only with the `test-fixtures`
//! feature (which `cargo test` and `cargo bench` turn on through the crate's
//! dev-dependency on itself): fault injection, request recording, generated
//! and awkward tool sets, the protocol-breaking `hostile` server and the
//! `sleeper` grandchild. The binary people install has none of them: its demo
//! servers are the plain alpha and beta.

use std::path::PathBuf;

use anyhow::Context;

use super::faults::{self, Fault, Faults};
use super::hostile::{self, Scenario};
use super::kind::Flavor;
use super::oauth_gate::Gate;
use super::record::Recorder;
use super::toolsets::{self, Toolset};
use super::{Setup, init_log, log};

/// The hidden, test-only flags of `demo-server`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct FixtureArgs {
    /// Test only: inject a fault (repeatable).
    #[arg(long = "fault", value_name = "SPEC", hide = true, value_parser = Fault::parse)]
    pub faults: Vec<Fault>,

    /// Test only: append every tools/call and notifications/cancelled received to FILE (JSON lines).
    #[arg(long, value_name = "FILE", hide = true)]
    pub record: Option<PathBuf>,

    /// Test only: ignored; marks the command line so tests can find leaked processes.
    #[arg(long, value_name = "TEXT", hide = true)]
    pub tag: Option<String>,

    /// Test only: publish N generated tools instead of the normal ones.
    #[arg(long, value_name = "N", hide = true, conflicts_with = "toolset")]
    pub tools: Option<usize>,

    /// Test only: paginate tools/list, N tools per page.
    #[arg(long, value_name = "N", hide = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub page_size: Option<u64>,

    /// Test only: with --tools, give every generated tool a different schema.
    #[arg(long, hide = true, requires = "tools")]
    pub distinct_schemas: bool,

    /// Test only: publish a named, deliberately awkward tool set.
    #[arg(long, value_enum, value_name = "NAME", hide = true)]
    pub toolset: Option<Toolset>,

    /// Test only: the protocol violation `hostile` commits.
    #[arg(long, value_enum, value_name = "NAME", hide = true)]
    pub scenario: Option<Scenario>,

    /// Test only: `sleeper` calls setsid() first, escaping its parent's process group.
    #[arg(long, hide = true)]
    pub setsid: bool,

    /// Test only (with --http): require OAuth bearer tokens from the authorization
    /// server URL (protected-resource metadata names it).
    #[arg(long, value_name = "URL", hide = true, requires = "http")]
    pub oauth_issuer: Option<String>,

    /// Test only: the prefix of the tokens the OAuth gate accepts.
    #[arg(long, value_name = "PREFIX", hide = true, default_value = "tok-")]
    pub accept_token: String,

    /// Test only: the `scope` the OAuth gate's challenge names.
    #[arg(long, value_name = "SCOPE", hide = true)]
    pub oauth_scope: Option<String>,

    /// Test only: a `resource` the metadata claims instead of this server.
    #[arg(long, value_name = "URL", hide = true)]
    pub oauth_resource: Option<String>,

    /// Test only: while FILE exists, the OAuth gate refuses every token.
    #[arg(long, value_name = "FILE", hide = true)]
    pub oauth_revoked_file: Option<PathBuf>,

    /// Test only: every call of TOOL gets a 403 `insufficient_scope` step-up challenge.
    #[arg(long, value_name = "TOOL", hide = true)]
    pub oauth_step_up: Option<String>,
}

/// An alpha or beta server as the flags ask: faults, recorder, tool set, pages.
pub(super) fn setup(flavor: Flavor, args: &FixtureArgs) -> anyhow::Result<Setup> {
    let faults = Faults::from_specs(&args.faults);
    init_log(flavor.server_name(), faults.escapes);
    let tool_set = toolsets::build(
        flavor,
        args.toolset,
        args.tools,
        args.distinct_schemas,
        faults.escapes,
        faults.hidden_text,
    );
    let recorder = match &args.record {
        Some(path) => Some(Recorder::open(path)?),
        None => None,
    };
    let page_size = match args.page_size {
        Some(n) => Some(usize::try_from(n).context("--page-size is too large")?),
        None => None,
    };
    faults::start_background(&faults, args.tag.as_deref())?;
    let gate = args.oauth_issuer.clone().map(|issuer| Gate {
        issuer,
        accept: args.accept_token.clone(),
        scope: args.oauth_scope.clone(),
        resource: args.oauth_resource.clone(),
        revoked_file: args.oauth_revoked_file.clone(),
        step_up_tool: args.oauth_step_up.clone(),
    });
    Ok(Setup {
        tool_set,
        page_size,
        faults,
        recorder,
        gate,
    })
}

/// `demo-server hostile --scenario NAME`: hand-written JSON-RPC that breaks the protocol.
pub(super) async fn hostile(args: &FixtureArgs, http: bool) -> anyhow::Result<()> {
    init_log("demo-hostile", false);
    anyhow::ensure!(!http, "`hostile` only speaks stdio");
    let scenario = args
        .scenario
        .context("`demo-server hostile` needs --scenario")?;
    hostile::run(scenario, Faults::from_specs(&args.faults).escapes).await
}

/// A grandchild fixture: does nothing until killed. With `--setsid` it leaves its parent's
/// process group first, like a daemonizing helper would.
pub(super) async fn sleeper(setsid: bool) -> anyhow::Result<()> {
    init_log("demo-sleeper", false);
    if setsid {
        nix::unistd::setsid().context("setsid")?;
    }
    log(format_args!("sleeping (pid {})", std::process::id()));
    std::future::pending::<()>().await;
    Ok(())
}
