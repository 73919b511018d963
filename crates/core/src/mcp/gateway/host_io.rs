//! The host's stdin and stdout for `serve --stdio`, as non-blocking streams.
//!
//! `tokio::io::stdin()`/`stdout()` hand every read and write to tokio's
//! blocking pool: a thread hop each way per message, which profiled as most
//! of `serve --stdio`'s cost per call (two pool threads waking per line).
//! Hosts written in Node (Claude Code, Cursor, VS Code) give their servers
//! socket pairs, not pipes, so rmcp's `stdio_pipes` (FIFOs only) falls back
//! to those blocking handles. A socket can be driven by the reactor like any
//! other: that is this module. Anything else (a FIFO, a file, a terminal)
//! goes to `stdio_pipes`, which reopens FIFOs non-blocking and keeps the
//! blocking handles for the rest.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;

use tokio::io::{AsyncRead, AsyncWrite};

/// What the gateway reads the host's messages from.
pub type HostReader = Box<dyn AsyncRead + Send + Unpin>;
/// What the gateway writes its messages to.
pub type HostWriter = Box<dyn AsyncWrite + Send + Unpin>;

/// The process's stdin and stdout, driven by the reactor when they are
/// sockets. Needs a running tokio runtime.
pub fn host_stdio() -> (HostReader, HostWriter) {
    match (socket(io::stdin().as_fd()), socket(io::stdout().as_fd())) {
        (Some(input), Some(output)) => (Box::new(input), Box::new(output)),
        _ => {
            let (reader, writer) = rmcp::transport::stdio_pipes();
            (Box::new(reader), Box::new(writer))
        }
    }
}

/// `fd` as a non-blocking tokio stream when it is a socket. The socket is
/// duplicated, so `O_NONBLOCK` lands on its open file description, which
/// this process alone holds for the host's end: its children get their own
/// pipes, never the harness's stdio.
fn socket(fd: std::os::fd::BorrowedFd<'_>) -> Option<tokio::net::UnixStream> {
    let owned: OwnedFd = fd.try_clone_to_owned().ok()?;
    let file = std::fs::File::from(owned);
    if !file.metadata().ok()?.file_type().is_socket() {
        return None;
    }
    let stream = std::os::unix::net::UnixStream::from(OwnedFd::from(file));
    stream.set_nonblocking(true).ok()?;
    tokio::net::UnixStream::from_std(stream).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    #[tokio::test]
    async fn a_socket_is_driven_by_the_reactor_and_anything_else_is_not_taken() {
        let (ours, mut theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut stream = socket(ours.as_fd()).expect("a socket is taken");
        std::io::Write::write_all(&mut theirs, b"ping\n").unwrap();
        let mut got = [0u8; 5];
        stream.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping\n");
        stream.write_all(b"pong\n").await.unwrap();
        let mut back = [0u8; 5];
        std::io::Read::read_exact(&mut theirs, &mut back).unwrap();
        assert_eq!(&back, b"pong\n");

        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::File::create(dir.path().join("f")).unwrap();
        assert!(
            socket(file.as_fd()).is_none(),
            "a regular file is left to stdio_pipes"
        );
        let (pipe_read, _pipe_write) = std::io::pipe().unwrap();
        assert!(
            socket(pipe_read.as_fd()).is_none(),
            "a pipe is left to stdio_pipes"
        );
    }
}
