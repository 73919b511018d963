//! The child process of a stdio server: its own process group, stderr captured into
//! a bounded buffer, and — when a supervisor is configured — the `__shim`
//! between the harness and the server that makes sure nothing the server started
//! outlives the harness (see `shim.rs`). A guard kills everything on drop.

use std::io;
use std::os::fd::AsRawFd as _;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use mcp_harness_shim as shim;

pub use super::tail::StderrTail;

/// Environment variables a server inherits from the harness. Everything else (API
/// keys of the model provider, tokens of other servers) stays out of the child;
/// a server gets more only through its own `env` table in the config.
const INHERITED_ENV: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
    "TZ",
];

/// How long the shim may take to report the server's pid (it does so right after
/// `fork`; only a machine under heavy load takes more than milliseconds).
const SHIM_HANDSHAKE: Duration = Duration::from_secs(20);

/// Who starts stdio servers, once configured.
struct Supervisor {
    /// An mcp-harness binary: `exe __shim` always works.
    exe: PathBuf,
    /// The standalone shim beside `exe`, when there is one: the same code in a
    /// small binary, whose exec costs ~2 ms less per connect than the harness's.
    standalone: Option<PathBuf>,
}

static SUPERVISOR: OnceLock<Supervisor> = OnceLock::new();

/// Cleared the first time the standalone shim cannot be used (it vanished, or
/// it is from another build): every later spawn goes straight to `exe __shim`.
static STANDALONE_USABLE: AtomicBool = AtomicBool::new(true);

/// Held while a shim is spawned with its end of the control socket inheritable,
/// and while a server is spawned directly, so that no server or shim started
/// meanwhile inherits another shim's socket.
static SPAWNING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Starts every stdio server under a shim from now on: the standalone
/// `mcp-harness-shim` beside `exe` when it is there and from the same build,
/// else `exe __shim`. `exe` must be an mcp-harness binary (the binary passes
/// `/proc/self/exe`; tests pass the built binary). Without it, servers are
/// spawned directly: their own process group and a parent-death signal, but
/// no subreaper, so a grandchild that calls `setsid()` — or any grandchild
/// when the harness is SIGKILLed — can survive. The first call wins.
pub fn use_supervisor(exe: PathBuf) {
    // `/proc/self/exe` resolves to the binary's real path, whose folder holds
    // the standalone shim when both were built or installed together.
    let standalone = std::fs::canonicalize(&exe)
        .ok()
        .and_then(|real| Some(real.parent()?.join(shim::STANDALONE)))
        .filter(|path| path.is_file());
    let _ = SUPERVISOR.set(Supervisor { exe, standalone });
}

/// What to run; variables are already expanded.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
}

/// A running server. Dropping it kills the server's process group and tells the
/// shim to kill everything else the server started.
#[derive(Debug)]
pub struct ServerProcess {
    /// The shim, or the server itself when there is no supervisor.
    child: Child,
    /// The server: the leader of its own process group.
    server: Pid,
    /// Our end of the shim's control socket: closing it (or our death) makes the
    /// shim kill its whole subtree.
    ctrl: Option<std::os::unix::net::UnixStream>,
    exit: Option<ExitStatus>,
}

/// The stdio pipes of a freshly spawned server.
pub struct Pipes {
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
}

