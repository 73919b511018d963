//! `serve --stdio` beside a running control room: a host that spawns its
//! servers (Claude Code's `.mcp.json`, Cursor, VS Code, Codex) gets its calls
//! approved by the person at the TUI, not by `--approve`. The control room
//! (`mcp-harness --serve`) listens on an owner-only Unix socket named after its
//! config; a `serve --stdio` of the same user and config finds it there, says
//! which client it is, and from then on only passes bytes both ways. The
//! session itself — the handshake, the client's view, every call through the
//! hub's call path — is the control room's, exactly as over HTTP.
//!
//! The first line each way is the relay's own: `{"client":"NAME"}` from the
//! relay, `{"ok":true}` or `{"error":"…"}` back. Everything after it is MCP.

use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use tokio::io::{
    AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWriteExt as _, BufReader,
};
use tokio::net::{UnixListener, UnixStream};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::handler::GatewayHandler;
use super::{Changes, Shared, notify_changes};

/// The relay's hello and its answer are one short line each.
const HELLO_MAX: usize = 1024;
/// A peer that connects and says nothing is dropped after this long.
const HELLO_WAIT: Duration = Duration::from_secs(5);

/// Where the control room of the config file `config` (`None`: the embedded
/// default) listens: the user's runtime dir (`$XDG_RUNTIME_DIR/mcp-harness`),
/// else the data dir, both the user's alone. Named after the config file's
/// canonical path, so only a relay of the same config finds it.
pub fn socket_path(config: Option<&Path>) -> Option<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "mcp-harness")?;
    let dir = match dirs.runtime_dir() {
        Some(dir) => dir.to_path_buf(),
        None => crate::logging::data_dir()?,
    };
    let key = match config {
        Some(path) => {
            let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
            let digest = Sha256::digest(path.as_os_str().as_bytes());
            digest[..8].iter().map(|b| format!("{b:02x}")).collect()
        }
        None => "embedded".to_string(),
    };
    Some(dir.join(format!("control-{key}.sock")))
}

/// The relay's first line.
#[derive(Serialize, Deserialize)]
struct Hello {
    client: String,
}

/// The control room's answer to it.
#[derive(Serialize, Deserialize)]
struct Answer {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Why a relay could not start or a control room could not listen.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error("the control room refused client `{client}`: {why}")]
    Refused { client: String, why: String },
    #[error("the control room at {path} did not answer the relay's hello ({why})")]
    Silent { path: String, why: String },
    #[error("another control room of this config is running (its socket {0} answers)")]
    Taken(String),
    #[error("cannot listen on {path}: {error}")]
    Listen { path: String, error: std::io::Error },
}

/// The control room's socket; removed when dropped.
pub struct RelayListener {
    listener: UnixListener,
    path: PathBuf,
    /// The socket file's inode: a control room that is closing removes its
    /// own socket, never one a newer control room has bound there since.
    inode: Option<u64>,
}

