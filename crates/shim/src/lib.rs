//! The supervisor between the harness and each stdio server: the standalone
//! `mcp-harness-shim` binary beside the harness, or `mcp-harness __shim` when
//! that binary is missing or from another build.
//!
//! Why: a process group and a parent-death signal do not catch everything. A
//! grandchild that calls `setsid()` leaves the server's group, and a parent-death
//! signal is not inherited across `fork`, so when the harness is SIGKILLed the
//! server dies but its grandchildren live on. The shim closes both gaps:
//!
//! - it is a **child subreaper** (`PR_SET_CHILD_SUBREAPER`): every process the
//!   server starts stays in the shim's subtree, even after `setsid()` or a
//!   double fork, because orphans are re-parented to the shim, not to init;
//! - it **dies with the harness** without being killed outright: the harness
//!   holds the other end of a control socket (fd `ctrl` here), which the kernel
//!   closes on *every* exit of the harness, SIGKILL included; the shim also gets
//!   SIGHUP as its parent-death signal. Either way it kills its whole subtree;
//! - when the server exits (or is killed), the shim kills what the server left
//!   behind, reaps it, and exits with the server's own status (same code, same
//!   signal), so the watchdog reports how the *server* ended.
//!
//! The shim holds no pipe of the server (it hands stdin/stdout/stderr over and
//! points its own at /dev/null), so EOF on stdout still means the server is gone.
//! It is single-threaded and blocking: signals arrive through a signalfd, and one
//! `poll` waits for a signal or the control socket.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io::Write as _;
use std::os::fd::{AsFd, FromRawFd as _, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt as _;
use std::process::{Command, ExitCode};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, FdFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, SigmaskHow, Signal, kill, killpg, sigprocmask};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{Pid, getpid, getppid};

/// `argv[1]` that turns the harness binary into the shim (and that the
/// standalone shim expects too, so both show `__shim` in a process list).
pub const SHIM_ARG: &str = "__shim";

/// The standalone shim's file name, beside the harness binary.
pub const STANDALONE: &str = "mcp-harness-shim";

/// What the standalone shim writes on the control socket, instead of a pid,
/// when the harness's fingerprint is not its own. Part of the contract with
/// every build: the harness then falls back to its own `__shim`.
pub const STALE: &str = "stale";

/// This build of the shim: the crate's version and a hash of this file. The
/// harness passes its own; a standalone binary from another build (a stale one
/// beside a harness rebuilt by `cargo run`) refuses to run a server.
pub const FINGERPRINT: &str = match std::str::from_utf8(&FINGERPRINT_HEX) {
    Ok(text) => text,
    Err(_) => panic!("hex digits are ASCII"),
};

const FINGERPRINT_HEX: [u8; 16] = hex(fnv1a(
    include_bytes!("lib.rs"),
    fnv1a(env!("CARGO_PKG_VERSION").as_bytes(), 0xcbf2_9ce4_8422_2325),
));

const fn fnv1a(bytes: &[u8], mut hash: u64) -> u64 {
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    hash
}

const fn hex(mut value: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    let mut i = 16;
    while i > 0 {
        i -= 1;
        let digit = (value & 0xf) as u8;
        out[i] = if digit < 10 {
            b'0' + digit
        } else {
            b'a' + digit - 10
        };
        value >>= 4;
    }
    out
}

/// Signals the shim handles through its signalfd instead of dying of them.
/// SIGUSR1 and SIGUSR2 are passed on to the server: a person who signals the
/// process above the server (it carries the server's command line) meant it.
const HANDLED: [Signal; 7] = [
    Signal::SIGCHLD,
    Signal::SIGHUP,
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGQUIT,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
];

/// Entry point: `__shim CTRL_FD COMMAND [ARGS…]` (from `main`, before anything else:
/// no runtime, no logging). Never returns normally when the server ran.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let mut args = args.into_iter();
    let ctrl = args.next().as_deref().and_then(fd_number);
    let (Some(ctrl), Some(command)) = (ctrl, args.next()) else {
        eprintln!("mcp-harness {SHIM_ARG}: usage: {SHIM_ARG} CTRL_FD COMMAND [ARGS…] (internal)");
        return ExitCode::from(2);
    };
    if let Err(problem) = check_ctrl(ctrl) {
        eprintln!(
            "mcp-harness {SHIM_ARG}: CTRL_FD {ctrl} {problem}; this command is internal: the \
             harness starts it with the control socket at that fd"
        );
        return ExitCode::from(2);
    }
    let ctrl = adopt_ctrl(ctrl);
    let mut ctrl = UnixStream::from(ctrl);
    match supervise(&mut ctrl, command, args.collect()) {
        Ok(status) => mirror(status),
        Err(error) => {
            // The harness reads this line and reports a spawn failure.
            let code = error.raw_os_error().unwrap_or(-1);
            let _ = writeln!(ctrl, "err {code} {error}");
            ExitCode::from(127)
        }
    }
}