impl ServerProcess {
    /// Spawns `spec` in a new process group, stdin/stdout/stderr piped (stderr is
    /// never inherited: it would paint over the TUI), with a minimal environment.
    /// Stderr is drained into `stderr` until the pipe closes.
    pub async fn spawn(spec: &LaunchSpec, stderr: Arc<StderrTail>) -> io::Result<(Self, Pipes)> {
        let (mut child, server, ctrl) = match SUPERVISOR.get() {
            Some(supervisor) => spawn_supervised(supervisor, spec).await?,
            None => {
                let mut command = command_for(&spec.command, spec);
                command.args(&spec.args).kill_on_drop(true);
                die_with_parent(&mut command, Signal::SIGKILL, None);
                let child = {
                    let _one = SPAWNING.lock().unwrap_or_else(|e| e.into_inner());
                    command.spawn()?
                };
                let pid = child
                    .id()
                    .ok_or_else(|| io::Error::other("child exited before it had a pid"))?;
                (child, to_pid(pid)?, None)
            }
        };
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
            stderr.mark_eof();
        });
        Ok((
            Self {
                child,
                server,
                ctrl,
                exit: None,
            },
            Pipes { stdin, stdout },
        ))
    }

    /// The server's pid (not the shim's): what the operator sees and can kill.
    pub fn pid(&self) -> u32 {
        self.server.as_raw().unsigned_abs()
    }

    /// Waits for the server to exit (cancel-safe). With a shim, this is the shim's
    /// exit, which follows the server's once its leftovers are reaped, with the
    /// server's own status.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.exit {
            return Ok(status);
        }
        let status = self.child.wait().await?;
        self.exit = Some(status);
        Ok(status)
    }

    /// Best-effort signal to the server's process group (the server and any
    /// grandchildren that stayed in its group).
    pub fn signal_group(&self, signal: Signal) {
        // ESRCH (group already empty) is the normal end state.
        let _ = killpg(self.server, signal);
    }

    /// Close sequence for a server whose stdin has just been closed: wait up to
    /// `grace` for it to exit, then SIGTERM the group and wait `grace` again, then
    /// SIGKILL the group. Everything else it started is killed in all cases.
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
        // The shim kills what escaped the group (setsid) once the server is gone;
        // closing the socket asks for the same in case it is not.
        self.ctrl = None;
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
        // Synchronous and runtime-free, so it also works while the runtime shuts
        // down. Closing `ctrl` (a field, dropped right after) makes the shim sweep.
        self.signal_group(Signal::SIGKILL);
    }
}

/// SIGKILLs the process group led by `pid` (best effort).
pub fn kill_group(pid: u32) {
    if let Ok(raw) = i32::try_from(pid) {
        let _ = killpg(Pid::from_raw(raw), Signal::SIGKILL);
    }
}

fn to_pid(pid: u32) -> io::Result<Pid> {
    Ok(Pid::from_raw(i32::try_from(pid).map_err(io::Error::other)?))
}

/// A command with the minimal environment, piped stdio, its own process group.
fn command_for(program: impl AsRef<std::ffi::OsStr>, spec: &LaunchSpec) -> Command {
    let mut command = Command::new(program);
    command
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
        .process_group(0);
    if let Some(cwd) = &spec.cwd {
        command.current_dir(cwd);
    }
    command
}

/// A server started under its shim: the shim, the server's pid, our end of
/// the control socket.
type Supervised = (Child, Pid, Option<std::os::unix::net::UnixStream>);

/// Why a shim did not start the server.
enum ShimError {
    /// The shim itself could not run (its binary is missing or not
    /// executable), it is the standalone shim of another build, or it ended
    /// without a word.
    Unusable(io::Error),
    /// The shim ran and reports why the server did not start, or it failed.
    Failed(io::Error),
}

/// Everything but the few ways a shim is unusable is a failure to report.
impl From<io::Error> for ShimError {
    fn from(error: io::Error) -> Self {
        Self::Failed(error)
    }
}

/// Starts `spec` under the standalone shim if it is usable, else under
/// `exe __shim`.
async fn spawn_supervised(supervisor: &Supervisor, spec: &LaunchSpec) -> io::Result<Supervised> {
    if let Some(standalone) = &supervisor.standalone
        && STANDALONE_USABLE.load(Ordering::Relaxed)
    {
        match start_shim(standalone, Some(shim::FINGERPRINT), spec).await {
            Ok(started) => return Ok(started),
            Err(ShimError::Failed(error)) => return Err(error),
            Err(ShimError::Unusable(error)) => {
                tracing::warn!(shim = %standalone.display(), %error, "the standalone shim is unusable; using `__shim`");
                STANDALONE_USABLE.store(false, Ordering::Relaxed);
            }
        }
    }
    match start_shim(&supervisor.exe, None, spec).await {
        Ok(started) => Ok(started),
        Err(ShimError::Unusable(error) | ShimError::Failed(error)) => Err(error),
    }
}

