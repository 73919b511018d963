//! The session files' one writer: a line is handed over a channel and written
//! by one thread, with whatever else is waiting in the same `write`, so no
//! caller waits on the disk or on another caller (in `serve` a call's audit
//! record is on the call's path). [`Writer::flush`] returns once everything
//! handed over before it is written; dropping the writer writes the rest.
//! After a write the thread lingers a few milliseconds before it waits again,
//! so under a steady stream of calls a record is handed to a thread that is
//! not asleep (no wake-up, no context switch on the caller's path) and lines
//! go out in batches. What is lost is only what a SIGKILL catches between
//! the hand-over and the write: at most those few milliseconds.

use std::fs::File;
use std::io::Write;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

/// A session file.
#[derive(Debug, Clone, Copy)]
pub(super) enum Log {
    Transcript = 0,
    Audit = 1,
}

enum Job {
    Line {
        log: Log,
        record: Value,
        at: DateTime<Utc>,
    },
    Flush(SyncSender<()>),
}

pub(super) struct Writer {
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

/// Written in one go when this much is waiting.
const BATCH_BYTES: usize = 1 << 20;

/// How long the thread gathers lines after a write before it sleeps on the
/// channel again.
const LINGER: Duration = Duration::from_millis(5);

/// How long `flush` waits for a disk that does not answer.
const FLUSH_WAIT: Duration = Duration::from_secs(5);

impl Writer {
    /// Starts the writer of `transcript` and `audit`.
    pub(super) fn start(transcript: File, audit: File) -> std::io::Result<Self> {
        let (jobs, queue) = channel();
        let thread = std::thread::Builder::new()
            .name("session-writer".into())
            .spawn(move || write_until_closed([transcript, audit], queue))?;
        Ok(Self {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// Hands `record` over, to be written with a timestamp of now.
    pub(super) fn line(&self, log: Log, record: Value) {
        let at = Utc::now();
        if let Some(jobs) = &self.jobs {
            // Sent fails only when the thread is gone (it cannot panic).
            let _ = jobs.send(Job::Line { log, record, at });
        }
    }

    /// Returns once every line handed over before is written (or after a few
    /// seconds of a disk that does not answer).
    pub(super) fn flush(&self) {
        let Some(jobs) = &self.jobs else { return };
        let (done, wait) = sync_channel(1);
        if jobs.send(Job::Flush(done)).is_ok() && wait.recv_timeout(FLUSH_WAIT).is_err() {
            tracing::warn!("the session files were not written within {FLUSH_WAIT:?}");
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the channel ends the thread once it has written the rest.
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn write_until_closed(mut files: [File; 2], queue: Receiver<Job>) {
    let mut pending = [String::new(), String::new()];
    let mut done = Vec::new();
    while let Ok(job) = queue.recv() {
        take(job, &mut pending, &mut done);
        // Whatever else is waiting goes in the same write.
        while pending.iter().map(String::len).sum::<usize>() < BATCH_BYTES {
            let Ok(job) = queue.try_recv() else { break };
            take(job, &mut pending, &mut done);
        }
        for (file, text) in files.iter_mut().zip(&mut pending) {
            if text.is_empty() {
                continue;
            }
            // A full disk loses these lines (logged), never the session.
            if let Err(e) = file.write_all(text.as_bytes()) {
                tracing::warn!("cannot write the session file: {e}");
            }
            text.clear();
        }
        let flushed = !done.is_empty();
        for done in done.drain(..) {
            let _ = done.send(());
        }
        // A flush is the end of a burst (exit, a test): no point in waiting.
        if !flushed {
            std::thread::sleep(LINGER);
        }
    }
}

fn take(job: Job, pending: &mut [String; 2], done: &mut Vec<SyncSender<()>>) {
    match job {
        Job::Line {
            log,
            mut record,
            at,
        } => {
            if let Value::Object(map) = &mut record {
                map.insert("ts".into(), Value::String(at.to_rfc3339()));
            }
            // C1 controls and bidi characters as `\uXXXX`: `cat`-ing a log
            // cannot drive a terminal.
            let text = &mut pending[log as usize];
            text.push_str(&crate::sanitize::json::to_log_line(&record));
            text.push('\n');
        }
        Job::Flush(sender) => done.push(sender),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn files(dir: &std::path::Path) -> (File, File) {
        let open = |name| crate::private_dir::append(&dir.join(name)).unwrap();
        (open("transcript.jsonl"), open("audit.jsonl"))
    }

    fn records(path: &std::path::Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn lines_from_many_threads_are_whole_in_each_threads_order_after_a_flush() {
        let dir = tempfile::tempdir().unwrap();
        let (transcript, audit) = files(dir.path());
        let writer = Arc::new(Writer::start(transcript, audit).unwrap());
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let writer = Arc::clone(&writer);
                std::thread::spawn(move || {
                    for i in 0..500 {
                        let log = if i % 5 == 0 {
                            Log::Transcript
                        } else {
                            Log::Audit
                        };
                        writer.line(
                            log,
                            serde_json::json!({"t": t, "i": i, "pad": "x".repeat(i)}),
                        );
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        writer.flush();
        let audit = records(&dir.path().join("audit.jsonl"));
        let transcript = records(&dir.path().join("transcript.jsonl"));
        assert_eq!((audit.len(), transcript.len()), (8 * 400, 8 * 100));
        for t in 0..8 {
            let order: Vec<u64> = audit
                .iter()
                .filter(|r| r["t"] == t)
                .map(|r| r["i"].as_u64().unwrap())
                .collect();
            assert!(order.is_sorted(), "thread {t}: {order:?}");
        }
        assert!(audit.iter().all(|r| r["ts"].is_string()));
    }

    #[test]
    fn dropping_the_writer_writes_what_was_handed_over() {
        let dir = tempfile::tempdir().unwrap();
        let (transcript, audit) = files(dir.path());
        let writer = Writer::start(transcript, audit).unwrap();
        for i in 0..1000 {
            writer.line(Log::Audit, serde_json::json!({"i": i}));
        }
        drop(writer);
        assert_eq!(records(&dir.path().join("audit.jsonl")).len(), 1000);
    }
}