/// Entry point of the standalone binary: `__shim FINGERPRINT CTRL_FD COMMAND
/// [ARGS…]`. With another build's fingerprint it says [`STALE`] on the control
/// socket and runs nothing.
pub fn standalone(args: Vec<OsString>) -> ExitCode {
    let mut args = args.into_iter();
    if args.next().as_deref() != Some(OsStr::new(SHIM_ARG)) {
        eprintln!(
            "{STANDALONE}: usage: {STANDALONE} {SHIM_ARG} FINGERPRINT CTRL_FD COMMAND [ARGS…] \
             (internal: the harness starts it for each stdio server)"
        );
        return ExitCode::from(2);
    }
    let fingerprint = args.next();
    let rest: Vec<OsString> = args.collect();
    if fingerprint.as_deref() == Some(OsStr::new(FINGERPRINT)) {
        return main(rest);
    }
    let ctrl = rest.first().map(OsString::as_os_str).and_then(fd_number);
    if let Some(fd) = ctrl.filter(|fd| check_ctrl(*fd).is_ok()) {
        let _ = writeln!(UnixStream::from(adopt_ctrl(fd)), "{STALE}");
    }
    eprintln!(
        "{STANDALONE}: this binary is from another build than the harness that started it \
         (fingerprint {FINGERPRINT}); rebuild both, e.g. `cargo build --release`"
    );
    ExitCode::from(2)
}

/// A file descriptor's number as an argument spells it.
fn fd_number(arg: &OsStr) -> Option<i32> {
    arg.to_str()?.parse().ok()
}

/// Whether `fd` is what the harness passes: an open socket above the standard
/// streams. Anything else (a number typed by hand, a file) would be adopted,
/// written to and closed as if it were the control socket.
fn check_ctrl(fd: i32) -> Result<(), &'static str> {
    use std::os::unix::fs::FileTypeExt as _;
    if fd <= 2 {
        return Err("is a standard stream, not a control socket");
    }
    // The fd's own file, without adopting it (nothing unsafe before we know).
    let dir = if cfg!(target_os = "linux") {
        "/proc/self/fd"
    } else {
        "/dev/fd"
    };
    match std::fs::metadata(format!("{dir}/{fd}")) {
        Ok(meta) if meta.file_type().is_socket() => Ok(()),
        Ok(_) => Err("is open but not a socket"),
        Err(_) => Err("is not an open file descriptor"),
    }
}

/// Takes ownership of the control socket the harness passed as an inherited fd.
#[allow(unsafe_code)]
fn adopt_ctrl(fd: i32) -> OwnedFd {
    // SAFETY: `check_ctrl` saw an open socket at this fd number; the harness put
    // it there for us (and cleared its close-on-exec flag only in our child);
    // nothing else in this process owns or closes it.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// Starts the server and supervises it until it and all it started are gone.
fn supervise(
    ctrl: &mut UnixStream,
    command: OsString,
    args: Vec<OsString>,
) -> std::io::Result<WaitStatus> {
    // Not for the server: it must not inherit (or hold open) the control socket.
    fcntl(ctrl.as_fd(), FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
    // The harness spawns us without a `pre_exec` (see `process.rs`): the
    // parent-death signal is ours to set. Had the harness died before this, its
    // end of the control socket is closed already and the loop below stops at once.
    #[cfg(target_os = "linux")]
    nix::sys::prctl::set_pdeathsig(Signal::SIGHUP)?;
    #[cfg(target_os = "linux")]
    nix::sys::prctl::set_child_subreaper(true)?;
    let mut mask = SigSet::empty();
    for signal in HANDLED {
        mask.add(signal);
    }
    mask.thread_block()?;
    let signals = SignalFd::with_flags(&mask, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)?;
    let server = spawn_server(command, args)?;
    // From here on every path ends in `sweep`, so nothing the server started survives.
    let _ = writeln!(ctrl, "pid {}", server.as_raw());
    let _ = release_stdio();
    let mut status = None;
    loop {
        let (signal_ready, ctrl_ready) = {
            let mut fds = [
                PollFd::new(signals.as_fd(), PollFlags::POLLIN),
                PollFd::new(ctrl.as_fd(), PollFlags::POLLIN),
            ];
            match poll(&mut fds, PollTimeout::NONE) {
                Ok(_) | Err(Errno::EINTR) => {}
                Err(_) => break,
            }
            let ready = |fd: &PollFd| fd.revents().is_some_and(|r| !r.is_empty());
            (ready(&fds[0]), ready(&fds[1]))
        };
        if ctrl_ready {
            // The harness never writes: readable means it closed its end or died.
            break;
        }
        if signal_ready && drain_signals(&signals, server, &mut status) {
            break;
        }
    }
    sweep(server, &mut status);
    Ok(status.unwrap_or(WaitStatus::Signaled(server, Signal::SIGKILL, false)))
}

/// Reads pending signals. True when the shim should stop: the server exited, or
/// a stop signal (SIGHUP is the parent-death signal) arrived.
fn drain_signals(signals: &SignalFd, server: Pid, status: &mut Option<WaitStatus>) -> bool {
    let mut stop = false;
    while let Ok(Some(info)) = signals.read_signal() {
        match Signal::try_from(info.ssi_signo as i32) {
            Ok(Signal::SIGCHLD) => stop |= reap(server, status),
            Ok(user @ (Signal::SIGUSR1 | Signal::SIGUSR2)) => {
                let _ = kill(server, user);
            }
            Ok(_) => stop = true,
            Err(_) => {}
        }
    }
    stop
}

/// Reaps every exited child without blocking (orphans re-parented to us too).
/// True when the server itself has exited.
fn reap(server: Pid, status: &mut Option<WaitStatus>) -> bool {
    loop {
        match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) | Err(_) => return status.is_some(),
            Ok(ws) if ws.pid() == Some(server) => *status = Some(ws),
            Ok(_) => {}
        }
    }
}

