//! The operator's rules of this session: ending a grant, writing one into the
//! config file as `allow` (after the operator confirmed, in the UI), and
//! explaining which rule decided a call.

use std::collections::BTreeMap;

use super::Backend;
use super::records::CallRecord;
use crate::config::ConfigSource;
use crate::mcp::{Effect, PinMode, ToolPolicy};
use crate::protocol::{BackendEvent, Decided, GrantId};

impl Backend {
    pub(super) fn explain(&mut self, id: &crate::mcp::CallId) {
        let grants = self.approvals.grants();
        let record = self.records.get(id);
        let pin = record.and_then(|r| self.pin_line(r));
        let view = super::explain::explain(id, record, &self.config, &grants, pin);
        self.send(BackendEvent::Explained(view));
    }

    /// What the pins said of a call's tool when it was decided: held by one,
    /// matched one (and where the lock file is), or not checked. By the call's
    /// own decision, not the alias's state now: a call that ran before its
    /// server's definitions changed matched its pin, whatever came after.
    fn pin_line(&self, record: &CallRecord) -> Option<String> {
        let alias = record.alias.as_deref()?;
        if record.decided == Some(Decided::HeldByPin) {
            return Some(format!(
                "held: a tool of `{alias}` no longer matched its pin (definition_changed); the \
                 connection was revoked and nothing ran — `mcp-harness pin {alias}` accepts the \
                 change"
            ));
        }
        let remote = record.remote_name.as_deref()?;
        let spec = self.hub.spec(alias).ok()?;
        if spec.pin == PinMode::Off {
            return Some(format!("not checked: [servers.{alias}] pin = \"off\""));
        }
        let book = self.config.pin_book();
        let lock = book.load().ok()?;
        Some(match lock.alias(alias).and_then(|pins| pins.get(remote)) {
            Some(pin) => format!(
                "its definition matched its pin, sha256 {}… in {}",
                pin.sha256.short(),
                book.location()
            ),
            None => format!("no pin for it in {}", book.location()),
        })
    }

    pub(super) fn revoke_grant(&mut self, id: GrantId) {
        let text = match self.approvals.revoke(id) {
            Some(grant) => format!(
                "revoked grant #{id}: `{}` asks again from its next call",
                grant.tool
            ),
            None => format!("there is no grant #{id} (its connection may have ended)"),
        };
        self.tell(text);
    }

    /// Writes `allow` for the grant's tool into the config file, keeping its
    /// comments. The running connection keeps its policy (the grant covers it);
    /// the next connect reads the new one.
    pub(super) fn save_grant(&mut self, id: GrantId) {
        let text = match (self.approvals.grant_view(id), &self.config.source) {
            (None, _) => format!("there is no grant #{id} (its connection may have ended)"),
            (Some(_), ConfigSource::Embedded) => format!(
                "the embedded default config cannot be edited: create {} (start from config.example.toml)",
                crate::config::default_path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "a config file".into())
            ),
            (Some(grant), ConfigSource::File(path)) => {
                let (alias, tool) = match (&grant.alias, &grant.remote_name) {
                    (Some(alias), Some(remote)) => (Some(alias.as_str()), remote.as_str()),
                    _ => (None, grant.tool.as_str()),
                };
                match crate::config::edit::set_effect(path, alias, tool, Effect::Allow) {
                    Err(e) => e.to_string(),
                    Ok(()) => {
                        match alias {
                            Some(alias) => self.allow_from_next_connect(alias, tool),
                            // As the file says now (re-reading it is no news).
                            None => {
                                self.config
                                    .agent
                                    .builtin_tools
                                    .insert(tool.to_string(), Effect::Allow);
                            }
                        }
                        let table = alias.map_or("[builtin_tools]".to_string(), |a| {
                            format!("[servers.{a}.tools]")
                        });
                        format!(
                            "wrote {tool} = \"allow\" under {table} in {}; it applies from the next {} \
                             (the session grant covers it until then)",
                            path.display(),
                            if alias.is_some() {
                                "connect"
                            } else {
                                "session"
                            }
                        )
                    }
                }
            }
        };
        self.tell(text);
    }

    /// The hub's copy of the alias's policy, with `tool` allowed.
    fn allow_from_next_connect(&self, alias: &str, tool: &str) {
        if let Ok(spec) = self.hub.spec(alias) {
            let mut effects: BTreeMap<String, Effect> = spec
                .policy
                .entries()
                .map(|(name, effect)| (name.to_string(), effect))
                .collect();
            effects.insert(tool.to_string(), Effect::Allow);
            let _ = self.hub.change_policy(alias, ToolPolicy::new(effects));
        }
    }
}
