//! Compiled validators: identical schemas share one, and compilation runs on a
//! blocking thread while `tools/list` pages are still arriving, so a large server
//! costs little more than its listing.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc;

use jsonschema::Validator;
use serde_json::Value;

use super::schema::{self, SchemaProblem};

pub type Compiled = Result<Arc<Validator>, SchemaProblem>;

/// Each distinct schema compiled once (keyed by value, so equal schemas of
/// different tools share a validator). foldhash, seeded per process: hashing
/// whole schemas with SipHash cost more than the listing itself.
#[derive(Default)]
pub struct ValidatorCache {
    by_schema: HashMap<Arc<Value>, Compiled, foldhash::fast::RandomState>,
}

impl ValidatorCache {
    pub fn get_or_compile(&mut self, schema: &Arc<Value>) -> Compiled {
        if let Some(done) = self.by_schema.get(schema) {
            return done.clone();
        }
        let compiled = schema::compile(schema).map(Arc::new);
        self.by_schema.insert(Arc::clone(schema), compiled.clone());
        compiled
    }
}

/// Compiles schemas on a blocking thread as they are submitted (a page at a time,
/// so the thread wakes once per page, not once per tool). One thread: on
/// a small machine the listing itself keeps the other cores busy, and more
/// compile threads only contend with it (measured: docs/src/performance.md).
pub struct Precompiler {
    queue: Option<mpsc::Sender<Vec<Arc<Value>>>>,
    worker: tokio::task::JoinHandle<Precompiled>,
}

impl Precompiler {
    pub fn start() -> Self {
        let (queue, pages) = mpsc::channel::<Vec<Arc<Value>>>();
        let worker = tokio::task::spawn_blocking(move || {
            let mut cache = ValidatorCache::default();
            let mut done = Vec::new();
            for schema in pages.into_iter().flatten() {
                let compiled = cache.get_or_compile(&schema);
                done.push((schema, compiled));
            }
            Precompiled(done)
        });
        Self {
            queue: Some(queue),
            worker,
        }
    }

    pub fn submit(&self, schemas: Vec<Arc<Value>>) {
        if let (Some(queue), false) = (&self.queue, schemas.is_empty()) {
            let _ = queue.send(schemas);
        }
    }

    /// Everything compiled, in submission order (the queue is drained first).
    pub async fn finish(mut self) -> Precompiled {
        drop(self.queue.take());
        (&mut self.worker).await.unwrap_or_default()
    }
}

/// Results of a [`Precompiler`], in submission order.
#[derive(Default)]
pub struct Precompiled(Vec<(Arc<Value>, Compiled)>);

impl Precompiled {
    /// The result for the `index`-th submitted schema, if that was this very
    /// schema (same allocation) — no hashing needed on the way out.
    pub fn get(&self, index: usize, schema: &Arc<Value>) -> Option<Compiled> {
        self.0
            .get(index)
            .filter(|(s, _)| Arc::ptr_eq(s, schema))
            .map(|(_, c)| c.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn identical_schemas_share_one_validator() {
        let pre = Precompiler::start();
        let a = Arc::new(json!({"type": "object"}));
        let b = Arc::new(json!({"type": "object"}));
        pre.submit(vec![Arc::clone(&a), Arc::clone(&b)]);
        let done = pre.finish().await;
        let (va, vb) = (
            done.get(0, &a).unwrap().unwrap(),
            done.get(1, &b).unwrap().unwrap(),
        );
        assert!(Arc::ptr_eq(&va, &vb), "equal schemas share one validator");
        assert!(
            done.get(0, &b).is_none(),
            "results are matched by allocation"
        );
    }
}
