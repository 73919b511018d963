//! Opening a URL in the operator's browser, when there is one: `$BROWSER`,
//! else the desktop's opener (`xdg-open` under X11/Wayland, `open` on macOS).
//! Over SSH there usually is none; the URL is always shown as well.

use std::process::Stdio;

/// Tries to open `url`; says why not (no display, no opener) otherwise.
pub fn open(url: &str) -> Result<(), String> {
    let (program, args) = opener().ok_or_else(|| {
        "no browser here (no $BROWSER, no display); open the URL elsewhere".to_string()
    })?;
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
        Err(e) => Err(format!(
            "could not start `{program}` ({e}); open the URL yourself"
        )),
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
