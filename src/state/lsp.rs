//! LSP requests handed to Lua, waiting for its `lsp_answer`: Lua answers
//! later, from the language servers' callbacks, so Neovim never blocks.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::oneshot;

use crate::mutex::lock;
use crate::nvim::seam::LspAnswer;

#[derive(Default)]
pub struct LspRequests {
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, oneshot::Sender<LspAnswer>>>,
}

impl LspRequests {
    /// A new request id, and where its answer arrives.
    pub fn open(&self) -> (u64, oneshot::Receiver<LspAnswer>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(id, tx);
        (id, rx)
    }

    /// Forgets request `id` (it timed out or failed to start).
    pub fn forget(&self, id: u64) {
        lock(&self.waiting).remove(&id);
    }

    /// Delivers Lua's answer; one for an unknown id is dropped.
    pub fn answer(&self, answer: LspAnswer) {
        if let Some(tx) = lock(&self.waiting).remove(&answer.id) {
            let _ = tx.send(answer);
        }
    }
}
