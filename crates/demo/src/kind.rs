//! What a demo server is, as its command line picks it: which one (its name
//! and its data) and which protocol revisions it speaks. Below the handler,
//! the tool sets and the service, which all read it.

use std::collections::BTreeMap;

/// Which demo server: same tools, different data, so tests can tell who answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Alpha,
    Beta,
}

impl Flavor {
    pub fn server_name(self) -> &'static str {
        match self {
            Flavor::Alpha => "demo-alpha",
            Flavor::Beta => "demo-beta",
        }
    }

    pub fn domain(self) -> &'static str {
        match self {
            Flavor::Alpha => "the colour of a fruit",
            Flavor::Beta => "the country of a city",
        }
    }

    pub(super) fn initial_table(self) -> BTreeMap<String, String> {
        let pairs: &[(&str, &str)] = match self {
            Flavor::Alpha => &[
                ("apple", "red"),
                ("banana", "yellow"),
                ("cherry", "dark red"),
                ("lime", "green"),
                ("plum", "purple"),
            ],
            Flavor::Beta => &[
                ("paris", "France"),
                ("lima", "Peru"),
                ("oslo", "Norway"),
                ("kyoto", "Japan"),
                ("quito", "Ecuador"),
            ],
        };
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }
}

/// `--protocol`: which revisions a demo server speaks. A server limited to the
/// handshake revisions answers `server/discover` with -32022 and its list, as
/// an rmcp server configured that way does.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DemoProtocol {
    /// 2026-07-28 and every handshake revision (what rmcp servers do).
    #[default]
    #[value(name = "both")]
    Both,
    /// Only 2026-07-28: `initialize` is refused.
    #[value(name = "2026-07-28")]
    Stateless,
    /// Only the handshake revisions: `server/discover` is an unknown method,
    /// as on servers older than 2026-07-28.
    #[value(name = "2025-11-25")]
    Handshake,
}
