//! Opening a URL in the operator's browser, when there is one: `$BROWSER`,
//! else the desktop's opener (`xdg-open` under X11/Wayland, `open` on macOS).
//! Over SSH there usually is none; the URL is always shown as well.

use std::process::Stdio;

/// Why no browser was opened; the URL is shown either way.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error("no browser here (no $BROWSER, no display); open the URL elsewhere")]
    NoBrowser,
    #[error("could not start `{program}` ({source}); open the URL yourself")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
}

/// Tries to open `url`; says why not (no display, no opener) otherwise.
pub fn open(url: &str) -> Result<(), BrowserError> {
    let (program, args) = opener().ok_or(BrowserError::NoBrowser)?;
    let mut command = tokio::process::Command::new(&program);
    command
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    match command.spawn() {
        Ok(mut child) => {
            // Reap it whenever it exits; the browser outlives the opener anyway.
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
            Ok(())
        }
        Err(source) => Err(BrowserError::Spawn { program, source }),
    }
}

fn opener() -> Option<(String, Vec<String>)> {
    if let Ok(browser) = std::env::var("BROWSER") {
        // `$BROWSER` may list several, separated by colons: the first one.
        let first = browser.split(':').next().unwrap_or("").trim().to_string();
        if !first.is_empty() {
            return Some((first, Vec::new()));
        }
    }
    if cfg!(target_os = "macos") {
        return Some(("open".into(), Vec::new()));
    }
    let display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()));
    display.then(|| ("xdg-open".into(), Vec::new()))
}
