//! Which keys apply to what is selected now: the footer shows only those
//! (`c connect` only for a server that is not connected), so the hints follow
//! the selection.

use super::keymap::Action;
use super::state::{AppState, Cell, Focus, RegistryRow};
use crate::protocol::{AliasStatus, SignInStatus};

impl AppState {
    /// Whether `action` does something for the current selection.
    pub fn offers(&self, action: Action) -> bool {
        match self.focus {
            Focus::Servers => {
                let Some(server) = self.selected_server() else {
                    return false;
                };
                let live = matches!(server.state, AliasStatus::Ready | AliasStatus::Connecting);
                let needs_sign_in = server.sign_in == SignInStatus::Needed && !live;
                match action {
                    // Connecting again would be refused the same way: `s` is the way in.
                    Action::Connect => !live && !needs_sign_in,
                    Action::SignIn => needs_sign_in,
                    Action::SignOut => server.sign_in == SignInStatus::SignedIn,
                    Action::Disconnect => live,
                    Action::Reconnect => server.state == AliasStatus::Ready,
                    Action::Kill => {
                        server.state == AliasStatus::Ready
                            && server
                                .health
                                .as_ref()
                                .is_some_and(|h| h.pid.is_some() && h.ended.is_none())
                    }
                    Action::WritePolicy => {
                        !server.policy_missing.is_empty() || !server.policy_extra.is_empty()
                    }
                    Action::ViewPins => server.pins_refused,
                    Action::Resources => server.state == AliasStatus::Ready,
                    _ => true,
                }
            }
            Focus::Registry => match action {
                Action::ViewPins => {
                    let alias = self
                        .selected_row()
                        .map(|r| r.alias())
                        .or_else(|| self.selected_server().map(|s| s.alias.as_str()));
                    self.servers
                        .iter()
                        .any(|s| Some(s.alias.as_str()) == alias && s.pins_refused)
                }
                Action::CallByHand => matches!(
                    self.selected_row(),
                    Some(RegistryRow::Tool { tool, .. }) if tool.exposed_as.is_some()
                ),
                Action::Detail => matches!(self.selected_row(), Some(RegistryRow::Tool { .. })),
                _ => true,
            },
            Focus::Conversation => {
                let selected = self
                    .selected_cell
                    .or(self.cells.len().checked_sub(1))
                    .and_then(|i| self.cells.get(i));
                let on_call = matches!(selected, Some(Cell::ToolCall(_)));
                let on_content = matches!(selected, Some(Cell::ServerContent(_)));
                match action {
                    Action::Toggle => on_call || on_content,
                    Action::Explain => on_call,
                    Action::Retry => self.can_retry,
                    _ => true,
                }
            }
            // Tab inserts the completion while its list shows.
            Focus::Input => action != Action::NextFocus || !self.completing(),
            _ => true,
        }
    }
}
