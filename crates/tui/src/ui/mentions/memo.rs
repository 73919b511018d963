//! The last completion, kept while what it came from is unchanged: each frame
//! and each key asks for it several times (the footer, the popup, the
//! reducer), and a server may list thousands of resources.

use std::cell::RefCell;
use std::sync::Arc;

use super::catalog::{Catalog, Picker, Token};
use super::complete::{Completion, completion};
use crate::protocol::ServerView;

#[derive(Default)]
pub struct Memo {
    last: RefCell<Option<(Key, Option<Completion>)>>,
}

/// What a completion is computed from.
struct Key {
    lines: Vec<String>,
    cursor: (usize, usize),
    /// Held, so a later list can never reuse its address.
    servers: Arc<[ServerView]>,
    catalog: u64,
    dismissed: Option<Token>,
}

impl Key {
    fn same(&self, other: &Key) -> bool {
        self.cursor == other.cursor
            && self.catalog == other.catalog
            && Arc::ptr_eq(&self.servers, &other.servers)
            && self.dismissed == other.dismissed
            && self.lines == other.lines
    }
}

impl Memo {
    /// [`completion`] of these, computed again only when one of them changed.
    pub fn get(
        &self,
        lines: &[String],
        cursor: (usize, usize),
        servers: &Arc<[ServerView]>,
        catalog: &Catalog,
        picker: &Picker,
    ) -> Option<Completion> {
        let key = Key {
            lines: lines.to_vec(),
            cursor,
            servers: Arc::clone(servers),
            catalog: catalog.generation(),
            dismissed: picker.dismissed.clone(),
        };
        let mut last = self.last.borrow_mut();
        if let Some((built_for, completion)) = last.as_ref()
            && built_for.same(&key)
        {
            return completion.clone();
        }
        let fresh = completion(lines, cursor, servers, catalog, picker);
        *last = Some((key, fresh.clone()));
        fresh
    }
}