/// `shim __shim [FINGERPRINT] CTRL_FD COMMAND ARGS…` (the fingerprint only for
/// the standalone shim); waits for the shim to report the server's pid (or why
/// it could not start it).
async fn start_shim(
    shim: &std::path::Path,
    fingerprint: Option<&str>,
    spec: &LaunchSpec,
) -> Result<Supervised, ShimError> {
    use ShimError::{Failed, Unusable};
    let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
    let fd = theirs.as_raw_fd();
    let mut command = command_for(shim, spec);
    command
        .arg0("mcp-harness")
        .arg(shim::SHIM_ARG)
        .args(fingerprint)
        .arg(fd.to_string())
        .arg(&spec.command)
        .args(&spec.args);
    // No `pre_exec` here: without one, std starts the child with posix_spawn
    // (a vfork) instead of fork, which copies the page tables of the whole
    // harness — milliseconds for a harness holding thousands of tools, on
    // every connect. The shim sets its own parent-death signal (SIGHUP, which
    // it handles by killing its subtree) and sees our end of the socket close
    // if we died before it could. The socket's end is handed over by clearing
    // its close-on-exec flag while no other server is being spawned.
    let mut child = {
        let _one = SPAWNING.lock().unwrap_or_else(|e| e.into_inner());
        nix::fcntl::fcntl(
            &theirs,
            nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
        )
        .map_err(io::Error::from)?;
        let spawned = command.spawn();
        // Only the shim may hold its end: our copy would keep the socket open.
        drop(theirs);
        spawned.map_err(Unusable)?
    };
    ours.set_nonblocking(true)?;
    let ours = tokio::net::UnixStream::from_std(ours)?;
    let mut reader = tokio::io::BufReader::new(ours);
    let mut line = String::new();
    let read = tokio::time::timeout(SHIM_HANDSHAKE, reader.read_line(&mut line)).await;
    // On failure `ours` is dropped: the shim sees EOF and kills whatever it started.
    let ours = reader.into_inner().into_std()?;
    match read {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return Err(Failed(e)),
        Err(_) => {
            return Err(Failed(io::Error::other(
                "the process supervisor did not start in time",
            )));
        }
    }
    let mut words = line.trim_end().splitn(3, ' ');
    match (words.next(), words.next(), words.next()) {
        (Some("pid"), Some(pid), None) => {
            let pid = pid.parse::<u32>().map_err(io::Error::other)?;
            Ok((child, to_pid(pid)?, Some(ours)))
        }
        (Some(shim::STALE), None, None) => {
            let _ = child.wait().await;
            Err(Unusable(io::Error::other(
                "the standalone shim is from another build",
            )))
        }
        (Some("err"), Some(code), message) => {
            let _ = child.wait().await;
            Err(Failed(match code.parse::<i32>() {
                Ok(code) if code > 0 => io::Error::from_raw_os_error(code),
                _ => io::Error::other(message.unwrap_or("unknown error").to_string()),
            }))
        }
        // No report at all: the shim itself broke (a standalone one from some
        // other build may), so the harness's own is worth a try.
        _ => {
            let _ = child.wait().await;
            Err(Unusable(io::Error::other(
                "the process supervisor exited before starting the server",
            )))
        }
    }
}

/// Asks Linux to send `signal` to the child when the harness dies, even by
/// SIGKILL, and hands the child `keep_fd` (cleared of close-on-exec in the child
/// only, so no other child can inherit it).
///
/// The signal fires when the *thread* that spawned the child exits; servers are
/// spawned from tokio worker threads or the main thread, which live as long as the
/// runtime. Grandchildren are not covered (the setting is not inherited across
/// fork): that is the shim's job.
#[allow(unsafe_code)]
fn die_with_parent(command: &mut Command, signal: Signal, keep_fd: Option<i32>) {
    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs between fork and exec and only makes the
    // async-signal-safe syscalls fcntl(2), prctl(2) and getppid(2), and never
    // allocates (another thread may have held the allocator's lock at fork): its
    // errors are plain errno values. The fd it touches is owned by the harness
    // and open until after `spawn` returns.
    unsafe {
        command.pre_exec(move || {
            if let Some(fd) = keep_fd {
                let fd = std::os::fd::BorrowedFd::borrow_raw(fd);
                nix::fcntl::fcntl(
                    fd,
                    nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
                )?;
            }
            #[cfg(target_os = "linux")]
            nix::sys::prctl::set_pdeathsig(signal).map_err(io::Error::from)?;
            #[cfg(not(target_os = "linux"))]
            let _ = signal;
            // The parent may have died before prctl took effect.
            if nix::unistd::getppid() != parent {
                // std reports only the errno of a pre_exec error to the parent.
                return Err(io::Error::from(nix::errno::Errno::ESRCH));
            }
            Ok(())
        });
    }
}