fn spawn_server(command: OsString, args: Vec<OsString>) -> std::io::Result<Pid> {
    let mut cmd = Command::new(command);
    // stdio is inherited: the harness's pipes go straight to the server.
    cmd.args(args).process_group(0);
    let shim = getpid();
    #[allow(unsafe_code)]
    // SAFETY: runs between fork and exec, only makes the async-signal-safe
    // syscalls sigprocmask(2), prctl(2) and getppid(2), and never allocates
    // (its errors are plain errno values).
    unsafe {
        cmd.pre_exec(move || {
            // Our blocked signals must not stay blocked in the server.
            sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
            // If the shim itself is SIGKILLed, at least the server goes with it.
            #[cfg(target_os = "linux")]
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            if getppid() != shim {
                // The shim is gone; std reports only the errno to the parent.
                return Err(std::io::Error::from(nix::errno::Errno::ESRCH));
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    let pid = i32::try_from(child.id()).map_err(std::io::Error::other)?;
    // The std handle is dropped without waiting: `reap` and `sweep` do that.
    Ok(Pid::from_raw(pid))
}

/// Points the shim's own stdin/stdout/stderr at /dev/null, so only the server
/// (and what it starts) holds the harness's pipes.
fn release_stdio() -> std::io::Result<()> {
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    nix::unistd::dup2_stdin(&null)?;
    nix::unistd::dup2_stdout(&null)?;
    nix::unistd::dup2_stderr(&null)?;
    Ok(())
}

/// SIGKILLs every descendant and reaps until the shim has no child left. Orphans
/// of killed processes are re-parented to the shim (it is their subreaper), so
/// "no child" means "no descendant": a process forked during the sweep is caught
/// on the next round.
fn sweep(server: Pid, status: &mut Option<WaitStatus>) {
    loop {
        if status.is_none() {
            // The server's group first: one syscall for the common case.
            let _ = killpg(server, Signal::SIGKILL);
        }
        for pid in descendants(getpid()) {
            let _ = kill(pid, Signal::SIGKILL);
        }
        match waitpid(Pid::from_raw(-1), None) {
            Ok(ws) if ws.pid() == Some(server) => *status = Some(ws),
            Ok(_) | Err(Errno::EINTR) => {}
            // ECHILD: nothing left.
            Err(_) => return,
        }
    }
}

/// Every live descendant of `root`, from `/proc/*/stat` parent links.
pub fn descendants(root: Pid) -> Vec<Pid> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        if let Some(ppid) = parent_of(&stat) {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut found = Vec::new();
    let mut queue = vec![root.as_raw()];
    while let Some(pid) = queue.pop() {
        for &child in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
            found.push(Pid::from_raw(child));
            queue.push(child);
        }
    }
    found
}

/// The parent pid from a `/proc/PID/stat` line: the field after the state, after
/// the last `)` (the command name may itself contain spaces and parentheses).
fn parent_of(stat: &str) -> Option<i32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Ends the shim the way the server ended, so the harness sees the server's status.
fn mirror(status: WaitStatus) -> ExitCode {
    match status {
        WaitStatus::Exited(_, code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        WaitStatus::Signaled(_, signal, _) => {
            // Default disposition (never changed) and unblocked: the signal ends us.
            let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None);
            let _ = kill(getpid(), signal);
            ExitCode::from(128u8.saturating_add(signal as u8))
        }
        _ => ExitCode::from(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_pid_survives_odd_command_names() {
        assert_eq!(parent_of("42 (a) b) S 7 42 42 0"), Some(7));
        assert_eq!(parent_of("42 (sleep) S 1 42 42 0"), Some(1));
        assert_eq!(parent_of("garbage"), None);
    }

    #[test]
    fn our_own_children_are_descendants() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = Pid::from_raw(child.id() as i32);
        assert!(descendants(getpid()).contains(&pid));
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
