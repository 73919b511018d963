//! Progress of a headless call on stderr: a bar redrawn in place when stderr
//! is a terminal, otherwise one line per notification
//! (`progress 2/4 (50%) MESSAGE`), so logs and scripts can follow it.

use std::io::{IsTerminal as _, Write as _};

use crate::mcp::McpEvent;
use crate::sanitize::inert_line;

/// The event handler that prints progress (everything else is ignored).
pub fn printer() -> impl Fn(McpEvent) + Send + Sync + 'static {
    let terminal = std::io::stderr().is_terminal();
    move |event| {
        let McpEvent::Progress {
            progress,
            total,
            message,
            ..
        } = event
        else {
            return;
        };
        let line = describe(progress, total, message.as_deref());
        let mut err = std::io::stderr().lock();
        let _ = if terminal {
            let bar = bar(progress, total, 20);
            // Redrawn in place; the next line of output starts after it.
            write!(err, "\r\x1b[2K{bar} {line}")
        } else {
            writeln!(err, "progress {line}")
        };
        if terminal && total.is_some_and(|t| progress >= t) {
            let _ = writeln!(err);
        }
    }
}

/// `2/4 (50%) step 2 of 4`, or `3 step 3` without a total.
pub fn describe(progress: f64, total: Option<f64>, message: Option<&str>) -> String {
    let number = |v: f64| {
        if v.fract() == 0.0 && v.abs() < 1e15 {
            format!("{}", v as i64)
        } else {
            format!("{v:.2}")
        }
    };
    let mut line = match total {
        Some(total) if total > 0.0 => format!(
            "{}/{} ({:.0}%)",
            number(progress),
            number(total),
            (progress / total * 100.0).clamp(0.0, 100.0)
        ),
        _ => number(progress),
    };
    if let Some(message) = message.filter(|m| !m.trim().is_empty()) {
        line.push(' ');
        line.push_str(&inert_line(message, 120));
    }
    line
}

fn bar(progress: f64, total: Option<f64>, width: usize) -> String {
    let filled = match total {
        Some(total) if total > 0.0 => ((progress / total).clamp(0.0, 1.0) * width as f64) as usize,
        _ => 0,
    };
    format!("[{}{}]", "#".repeat(filled), "-".repeat(width - filled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_where_the_call_is() {
        assert_eq!(
            describe(2.0, Some(4.0), Some("step 2 of 4")),
            "2/4 (50%) step 2 of 4"
        );
        assert_eq!(describe(3.0, None, None), "3");
        assert_eq!(
            describe(0.5, Some(1.0), Some("\x1b[2Jhalf")),
            "0.50/1 (50%) ^[[2Jhalf"
        );
        assert_eq!(bar(1.0, Some(4.0), 8), "[##------]");
    }
}
