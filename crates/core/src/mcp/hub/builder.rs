//! How a hub is made: what every hub needs as arguments, what it may be given
//! as options, all fixed for its life. Run-time changes (a policy re-read from
//! the config, the servers reconfigured) are methods of the hub itself.

use std::path::PathBuf;

use super::*;
use crate::mcp::auth::UserAgent;

/// A [`Hub`] still being put together: [`Hub::builder`] … [`HubBuilder::build`].
#[must_use = "a builder does nothing until `build`"]
pub struct HubBuilder {
    specs: Vec<ServerSpec>,
    limits: Limits,
    vars: Vars,
    events: EventSink,
    reserved: Vec<String>,
    elicitor: Arc<dyn Elicitor>,
    results: Option<PathBuf>,
    pins: PinBook,
    flows: super::super::flows::FlowSettings,
    auth: AuthContext,
}

impl Hub {
    /// A hub over the configured servers (`specs`), reporting to `events`.
    /// Everything else has a default; see [`HubBuilder`]'s methods.
    pub fn builder(
        specs: Vec<ServerSpec>,
        limits: Limits,
        vars: Vars,
        events: EventSink,
    ) -> HubBuilder {
        HubBuilder {
            specs,
            limits,
            vars,
            events,
            reserved: Vec::new(),
            elicitor: Arc::new(DecliningElicitor),
            results: None,
            pins: PinBook::in_memory(),
            flows: Default::default(),
            auth: AuthContext::new(Arc::new(Store::default_location())),
        }
    }
}

impl HubBuilder {
    /// The built-in tool names no server may take (default: none).
    pub fn reserved(mut self, names: Vec<String>) -> Self {
        self.reserved = names;
        self
    }

    /// Who answers servers' elicitation requests (default:
    /// [`DecliningElicitor`]). The TUI installs one that shows the operator a
    /// form. The advertised capabilities do not depend on it.
    pub fn elicitor(mut self, elicitor: Arc<dyn Elicitor>) -> Self {
        self.elicitor = elicitor;
        self
    }

    /// Where whole results over `max_result_bytes` are kept (the session's
    /// `results/`). Without one, such results are cut and the rest is lost,
    /// which the notice says.
    pub fn results_dir(mut self, dir: PathBuf) -> Self {
        self.results = Some(dir);
        self
    }

    /// `[flows]`: what a sink call in a tainted session meets (default:
    /// the trifecta asks the operator).
    pub fn flows(mut self, settings: super::super::flows::FlowSettings) -> Self {
        self.flows = settings;
        self
    }

    /// Where pins are kept (default: memory). The CLI and the session keep
    /// them in the lock file beside the config.
    pub fn pin_book(mut self, book: PinBook) -> Self {
        self.pins = book;
        self
    }

    /// Where OAuth tokens are kept (default: the data dir's `oauth/tokens.json`).
    pub fn token_store(mut self, store: Arc<Store>) -> Self {
        self.auth.store = store;
        self
    }

    /// Who takes sign-ins to a person (the TUI's window, the `login` command's
    /// browser) or performs them unattended (the conformance client). Without
    /// one, a server that needs a sign-in fails with `auth_required`.
    pub fn sign_in_agent(mut self, agent: Arc<dyn UserAgent>) -> Self {
        self.auth.agent = Some(agent);
        self
    }

    pub fn build(self) -> Hub {
        super::super::rules_warm::start();
        let slots = self
            .specs
            .iter()
            .map(|s| {
                (
                    s.alias.clone(),
                    Slot {
                        state: AliasState::Disconnected,
                        attempt: None,
                        connection: None,
                        last_report: None,
                    },
                )
            })
            .collect();
        Hub {
            inner: Arc::new(Inner {
                specs: Mutex::new(
                    self.specs
                        .into_iter()
                        .map(|s| (s.alias.clone(), s))
                        .collect(),
                ),
                limits: self.limits,
                vars: self.vars,
                registry: Registry::new(self.reserved, self.events.clone()),
                events: self.events,
                elicitor: self.elicitor,
                taps: Default::default(),
                results: self.results,
                eras: Mutex::new(BTreeMap::new()),
                pins: Arc::new(self.pins),
                flows: super::super::flows::Flows::new(self.flows),
                auth: self.auth,
                state: Mutex::new(State {
                    slots,
                    ..State::default()
                }),
            }),
        }
    }
}
