//! Tool search for large tool sets: when the exposed tools of a request exceed
//! `max_tools_in_request` (or their schemas a token budget), the request carries
//! the tools used or found most recently plus `search_tools`; what a search
//! finds joins the *next* request (SPEC rule 6: a reply only calls what its own
//! request offered).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use crate::mcp::Snapshot;
use crate::mcp::registry::ExposedTool;

/// The built-in that stands for the tools a request leaves out.
pub const SEARCH_TOOL: &str = "search_tools";

/// Most search results returned at once.
const MAX_RESULTS: usize = 10;

/// What the Lead offers from its MCP tools, request by request.
#[derive(Default)]
pub struct ToolSearch {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Exposed names, most recently used or found first.
    recent: Vec<String>,
    /// The current request's MCP tools when it is search-based; `None`: all.
    offered: Option<Arc<BTreeSet<String>>>,
}

/// What one request carries.
pub struct Offer<'a> {
    pub tools: Vec<&'a Arc<ExposedTool>>,
    /// Whether `search_tools` stands for the rest.
    pub search: bool,
    /// How many exposed tools the snapshot holds.
    pub exposed: usize,
}

/// Rough tokens of one tool's definition in a request.
fn tokens(tool: &ExposedTool) -> usize {
    (tool.name.len()
        + tool.description.as_deref().map_or(0, str::len)
        + tool.model_schema.to_string().len())
        / 4
}

impl ToolSearch {
    /// Which of `snapshot`'s tools the next request carries (remembered, so the
    /// calls of its reply can be checked against it).
    /// `limit` tools at most, `budget` tokens of definitions at most.
    pub fn offer<'a>(&self, snapshot: &'a Snapshot, limit: usize, budget: usize) -> Offer<'a> {
        let all: Vec<&Arc<ExposedTool>> = snapshot.tools().collect();
        let mut state = self.lock();
        let within = all.len() <= limit && all.iter().map(|t| tokens(t)).sum::<usize>() <= budget;
        if within {
            state.offered = None;
            return Offer {
                exposed: all.len(),
                tools: all,
                search: false,
            };
        }
        let mut picked = Vec::new();
        let mut budget = budget;
        for name in &state.recent {
            if picked.len() >= limit {
                break;
            }
            if let Some(tool) = snapshot.resolve(name) {
                let cost = tokens(tool);
                if cost > budget {
                    continue;
                }
                budget -= cost;
                picked.push(tool);
            }
        }
        state.offered = Some(Arc::new(picked.iter().map(|t| t.name.clone()).collect()));
        Offer {
            exposed: all.len(),
            tools: picked,
            search: true,
        }
    }

    /// Whether the current request offered `name` (always, when it carried all).
    pub fn offered(&self, name: &str) -> bool {
        self.lock()
            .offered
            .as_ref()
            .is_none_or(|set| set.contains(name))
    }

    /// `name` was used or found: it goes to the front of what requests carry.
    pub fn touch(&self, name: &str) {
        let mut state = self.lock();
        state.recent.retain(|n| n != name);
        state.recent.insert(0, name.to_string());
        state.recent.truncate(1000);
    }

    /// `search_tools {query}`: the best matches of `query` among the snapshot's
    /// tools not offered now, which the next request will carry.
    pub fn search(&self, snapshot: &Snapshot, query: &str) -> String {
        let terms: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|t| !t.is_empty())
            .map(str::to_lowercase)
            .collect();
        let mut scored: Vec<(usize, &Arc<ExposedTool>)> = snapshot
            .tools()
            .filter(|t| !self.offered(&t.name))
            .filter_map(|t| {
                let name = t.name.to_lowercase();
                let description = t.description.as_deref().unwrap_or_default().to_lowercase();
                // The whole query in the name (spaces as underscores) first.
                let whole = query.trim().to_lowercase().replace(' ', "_");
                let exact = 10 * usize::from(!whole.is_empty() && name.contains(&whole));
                let score: usize = exact
                    + terms
                        .iter()
                        .map(|term| {
                            3 * usize::from(name.contains(term.as_str()))
                                + usize::from(description.contains(term.as_str()))
                        })
                        .sum::<usize>();
                (score > 0).then_some((score, t))
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
        scored.truncate(MAX_RESULTS);
        if scored.is_empty() {
            return format!(
                "no tool matches {query:?} (words of a tool's name or description are matched); try other words"
            );
        }
        let mut text = format!(
            "{} tool{} found; offered from your next request (not callable in this reply):",
            scored.len(),
            if scored.len() == 1 { "" } else { "s" }
        );
        // Found last, so the first found ends up first.
        for (_, tool) in scored.iter().rev() {
            self.touch(&tool.name);
        }
        for (_, tool) in &scored {
            let description = tool.description.as_deref().unwrap_or_default();
            let first = description.lines().next().unwrap_or_default();
            text.push_str(&format!(
                "\n- {}: {}",
                tool.name,
                crate::sanitize::for_model_line(first, 200)
            ));
        }
        text
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}
