//! The config file, re-read while the TUI runs: when the watcher says it was
//! touched, and before the commands that use it (`c`, `r`, a turn, a refresh),
//! so what the operator saved is what a connect uses. The text is compared
//! with what was last read; a text that does not parse or validate is shown
//! with the config error (file, key path) and not applied at all — the config
//! in force stays until the file is valid again. A valid one is applied as far
//! as it can be live (see `docs/src/configuration.md`):
//!
//! - a new alias appears (disconnected); a removed one is disconnected, its
//!   tools revoked at once, and goes away;
//! - a changed alias takes its new spec for its next connect; if it is
//!   connected, a changed policy is applied at once (its tools re-validated
//!   under it, or the connection rejected), and changed launch settings mark it
//!   "config changed: r reconnects" (the server is not restarted under the
//!   operator's feet);
//! - `[model]`, `[limits]`, built-in tools, teammates, telemetry and `lock` are
//!   fixed for the session: the notice says they apply after a restart.

use std::path::PathBuf;

use super::Backend;
use crate::config::{self, Config, ConfigSource};
use crate::mcp::{AliasState, Hub};
use crate::protocol::BackendEvent;

/// The config file as last read.
pub(super) struct ConfigFile {
    path: PathBuf,
    /// The text last read (in force, or refused: see `error`).
    text: Option<String>,
    /// Why the text last read is not in force.
    error: Option<String>,
}

impl ConfigFile {
    /// For a config loaded from a file (`None` for the embedded default). The
    /// text read now is the baseline: the config was parsed from the file
    /// moments ago, and an edit since is noticed at the next check.
    pub(super) fn new(config: &Config) -> Option<Self> {
        let ConfigSource::File(path) = &config.source else {
            return None;
        };
        Some(Self {
            path: path.clone(),
            text: std::fs::read_to_string(path).ok(),
            error: None,
        })
    }

    pub(super) fn path(&self) -> &std::path::Path {
        &self.path
    }
}

/// What asks for the re-read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Moment<'a> {
    /// The watcher saw the file change.
    Touched,
    /// A command that uses the config is about to run.
    Command,
    /// `r` on this alias: it is reconnected next, under the new config.
    Reconnect(&'a str),
}

impl Backend {
    /// Re-reads the config file if its text changed, and applies it.
    pub(super) fn reread_config(&mut self, moment: Moment<'_>) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let shown = file.path.display().to_string();
        let text = match std::fs::read_to_string(&file.path) {
            Ok(text) => text,
            Err(e) => {
                let why = format!("cannot read {shown}: {e}");
                if file.error.as_deref() != Some(why.as_str()) || moment != Moment::Touched {
                    file.error = Some(why.clone());
                    file.text = None;
                    self.tell(format!(
                        "config changed on disk, but {why}; the config in force stays until the file is back"
                    ));
                }
                return;
            }
        };
        if file.text.as_deref() == Some(text.as_str()) {
            // Unchanged since the last look; a refused text is said again
            // when the operator is about to rely on the config.
            if let (Some(error), false) = (&file.error, moment == Moment::Touched) {
                let text = format!(
                    "the config on disk still cannot be used ({error}); the config in force stays until the file is valid again"
                );
                self.send(BackendEvent::Status(text));
            }
            return;
        }
        file.text = Some(text.clone());
        let mut new = match config::parse(&text, self.config.source.clone()) {
            Ok(new) => new,
            Err(e) => {
                file.error = Some(e.to_string());
                self.tell(format!(
                    "config changed on disk, but it cannot be used: {e}. Nothing of it was applied: \
                     the config in force stays until the file is valid again"
                ));
                return;
            }
        };
        file.error = None;
        new.accept_new_lock = self.config.accept_new_lock;
        self.apply_config(new, moment);
    }