impl RelayListener {
    /// Listens at `path` (its folder made owner-only, the socket 0600). A
    /// socket left there by a control room that died is replaced; one that
    /// answers belongs to a running control room, and is left to it.
    pub fn bind(path: &Path) -> Result<Self, RelayError> {
        let listen = |error| RelayError::Listen {
            path: path.display().to_string(),
            error,
        };
        if let Some(dir) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(listen)?;
        }
        if path.exists() {
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(RelayError::Taken(path.display().to_string()));
            }
            std::fs::remove_file(path).map_err(listen)?;
        }
        let listener = UnixListener::bind(path).map_err(listen)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(listen)?;
        Ok(Self {
            listener,
            path: path.to_path_buf(),
            inode: inode(path),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RelayListener {
    fn drop(&mut self) {
        if self.inode.is_some() && inode(&self.path) == self.inode {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn inode(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::symlink_metadata(path).ok().map(|m| m.ino())
}

/// The control room's side: serves each relayed client as a stdio session of
/// the gateway it was made from.
pub struct Relay {
    pub(super) shared: Arc<Shared>,
}

impl Relay {
    /// Serves relays on `listener` until `stop`. `changes`: when the gateway
    /// serves no HTTP (which tells every session of changes), the relay does.
    pub async fn serve(
        self,
        listener: RelayListener,
        changes: Option<Changes>,
        stop: CancellationToken,
    ) {
        let notifier = changes.map(|c| tokio::spawn(notify_changes(Arc::clone(&self.shared), c)));
        let mut sessions = JoinSet::new();
        loop {
            tokio::select! {
                () = stop.cancelled() => break,
                accepted = listener.listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    sessions.spawn(session(Arc::clone(&self.shared), stream, stop.child_token()));
                }
                Some(_) = sessions.join_next(), if !sessions.is_empty() => {}
            }
        }
        if let Some(notifier) = notifier {
            notifier.abort();
        }
        sessions.shutdown().await;
    }
}

/// One relayed client: checked, named, then served like `serve --stdio`.
async fn session(shared: Arc<Shared>, stream: UnixStream, stop: CancellationToken) {
    // The socket is owner-only already; the peer's uid says so again.
    let same_user = stream
        .peer_cred()
        .is_ok_and(|cred| cred.uid() == nix::unistd::getuid().as_raw());
    if !same_user {
        tracing::warn!("gateway relay: refused a peer of another user");
        return;
    }
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    let mut line = Vec::new();
    let hello = tokio::time::timeout(
        HELLO_WAIT,
        (&mut read)
            .take(HELLO_MAX as u64)
            .read_until(b'\n', &mut line),
    )
    .await;
    let client = match hello {
        Ok(Ok(_)) => serde_json::from_slice::<Hello>(&line)
            .ok()
            .map(|h| h.client),
        _ => None,
    };
    let answer = match &client {
        None => Err("the first line was not the relay's hello".to_string()),
        Some(name) if !shared.settings.clients.iter().any(|c| &c.name == name) => Err(format!(
            "no client `{name}` is configured in the control room's config"
        )),
        Some(_) => Ok(()),
    };
    let reply = match &answer {
        Ok(()) => Answer {
            ok: true,
            error: None,
        },
        Err(why) => Answer {
            ok: false,
            error: Some(why.clone()),
        },
    };
    let mut reply = serde_json::to_vec(&reply).unwrap_or_default();
    reply.push(b'\n');
    if write.write_all(&reply).await.is_err() || answer.is_err() {
        return;
    }
    let Some(client) = client else { return };
    tracing::info!(client, "gateway relay: a stdio host came in");
    let handler = GatewayHandler {
        live: Arc::new(super::SessionLive::new(&shared).into()),
        shared,
        stdio_client: Some(client.clone()),
    };
    match handler.serve_with_ct((read, write), stop).await {
        Ok(running) => {
            let _ = running.waiting().await;
        }
        Err(e) => tracing::info!(client, "gateway relay: the handshake failed: {e}"),
    }
}

/// The relay's side: the control room at `path` as client `client`, or `None`
/// when no control room listens there (the caller serves headless then).
pub async fn connect(path: &Path, client: &str) -> Result<Option<UnixStream>, RelayError> {
    let Ok(mut stream) = UnixStream::connect(path).await else {
        return Ok(None);
    };
    let silent = |why: String| RelayError::Silent {
        path: path.display().to_string(),
        why,
    };
    let mut hello = serde_json::to_vec(&Hello {
        client: client.to_string(),
    })
    .unwrap_or_default();
    hello.push(b'\n');
    stream
        .write_all(&hello)
        .await
        .map_err(|e| silent(e.to_string()))?;
    // Byte by byte: nothing after the answer's newline is read here.
    let answer = tokio::time::timeout(HELLO_WAIT, read_line(&mut stream))
        .await
        .map_err(|_| silent(format!("no answer within {}s", HELLO_WAIT.as_secs())))?
        .map_err(|e| silent(e.to_string()))?;
    let answer: Answer =
        serde_json::from_slice(&answer).map_err(|_| silent("an answer that is no JSON".into()))?;
    if answer.ok {
        Ok(Some(stream))
    } else {
        Err(RelayError::Refused {
            client: client.to_string(),
            why: answer.error.unwrap_or_default(),
        })
    }
}

async fn read_line(stream: &mut (impl AsyncRead + Unpin)) -> std::io::Result<Vec<u8>> {
    let mut line = Vec::new();
    loop {
        let byte = stream.read_u8().await?;
        if byte == b'\n' {
            return Ok(line);
        }
        if line.len() >= HELLO_MAX {
            return Err(std::io::Error::other("an answer longer than a line"));
        }
        line.push(byte);
    }
}

/// How a relay ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The host closed stdin, and the control room closed the session.
    HostLeft,
    /// The control room closed the session first (it quit).
    ControlRoomLeft,
}

/// Passes the host's stdin to the control room and its answers to stdout until
/// one side ends.
pub async fn pipe(stream: UnixStream) -> std::io::Result<Ended> {
    let (mut from_room, mut to_room) = stream.into_split();
    let (mut stdin, mut stdout) = super::host_io::host_stdio();
    let (host_left, mut host_gone) = tokio::sync::oneshot::channel::<()>();
    let up = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut stdin, &mut to_room).await;
        let _ = host_left.send(());
        // Half-closed: the control room ends the session, then the socket.
        let _ = to_room.shutdown().await;
    });
    let copied = tokio::io::copy(&mut from_room, &mut stdout).await;
    let _ = stdout.flush().await;
    up.abort();
    copied?;
    Ok(if host_gone.try_recv().is_ok() {
        Ended::HostLeft
    } else {
        Ended::ControlRoomLeft
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_running_control_rooms_socket_is_left_to_it_and_a_dead_ones_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run/control-test.sock");
        let first = RelayListener::bind(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let folder = std::fs::metadata(path.parent().unwrap()).unwrap();
        assert_eq!(folder.permissions().mode() & 0o777, 0o700);
        assert!(matches!(
            RelayListener::bind(&path),
            Err(RelayError::Taken(_))
        ));
        // A control room that died: its socket file stays, nobody answers.
        std::mem::forget(first);
        let listener = std::os::unix::net::UnixListener::bind(dir.path().join("x.sock")).unwrap();
        drop(listener);
        std::fs::rename(dir.path().join("x.sock"), &path).unwrap();
        let second = RelayListener::bind(&path).unwrap();
        assert!(path.exists());
        drop(second);
        assert!(!path.exists(), "a closing control room removes its socket");
    }

    #[tokio::test]
    async fn a_closing_control_room_leaves_a_newer_ones_socket_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("control-test.sock");
        let old = RelayListener::bind(&path).unwrap();
        // The newer control room took the path over (as after a stale check).
        std::fs::remove_file(&path).unwrap();
        let new = RelayListener::bind(&path).unwrap();
        drop(old);
        assert!(path.exists(), "the newer socket is still there");
        drop(new);
    }

    #[tokio::test]
    async fn no_control_room_means_none_and_a_refusal_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("control-test.sock");
        assert!(connect(&path, "cursor").await.unwrap().is_none());
        let listener = UnixListener::bind(&path).unwrap();
        let room = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let hello = read_line(&mut stream).await.unwrap();
            assert_eq!(hello, br#"{"client":"cursor"}"#);
            stream
                .write_all(b"{\"error\":\"no client `cursor` is configured\"}\n")
                .await
                .unwrap();
        });
        let refused = connect(&path, "cursor").await.unwrap_err();
        assert!(
            refused.to_string().contains("refused client `cursor`"),
            "{refused}"
        );
        room.await.unwrap();
    }

    #[test]
    fn each_config_has_its_own_socket() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.toml"), dir.path().join("b.toml"));
        let a = socket_path(Some(&a)).unwrap();
        let b = socket_path(Some(&b)).unwrap();
        assert_ne!(a, b);
        assert!(
            socket_path(None)
                .unwrap()
                .ends_with("control-embedded.sock")
        );
    }
}
