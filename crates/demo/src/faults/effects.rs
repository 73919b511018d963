//! What the faults do while the server runs: ignore stop signals, leave a
//! grandchild, flood stderr, write noise on stdout, crash mid-message.

use super::*;

/// Starts the faults that act on their own rather than in answer to a request.
/// Must run inside the tokio runtime.
pub fn start_background(faults: &Faults, tag: Option<&str>) -> anyhow::Result<()> {
    if faults.ignore_term {
        ignore_stop_signals()?;
    }
    if faults.grandchild {
        spawn_sleeper(tag, false)?;
    }
    if faults.grandchild_setsid {
        spawn_sleeper(tag, true)?;
    }
    if let Some(bytes) = faults.stderr_flood {
        // A plain thread: when nobody drains stderr it blocks, and must not block a tokio worker.
        std::thread::Builder::new()
            .name("stderr-flood".into())
            .spawn(move || flood_stderr(bytes))
            .context("starting the stderr flood")?;
    }
    // `0` exits here, before a byte of the handshake is read: a timer would
    // race the first requests on a loaded machine.
    if faults.exit_after_ms == Some(0) {
        log(format_args!("exit-after-ms=0: exiting with status 7"));
        std::process::exit(7);
    }
    if let Some(ms) = faults.exit_after_ms {
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            log(format_args!("exit-after-ms={ms}: exiting with status 7"));
            std::process::exit(7);
        });
    }
    Ok(())
}

/// Installs handlers that swallow SIGTERM, SIGINT and SIGHUP, so only SIGKILL stops us.
/// Handlers (unlike SIG_IGN) are reset by exec, so grandchildren stay killable.
fn ignore_stop_signals() -> anyhow::Result<()> {
    for (kind, name) in [
        (SignalKind::terminate(), "SIGTERM"),
        (SignalKind::interrupt(), "SIGINT"),
        (SignalKind::hangup(), "SIGHUP"),
    ] {
        let mut stream = signal(kind).with_context(|| format!("watching {name}"))?;
        tokio::spawn(async move {
            while stream.recv().await.is_some() {
                log(format_args!("ignore-term: ignoring {name}"));
            }
        });
    }
    Ok(())
}

/// Spawns `demo-server sleeper` in our process group (or its own session with `setsid`),
/// with the same `--tag`, so tests can look for it after the harness closed us.
fn spawn_sleeper(tag: Option<&str>, setsid: bool) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("finding our own executable")?;
    let mut command = Command::new(exe);
    command.args(["demo-server", "sleeper"]);
    if let Some(tag) = tag {
        command.args(["--tag", tag]);
    }
    if setsid {
        command.arg("--setsid");
    }
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = command.spawn().context("spawning the sleeper grandchild")?;
    log(format_args!(
        "spawned grandchild sleeper pid {}{}",
        child.id(),
        if setsid { " (setsid)" } else { "" }
    ));
    // Reap it if it dies before we do, so it never lingers as a zombie of ours.
    std::thread::Builder::new()
        .name("reap-sleeper".into())
        .spawn(move || child.wait())
        .context("starting the reaper thread")?;
    Ok(())
}

fn flood_stderr(bytes: u64) {
    let prefix = log_prefix();
    let mut written: u64 = 0;
    let mut line_no: u64 = 0;
    let stderr = std::io::stderr();
    while written < bytes {
        let mut line = format!("{prefix} flood line {line_no:08} ");
        let pad = 100usize.saturating_sub(line.len() + 1);
        line.extend(std::iter::repeat_n('.', pad));
        line.push('\n');
        let remaining = usize::try_from(bytes - written).unwrap_or(usize::MAX);
        line.truncate(remaining);
        if stderr.lock().write_all(line.as_bytes()).is_err() {
            return;
        }
        written += line.len() as u64;
        line_no += 1;
    }
}

/// Non-JSON lines on the MCP channel before the first real message, like a chatty wrapper script.
pub fn write_stdout_noise() -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    for _ in 0..3 {
        writeln!(stdout, "hello from a noisy server")?;
    }
    stdout.flush()
}

/// Writes half a JSON-RPC line and dies, as if the server crashed mid-write.
pub fn crash_partial() -> ! {
    log("crash-on-call-partial: writing half a line and exiting with status 3");
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(br#"{"jsonrpc":"2.0","id":"#);
    let _ = stdout.flush();
    std::process::exit(3);
}
