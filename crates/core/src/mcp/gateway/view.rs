//! What one outside client is offered: the exposed tools of the aliases its
//! profile sees, under their outside names (`ALIAS__TOOL`, or bare), with the
//! gateway's own naming rules on top of the exposure pipeline's. Worked out
//! from one registry snapshot, so the list a client gets and the call it makes
//! resolve against the same tool set.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use super::super::events::ConnectionId;
use super::super::names::{EXPOSED_PREFIX, ServerAlias};
use super::super::registry::{ExposedTool, Snapshot};
use super::settings::{ClientProfile, GatewaySettings, Naming};

/// One client's tool set, from one snapshot.
#[derive(Debug, Default)]
pub struct View {
    /// Outside name → the exposed tool it stands for.
    pub tools: BTreeMap<String, Arc<ExposedTool>>,
    /// Aliases this client would see but whose tools break the gateway's
    /// naming rules or its `max_tools` (why, in the harness's words).
    pub rejected: BTreeMap<ServerAlias, String>,
}

/// Each client's view of the newest snapshot, worked out once per snapshot
/// version rather than per call: a view is a pass over every exposed tool,
/// which a call to one of a thousand tools should not pay.
#[derive(Default)]
pub struct Views(Mutex<HashMap<String, (u64, Arc<View>)>>);

impl Views {
    /// `client`'s view of `snapshot`, from the cache when it was worked out
    /// for that version.
    pub fn of(
        &self,
        snapshot: &Snapshot,
        settings: &GatewaySettings,
        client: &ClientProfile,
    ) -> Arc<View> {
        let version = snapshot.version();
        let cached = self
            .lock()
            .get(&client.name)
            .and_then(|(v, view)| (*v == version).then(|| Arc::clone(view)));
        if let Some(view) = cached {
            return view;
        }
        // Worked out outside the lock: other clients' calls do not wait on it.
        let view = Arc::new(View::of(snapshot, settings, client));
        let mut views = self.lock();
        // A racing call may have cached a newer version meanwhile: keep it.
        if views.get(&client.name).is_none_or(|(v, _)| *v < version) {
            views.insert(client.name.clone(), (version, Arc::clone(&view)));
        }
        view
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, Arc<View>)>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What a client's tool set is made of, to tell whether it changed: the same
/// names bound to the same definitions (a re-list keeps an unchanged tool's
/// `Arc`, and replaces a changed one).
#[derive(Debug, PartialEq, Eq)]
pub struct Signature {
    tools: Vec<(String, ConnectionId, usize)>,
    /// The aliases not offered, and why (for the log).
    pub rejected: BTreeMap<ServerAlias, String>,
}

impl View {
    fn of(snapshot: &Snapshot, settings: &GatewaySettings, client: &ClientProfile) -> Self {
        let mut by_alias: BTreeMap<&ServerAlias, Vec<&Arc<ExposedTool>>> = BTreeMap::new();
        for tool in snapshot.tools() {
            if client.sees(&tool.alias) {
                by_alias.entry(&tool.alias).or_default().push(tool);
            }
        }
        let mut view = View::default();
        // Aliases in name order: which one a cap leaves out does not depend
        // on which connected first.
        for (alias, tools) in by_alias {
            let named =
                outside_names(alias, &tools, settings, &view.tools).and_then(|named| match client
                    .max_tools
                {
                    Some(max) if view.tools.len() + named.len() > max => Err(NotOffered::OverCap {
                        count: named.len(),
                        client: client.name.clone(),
                        offered: view.tools.len(),
                        max,
                    }),
                    _ => Ok(named),
                });
            match named {
                Ok(named) => view.tools.extend(named),
                Err(why) => {
                    view.rejected.insert(alias.clone(), why.to_string());
                }
            }
        }
        view
    }

    pub fn signature(&self) -> Signature {
        Signature {
            tools: self
                .tools
                .iter()
                .map(|(name, tool)| {
                    (
                        name.clone(),
                        tool.connection_id(),
                        Arc::as_ptr(tool) as usize,
                    )
                })
                .collect(),
            rejected: self.rejected.clone(),
        }
    }
}

/// Why an alias's tools are not offered to a client (the whole
/// alias is held back).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum NotOffered {
    #[error("the outside name `{0}` is not [A-Za-z0-9_-]")]
    Invalid(String),
    #[error("the outside name `{name}` is {len} characters, over [serve] max_name_len = {max}")]
    TooLong {
        name: String,
        len: usize,
        max: usize,
    },
    #[error("the outside name `{0}` is taken by another alias's tool ([serve] names = \"bare\")")]
    Taken(String),
    /// Not a name: the client's cap. Refused whole, never cut to fit.
    #[error(
        "its {count} tools would bring client `{client}` over its max_tools = {max} ({offered} offered already)"
    )]
    OverCap {
        count: usize,
        client: String,
        offered: usize,
        max: usize,
    },
}

/// An alias's tools under their outside names, or why the whole alias is not
/// offered (all or nothing, as a connection is: rule 3).
fn outside_names(
    alias: &ServerAlias,
    tools: &[&Arc<ExposedTool>],
    settings: &GatewaySettings,
    taken: &BTreeMap<String, Arc<ExposedTool>>,
) -> Result<Vec<(String, Arc<ExposedTool>)>, NotOffered> {
    let own_prefix = format!("{EXPOSED_PREFIX}{}__", alias.normalized());
    let mut named: Vec<(String, Arc<ExposedTool>)> = Vec::with_capacity(tools.len());
    let mut seen: HashSet<String> = HashSet::with_capacity(tools.len());
    for tool in tools {
        let name = match settings.names {
            Naming::Prefixed => tool.name.strip_prefix(EXPOSED_PREFIX),
            Naming::Bare => tool.name.strip_prefix(&own_prefix),
        }
        .unwrap_or(&tool.name)
        .to_string();
        if !valid_name(&name) {
            return Err(NotOffered::Invalid(name));
        }
        if name.len() > settings.max_name_len {
            return Err(NotOffered::TooLong {
                len: name.len(),
                name,
                max: settings.max_name_len,
            });
        }
        if taken.contains_key(&name) || !seen.insert(name.clone()) {
            return Err(NotOffered::Taken(name));
        }
        named.push((name, Arc::clone(tool)));
    }
    Ok(named)
}

/// `[A-Za-z0-9_-]`, not empty: what every host accepts as a tool name.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_names_are_the_portable_charset_only() {
        assert!(valid_name("demo_alpha__lookup"));
        assert!(valid_name("a-b"));
        assert!(!valid_name(""));
        assert!(!valid_name("a.b"));
        assert!(!valid_name("a b"));
        assert!(!valid_name("ünïcode"));
    }

    #[test]
    fn a_clients_view_is_worked_out_once_per_snapshot_version() {
        let (views, settings) = (Views::default(), GatewaySettings::default());
        let client = ClientProfile {
            name: "c".into(),
            token_env: None,
            servers: None,
            max_tools: None,
        };
        let (v1, v2) = (Snapshot::empty_at(1), Snapshot::empty_at(2));
        let first = views.of(&v1, &settings, &client);
        assert!(Arc::ptr_eq(&first, &views.of(&v1, &settings, &client)));
        let newer = views.of(&v2, &settings, &client);
        assert!(!Arc::ptr_eq(&first, &newer), "a new version, a new view");
        // A call still holding the older snapshot gets its own view of it
        // and leaves the newer one cached.
        assert!(!Arc::ptr_eq(&newer, &views.of(&v1, &settings, &client)));
        assert!(Arc::ptr_eq(&newer, &views.of(&v2, &settings, &client)));
    }
}