    fn apply_config(&mut self, new: Config, moment: Moment<'_>) {
        let reconnecting = match moment {
            Moment::Reconnect(alias) => Some(alias),
            _ => None,
        };
        let mut parts = Vec::new();
        let changed = self.hub.reconfigure(new.servers.clone());
        for alias in &changed.added {
            parts.push(format!("`{alias}` added (c connects it)"));
        }
        for (alias, live) in &changed.removed {
            self.builder.forget(alias.as_str());
            self.stats.remove(alias.as_str());
            parts.push(if *live {
                format!("`{alias}` removed: disconnected, its tools revoked")
            } else {
                format!("`{alias}` removed")
            });
        }
        for alias_change in &changed.changed {
            let alias = alias_change.alias.as_str();
            let change = alias_change.change;
            if reconnecting == Some(alias) {
                parts.push(format!(
                    "`{alias}` changed: reconnecting it under the new config"
                ));
                continue;
            }
            if alias_change.connecting {
                // The connect under way read the old spec: its connection is
                // treated as a live one the moment it registers.
                self.pending.insert(alias.to_string(), change);
                parts.push(format!(
                    "`{alias}` changed while it connects: applied to its connection once it is up"
                ));
                continue;
            }
            if !alias_change.connected {
                self.builder.stale.remove(alias);
                parts.push(format!("`{alias}` changed: in force from its next connect"));
                continue;
            }
            if change.launch {
                self.builder.stale.insert(alias.to_string());
                parts.push(format!(
                    "`{alias}`'s launch settings changed: it stays connected as it was opened; r reconnects it"
                ));
            }
            if change.policy {
                parts.push(format!(
                    "`{alias}`'s policy changed: in force now, its tools are re-validated under it"
                ));
                self.spawn_revalidate(alias.to_string());
            } else if change.live && !change.launch {
                parts.push(format!(
                    "`{alias}` changed (resources.read, max_concurrent_calls): in force now"
                ));
            }
        }
        // `[flows]` is read at each sink call: in force at once, for the
        // Lead's session and every outside client's.
        if self.config.flows != new.flows {
            self.hub.flows().set_settings(new.flows);
            parts.push(format!(
                "[flows] changed: in force now (on_trifecta = \"{}\", untrusted_sink = \"{}\")",
                new.flows.on_trifecta.as_str(),
                new.flows.untrusted_sink.as_str()
            ));
        }
        parts.extend(fixed_for_the_session(&self.config, &new));
        self.config = new;
        self.servers();
        // A re-read that changes nothing (a comment, the harness's own write)
        // says nothing.
        if !parts.is_empty() {
            self.tell(format!("config changed on disk: {}", parts.join("; ")));
        }
    }

    /// A connection registered: if the config changed while it was being
    /// opened, what changed is applied to it now, as to any live connection.
    pub(super) fn connected_under_old_config(&mut self, alias: &str) {
        let Some(change) = self.pending.remove(alias) else {
            return;
        };
        if change.launch {
            self.builder.stale.insert(alias.to_string());
        }
        if change.policy {
            self.spawn_revalidate(alias.to_string());
        }
    }

    /// Re-validates a connected alias under its new policy, off the loop.
    fn spawn_revalidate(&mut self, alias: String) {
        let (hub, inbound) = (self.hub.clone(), self.inbound.clone());
        self.jobs.spawn(async move {
            let Some(kept) = hub.revalidate(&alias).await else {
                return;
            };
            let text = match (kept, state_of(&hub, &alias)) {
                (true, Some(AliasState::Ready { exposed, .. })) => {
                    format!("`{alias}` re-validated under its new policy: {exposed} tools exposed")
                }
                (true, _) => format!("`{alias}` re-validated under its new policy"),
                (false, Some(AliasState::Rejected { code, message })) => format!(
                    "`{alias}` does not pass its new policy ({code}): {message}; its tools were revoked"
                ),
                (false, _) => format!("`{alias}` was revoked while its new policy was checked"),
            };
            // After the pins and registry events of the re-validation.
            let _ = inbound.send(super::Inbound::Notice(text));
        });
    }
}

fn state_of(hub: &Hub, alias: &str) -> Option<AliasState> {
    hub.aliases()
        .into_iter()
        .find(|(a, _)| a.as_str() == alias)
        .map(|(_, state)| state)
}

/// What changed that the session cannot take live.
fn fixed_for_the_session(old: &Config, new: &Config) -> Vec<String> {
    let mut parts = Vec::new();
    if old.agent.model != new.agent.model {
        parts.push(
            "[model] changed: the Lead keeps its model until the harness starts again".to_string(),
        );
    }
    if old.limits != new.limits {
        parts.push(
            "[limits] changed: servers' timeouts and message sizes apply at their next connect, \
             the other limits when the harness starts again"
                .to_string(),
        );
    }
    for (section, differs) in [
        (
            "[builtin_tools]",
            old.agent.builtin_tools != new.agent.builtin_tools,
        ),
        ("[[teammates]]", old.agent.teammates != new.agent.teammates),
        ("[telemetry]", old.telemetry != new.telemetry),
        ("lock", old.lock != new.lock),
    ] {
        if differs {
            parts.push(format!(
                "{section} changed: it applies when the harness starts again"
            ));
        }
    }
    parts
}
