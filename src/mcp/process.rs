//! The child process of a stdio server: its own process group, stderr captured into
//! a bounded buffer, a parent-death signal, and a guard that kills the whole group.

use std::collections::VecDeque;
use std::io;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Environment variables a server inherits from the harness. Everything else (API
/// keys of the model provider, tokens of other servers) stays out of the child;
/// a server gets more only through its own `env` table in the config.
const INHERITED_ENV: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
    "TZ",
];

/// What to run; variables are already expanded.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
}

/// A running server process. Dropping it kills the whole process group at once.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    pgid: Pid,
    exit: Option<ExitStatus>,
}

/// The stdio pipes of a freshly spawned server.
pub struct Pipes {
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
}

impl ServerProcess {
    /// Spawns `spec` as the leader of a new process group, stdin/stdout/stderr piped
    /// (stderr is never inherited: it would paint over the TUI), with a minimal
    /// environment. Stderr is drained into `stderr` until the pipe closes.
    pub fn spawn(spec: &LaunchSpec, stderr: Arc<StderrTail>) -> io::Result<(Self, Pipes)> {
        let mut command = Command::new(&spec.command);
        command
            .args(&spec.args)
            .env_clear()
            .envs(
                INHERITED_ENV
                    .iter()
                    .filter_map(|k| std::env::var(k).ok().map(|v| (*k, v))),
            )
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(cwd) = &spec.cwd {
            command.current_dir(cwd);
        }
        die_with_parent(&mut command);
        let mut child = command.spawn()?;
        let pid = child
            .id()
            .ok_or_else(|| io::Error::other("child exited before it had a pid"))?;
        let pgid = Pid::from_raw(i32::try_from(pid).map_err(io::Error::other)?);
        let take = |what: &str| io::Error::other(format!("child {what} was not piped"));
        let stdin = child.stdin.take().ok_or_else(|| take("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| take("stdout"))?;
        let mut err_pipe = child.stderr.take().ok_or_else(|| take("stderr"))?;
        tokio::spawn(async move {
            // Always drain: a full stderr pipe would block the server.
            let mut buf = vec![0u8; 8192];
            while let Ok(n) = err_pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                stderr.push(&buf[..n]);
            }
            stderr.eof.cancel();
        });
        Ok((
            Self {
                child,
                pgid,
                exit: None,
            },
            Pipes { stdin, stdout },
        ))
    }

    pub fn pid(&self) -> u32 {
        self.pgid.as_raw().unsigned_abs()
    }

    /// Waits for the group leader to exit (cancel-safe).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.exit {
            return Ok(status);
        }
        let status = self.child.wait().await?;
        self.exit = Some(status);
        Ok(status)
    }

    /// Best-effort signal to every process in the group (the server and any
    /// grandchildren it started that stayed in its group).
    pub fn signal_group(&self, signal: Signal) {
        // ESRCH (group already empty) is the normal end state.
        let _ = killpg(self.pgid, signal);
    }

    /// Close sequence for a server whose stdin has just been closed: wait up to
    /// `grace` for it to exit, then SIGTERM the group and wait `grace` again, then
    /// SIGKILL the group. Grandchildren left in the group are killed in all cases.
    pub async fn terminate(&mut self, grace: Duration) -> Option<ExitStatus> {
        let mut status = tokio::time::timeout(grace, self.wait())
            .await
            .ok()
            .and_then(Result::ok);
        if status.is_none() {
            self.signal_group(Signal::SIGTERM);
            status = tokio::time::timeout(grace, self.wait())
                .await
                .ok()
                .and_then(Result::ok);
        }
        self.signal_group(Signal::SIGKILL);
        if status.is_none() {
            status = tokio::time::timeout(grace, self.wait())
                .await
                .ok()
                .and_then(Result::ok);
        }
        status
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // Synchronous and runtime-free, so it also works while the runtime shuts down.
        self.signal_group(Signal::SIGKILL);
    }
}

/// SIGKILLs the process group led by `pid` (best effort).
pub fn kill_group(pid: u32) {
    if let Ok(raw) = i32::try_from(pid) {
        let _ = killpg(Pid::from_raw(raw), Signal::SIGKILL);
    }
}

/// Asks Linux to SIGKILL the server when the harness dies, even by SIGKILL.
///
/// The signal fires when the *thread* that spawned the child exits; servers are
/// spawned from tokio worker threads or the main thread, which live as long as the
/// runtime. Grandchildren are not covered (the setting is not inherited across fork).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(command: &mut Command) {
    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs between fork and exec and only makes the
    // async-signal-safe syscalls prctl(2) and getppid(2).
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(io::Error::from)?;
            // The parent may have died before prctl took effect.
            if nix::unistd::getppid() != parent {
                return Err(io::Error::other("harness exited during spawn"));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_command: &mut Command) {}

/// The last bytes a server wrote to stderr, bounded. Shown to the operator (inert),
/// never to the model.
#[derive(Debug)]
pub struct StderrTail {
    inner: Mutex<TailInner>,
    capacity: usize,
    /// Fired when the pipe reaches EOF (every writer has exited).
    eof: tokio_util::sync::CancellationToken,
}

#[derive(Debug, Default)]
struct TailInner {
    bytes: VecDeque<u8>,
    total: u64,
}

impl StderrTail {
    pub fn new(capacity: usize) -> Self {
        Self {
            inner: Mutex::new(TailInner::default()),
            capacity,
            eof: tokio_util::sync::CancellationToken::new(),
        }
    }

    /// Waits (at most `max`) until everything the server wrote has been read, so a
    /// report about a dead server includes its last words.
    pub async fn wait_eof(&self, max: Duration) {
        let _ = tokio::time::timeout(max, self.eof.cancelled()).await;
    }

    pub fn push(&self, chunk: &[u8]) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.total += chunk.len() as u64;
        let keep = &chunk[chunk.len().saturating_sub(self.capacity)..];
        let overflow = (inner.bytes.len() + keep.len()).saturating_sub(self.capacity);
        inner.bytes.drain(..overflow);
        inner.bytes.extend(keep);
    }

    /// Total bytes ever written, including those no longer kept.
    pub fn total_bytes(&self) -> u64 {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).total
    }

    /// The last `max_lines` lines (lossy UTF-8, not yet sanitized).
    pub fn last_lines(&self, max_lines: usize) -> Vec<String> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (a, b) = inner.bytes.as_slices();
        let text = String::from_utf8_lossy(&[a, b].concat()).into_owned();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(max_lines)..]
            .iter()
            .map(|l| l.to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tail_keeps_only_the_last_bytes() {
        let tail = StderrTail::new(16);
        tail.push(b"first line\n");
        tail.push(b"second line\nthird\n");
        assert_eq!(tail.total_bytes(), 29);
        assert_eq!(tail.last_lines(5), vec!["cond line", "third"]);
        tail.push(&[b'x'; 100]);
        assert_eq!(tail.last_lines(1), vec!["x".repeat(16)]);
    }
}
