//! The rules window (the session's grants) and the explanation of a call.

use ratatui::text::{Line, Span};

use crate::protocol::{ExplainView, GrantView, ResourcesView};
use crate::ui::keymap::Scope;
use crate::ui::keymap::keys_of;
use crate::ui::sanitize::{line, name, wrapped};
use crate::ui::state::AppState;
use crate::ui::text::fit;
use crate::ui::theme;

/// Which local rule decided a call, one rule per paragraph.
pub fn explain_lines(view: Option<&ExplainView>, width: usize) -> Vec<Line<'static>> {
    let Some(view) = view else {
        return vec![Line::styled("asking the backend…", theme::dim())];
    };
    let mut lines = Vec::new();
    if !view.tool.is_empty() {
        lines.push(Line::from(vec![
            Span::styled("call      ", theme::accent()),
            Span::styled(name(&view.tool, width.saturating_sub(10)), theme::strong()),
        ]));
    }
    for (rule, text) in &view.lines {
        for (i, part) in wrapped(text, width.saturating_sub(10))
            .into_iter()
            .enumerate()
        {
            let label = if i == 0 {
                format!("{:<10}", rule.label())
            } else {
                " ".repeat(10)
            };
            lines.push(Line::from(vec![
                Span::styled(label, theme::accent()),
                Span::raw(part),
            ]));
        }
    }
    lines.push(Line::raw(""));
    lines.extend(
        wrapped(
            "Every line is the harness's own record: the policy entry and where it is written, the \
             schema's verdict before anything was sent, the operator's answer or the grant that \
             stood for it.",
            width,
        )
        .into_iter()
        .map(|l| Line::styled(l, theme::dim())),
    );
    lines.push(Line::raw(""));
    lines.push(Line::styled(keys_of(Scope::Explain), theme::accent()));
    lines
}

/// The session's grants, the selected one marked; with `saving`, the question
/// whether to write it into the config file.
pub fn rules_lines(
    state: &AppState,
    selected: usize,
    saving: Option<u64>,
    width: usize,
) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = wrapped(
        "Session grants (\"a\" on an approval prompt): each lets one tool's exact definition on \
         one connection run without asking, until the session ends. A reconnect or a changed \
         definition asks again.",
        width,
    )
    .into_iter()
    .map(|l| Line::styled(l, theme::dim()))
    .collect();
    lines.push(Line::raw(""));
    if state.grants.is_empty() {
        lines.extend(
            wrapped(
                "No grants in this session. When an approval prompt asks, `a` grants its tool for \
                 the rest of the session; it shows up here, to revoke or to save as `allow`.",
                width,
            )
            .into_iter()
            .map(Line::raw),
        );
    }
    for (i, grant) in state.grants.iter().enumerate() {
        let mut row = Line::from(grant_row(grant, width));
        if i == selected {
            row = row.style(theme::selected());
        }
        lines.push(row);
    }
    if let Some(grant) = saving.and_then(|id| state.grants.iter().find(|g| g.id == id)) {
        lines.push(Line::raw(""));
        let (table, name) = match (&grant.alias, &grant.remote_name) {
            (Some(alias), Some(remote)) => (format!("[servers.{alias}.tools]"), remote.clone()),
            _ => ("[builtin_tools]".to_string(), grant.tool.clone()),
        };
        let path = state.session.config_file.clone().unwrap_or_default();
        lines.extend(
            wrapped(
                &format!(
                    "Write {} = \"allow\" under {table} in {path}? From the next connect it then \
                     runs without asking, in every session. Comments and layout are kept.",
                    line(&name, 60)
                ),
                width,
            )
            .into_iter()
            .map(|l| Line::styled(l, theme::warn())),
        );
        lines.push(Line::styled(keys_of(Scope::SaveGrant), theme::accent()));
        return lines;
    }
    lines.push(Line::raw(""));
    // Flow control: what the session has read, which only the operator clears.
    let flow = match state.taint.label() {
        Some(taint) => format!(
            "Flow: the session holds {taint} content; a tool labelled external_sink asks (or is \
             refused) because of it. `c` clears it (logged); the model cannot."
        ),
        None => "Flow: the session holds no untrusted content nor private data.".to_string(),
    };
    lines.extend(
        wrapped(&flow, width)
            .into_iter()
            .map(|l| Line::styled(l, theme::warn())),
    );
    // Outside clients' sessions (`serve`): each has its own taint, each
    // cleared on its own (`x` on its row).
    if !state.client_taints.is_empty() {
        lines.push(Line::raw(""));
        lines.extend(
            wrapped(
                "Outside clients' sessions holding flow taint (x on a row clears it, logged):",
                width,
            )
            .into_iter()
            .map(|l| Line::styled(l, theme::dim())),
        );
        for (i, (client, taint)) in state.client_taints.iter().enumerate() {
            let mut row = Line::from(vec![
                Span::styled(format!("client {}", line(client, 40)), theme::strong()),
                Span::styled(
                    format!("  flow: {}", taint.label().unwrap_or_default()),
                    theme::warn(),
                ),
            ]);
            if state.grants.len() + i == selected {
                row = row.style(theme::selected());
            }
            lines.push(row);
        }
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(keys_of(Scope::Rules), theme::accent()));
    lines
}

