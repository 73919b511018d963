//! A model API on loopback for the provider tests: a raw HTTP/1.1 server (no
//! framework, so the tests decide exactly which bytes go out in which write)
//! that records every request and answers each from a script.
//!
//! Each reply's body is a list of chunks written one by one with a pause
//! between them, so they really arrive separately: with chunked transfer
//! encoding each chunk is its own HTTP chunk; with `Connection: close` the body
//! ends when the socket closes.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// How the body is framed on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `Transfer-Encoding: chunked`, properly terminated; the connection stays open.
    Chunked,
    /// Chunked, but the connection closes before the terminating chunk: the
    /// client sees the body break off.
    ChunkedCutOff,
    /// No length; `Connection: close` and the body ends at EOF.
    Close,
    /// `Content-Length`, all chunks counted.
    Length,
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub chunks: Vec<Vec<u8>>,
    pub pause: Duration,
    pub framing: Framing,
}

impl Reply {
    /// `200 text/event-stream`, chunked, one write per chunk.
    pub fn sse<C: Into<Vec<u8>>>(chunks: impl IntoIterator<Item = C>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks: chunks.into_iter().map(Into::into).collect(),
            pause: Duration::from_millis(3),
            framing: Framing::Chunked,
        }
    }

    /// A JSON body with a `Content-Length`, in one write.
    pub fn json(status: u16, body: &Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![body.to_string().into_bytes()],
            pause: Duration::ZERO,
            framing: Framing::Length,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn pause(mut self, pause: Duration) -> Self {
        self.pause = pause;
        self
    }

    pub fn framing(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self
    }
}

/// A request as the stub received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body as JSON, or `Value::Null` when it was not JSON.
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The running stub; stops (with every connection) when dropped.
pub struct ModelStub {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    /// Replies whose writing failed: the client went away mid-body.
    abandoned: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl ModelStub {
    /// Listens on an ephemeral loopback port and answers requests with
    /// `script`, in order, across connections. Past its end it answers 500.
    pub async fn start(script: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let recorded = Arc::clone(&requests);
        let abandoned = Arc::new(AtomicUsize::new(0));
        let gone = Arc::clone(&abandoned);
        let task = tokio::spawn(async move {
            // Owned here so aborting the accept loop also ends every connection.
            let mut connections = JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                let (script, recorded, gone) = (
                    Arc::clone(&script),
                    Arc::clone(&recorded),
                    Arc::clone(&gone),
                );
                connections.spawn(serve(stream, script, recorded, gone));
            }
        });
        Self {
            addr,
            requests,
            abandoned,
            task,
        }
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().expect("requests lock").clone()
    }

    /// How many replies the client stopped reading (a write failed).
    pub fn abandoned(&self) -> usize {
        self.abandoned.load(Ordering::SeqCst)
    }
}

impl Drop for ModelStub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A loopback URL nothing listens on: bound, then released.
pub async fn refused_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    drop(listener);
    format!("http://{addr}")
}

/// One SSE event: `event:` (when named) and one `data:` line, then a blank line.
pub fn sse_event(name: Option<&str>, data: &str) -> String {
    match name {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// `bytes` cut at each of `cuts` (byte offsets; unsorted and duplicates are fine).
pub fn split_at(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut cuts: Vec<usize> = cuts
        .iter()
        .copied()
        .filter(|&c| c > 0 && c < bytes.len())
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut chunks = Vec::new();
    let mut start = 0;
    for cut in cuts.into_iter().chain([bytes.len()]) {
        chunks.push(bytes[start..cut].to_vec());
        start = cut;
    }
    chunks
}

async fn serve(
    stream: TcpStream,
    script: Arc<Mutex<VecDeque<Reply>>>,
    requests: Arc<Mutex<Vec<Recorded>>>,
    abandoned: Arc<AtomicUsize>,
) {
    let _ = stream.set_nodelay(true);
    let mut stream = BufReader::new(stream);
    while let Some(request) = read_request(&mut stream).await {
        requests.lock().expect("requests lock").push(request);
        let reply = script.lock().expect("script lock").pop_front();
        let reply = reply.unwrap_or_else(|| {
            let body = serde_json::json!({"error": {"message": "model stub: script exhausted"}});
            Reply::json(500, &body)
        });
        let keep_open = matches!(reply.framing, Framing::Chunked | Framing::Length);
        let written = write_reply(stream.get_mut(), &reply).await;
        if written.is_err() {
            abandoned.fetch_add(1, Ordering::SeqCst);
        }
        if written.is_err() || !keep_open {
            let _ = stream.get_mut().shutdown().await;
            return;
        }
    }
}

async fn read_request(stream: &mut BufReader<TcpStream>) -> Option<Recorded> {
    let mut line = String::new();
    stream.read_line(&mut line).await.ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        line.clear();
        stream.read_line(&mut line).await.ok()?;
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    stream.read_exact(&mut body).await.ok()?;
    Some(Recorded {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

async fn write_reply(stream: &mut TcpStream, reply: &Reply) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {} Stub\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    match reply.framing {
        Framing::Chunked | Framing::ChunkedCutOff => {
            head.push_str("transfer-encoding: chunked\r\n")
        }
        Framing::Close => head.push_str("connection: close\r\n"),
        Framing::Length => {
            let length: usize = reply.chunks.iter().map(Vec::len).sum();
            head.push_str(&format!("content-length: {length}\r\n"));
        }
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.flush().await?;
    for chunk in reply.chunks.iter().filter(|c| !c.is_empty()) {
        tokio::time::sleep(reply.pause).await;
        if matches!(reply.framing, Framing::Chunked | Framing::ChunkedCutOff) {
            let mut framed = format!("{:x}\r\n", chunk.len()).into_bytes();
            framed.extend_from_slice(chunk);
            framed.extend_from_slice(b"\r\n");
            stream.write_all(&framed).await?;
        } else {
            stream.write_all(chunk).await?;
        }
        stream.flush().await?;
    }
    if reply.framing == Framing::Chunked {
        stream.write_all(b"0\r\n\r\n").await?;
        stream.flush().await?;
    }
    Ok(())
}
