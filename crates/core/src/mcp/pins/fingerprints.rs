//! Fingerprints computed on a blocking thread while later `tools/list` pages
//! are still in flight (as schemas are compiled), so checking 10,000 pins
//! costs the connect little more than the listing itself.

use std::sync::mpsc;

use super::PinHash;
use super::canonical::fingerprint;
use crate::mcp::published::PublishedTool;

/// Hashes the tools it is given, a page at a time.
pub struct Fingerprinter {
    queue: Option<mpsc::Sender<Vec<(usize, PublishedTool)>>>,
    worker: tokio::task::JoinHandle<Vec<Option<PinHash>>>,
}

impl Fingerprinter {
    pub fn start() -> Self {
        let (queue, pages) = mpsc::channel::<Vec<(usize, PublishedTool)>>();
        let worker = tokio::task::spawn_blocking(move || {
            let mut hashes = Vec::new();
            let mut scratch = Vec::new();
            for (index, tool) in pages.into_iter().flatten() {
                if hashes.len() <= index {
                    hashes.resize(index + 1, None);
                }
                hashes[index] = Some(fingerprint(&tool, &mut scratch));
            }
            hashes
        });
        Self {
            queue: Some(queue),
            worker,
        }
    }

    /// Tools by their index in the whole listing.
    pub fn submit(&self, tools: Vec<(usize, PublishedTool)>) {
        if let (Some(queue), false) = (&self.queue, tools.is_empty()) {
            let _ = queue.send(tools);
        }
    }

    /// Every fingerprint, by listing index (`None`: not submitted).
    pub async fn finish(mut self) -> Vec<Option<PinHash>> {
        drop(self.queue.take());
        (&mut self.worker).await.unwrap_or_default()
    }
}