fn grant_row(grant: &GrantView, width: usize) -> Vec<Span<'static>> {
    let mut source = grant.alias.clone().unwrap_or_else(|| "built-in".into());
    if let Some(client) = &grant.client {
        source = format!("{source} · for client {client} only");
    }
    let uses = match grant.uses {
        0 => "not used since".to_string(),
        1 => "used once since".to_string(),
        n => format!("used {n}× since"),
    };
    vec![
        Span::styled(format!("#{:<3}", grant.id), theme::dim()),
        Span::styled(
            name(&grant.tool, width.saturating_sub(50).max(16)),
            theme::strong(),
        ),
        Span::styled(
            format!("  {source} · given {} · {uses}", grant.given_at),
            theme::dim(),
        ),
    ]
}

/// The line of the Resources window where its first resource's row is.
pub const RESOURCE_ROWS_FROM: usize = 4;

/// A server's resources: URI, name, MIME type and size per row (server text,
/// each cell one inert line; `selected` is the one Enter reads), then its
/// templates, and the read policy.
pub fn resources_lines(
    view: Option<&ResourcesView>,
    selected: usize,
    width: usize,
) -> Vec<Line<'static>> {
    let Some(view) = view else {
        return vec![Line::styled("asking the server…", theme::dim())];
    };
    if let Some(error) = &view.error {
        return wrapped(error, width).into_iter().map(Line::raw).collect();
    }
    let mut lines = vec![Line::from(vec![
        Span::styled("reading: ", theme::accent()),
        Span::raw(format!(
            "{} (local policy: [servers.{}.resources] read)",
            view.read.label(),
            view.alias
        )),
    ])];
    lines.push(Line::styled(
        fit(
            "Enter reads the selected resource for you (the model does not get it)",
            width,
        ),
        theme::dim(),
    ));
    let size = |n: Option<u64>| n.map_or_else(|| "-".to_string(), crate::ui::text::bytes);
    let uri_width = (width / 2).max(12);
    let name_width = (width / 5).max(8);
    let mime_width = (width / 6).max(6);
    let mut section =
        |title: String, rows: &[crate::protocol::ResourceRow], selected: Option<usize>| {
            lines.push(Line::raw(""));
            lines.push(Line::styled(title, theme::strong()));
            for (i, r) in rows.iter().enumerate() {
                let mut spans = vec![
                    Span::raw(format!("{:<uri_width$} ", name(&r.uri, uri_width))),
                    Span::styled(
                        format!("{:<name_width$} ", name(&r.name, name_width)),
                        theme::accent(),
                    ),
                    Span::styled(
                        format!(
                            "{:<mime_width$}",
                            line(r.mime.as_deref().unwrap_or("-"), mime_width)
                        ),
                        theme::dim(),
                    ),
                ];
                // Templates have no size (and need arguments: not read here).
                let Some(selected) = selected else {
                    lines.push(Line::from(spans));
                    continue;
                };
                spans.push(Span::raw(format!(" {:>8}", size(r.size))));
                let row = Line::from(spans);
                lines.push(if i == selected {
                    row.style(theme::selected())
                } else {
                    row
                });
            }
        };
    section(
        format!(
            "{} resources (URI, name, MIME type, size)",
            view.resources.len()
        ),
        &view.resources,
        Some(selected),
    );
    if !view.templates.is_empty() {
        section(
            format!("{} templates", view.templates.len()),
            &view.templates,
            None,
        );
    }
    if view.malformed > 0 {
        lines.push(Line::styled(
            format!("({} malformed entries left out)", view.malformed),
            theme::dim(),
        ));
    }
    lines
}
