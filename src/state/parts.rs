//! A large diff reaches Lua in parts (see [`crate::diff::parts`]): its
//! lines while the host diffs them, then the hunks, a few calls under way
//! at a time.

use std::collections::VecDeque;

use super::State;
use crate::diff::parts::{Content, PARTS_IN_FLIGHT, hunk_parts};
use crate::diff::pending::DiffOutcome;
use crate::nvim::seam::LuaCall;

impl State {
    /// Sends a large diff's lines to Lua one bounded part at a time while
    /// the host diffs them, then the hunks; at most [`PARTS_IN_FLIGHT`]
    /// waiting, so Neovim runs keys and redraws between parts and never
    /// waits for the next (Lua puts parts that overtook others in place).
    /// Stops when the diff is gone; a part Lua fails on rejects the diff.
    pub(super) async fn send_parts(&self, id: u64, content: Content) {
        let diffing = self
            .live_diffs
            .snapshot(id)
            .map(|snapshot| crate::task::spawn_blocking(move || snapshot.diff()));
        let mut sender = PartSender::default();
        for part in content.line_parts() {
            if !self
                .part_taken(id, &mut sender, LuaCall::diff_part(id, &part))
                .await
            {
                return;
            }
        }
        drop(content);
        let rediffed = match diffing {
            Some(diffing) => diffing.await.map_err(|e| format!("diffing failed: {e}")),
            None => Err("the diff was closed".into()),
        };
        let rediffed = match rediffed {
            Ok(rediffed) => rediffed,
            Err(error) => return self.refuse_parts(id, error),
        };
        for part in hunk_parts(&rediffed.hunks, &rediffed.words) {
            if !self
                .part_taken(id, &mut sender, LuaCall::diff_part(id, &part))
                .await
            {
                return;
            }
        }
        drop(rediffed);
        // Parts under way at once can reach Neovim out of order; `done`
        // must come after all of them.
        if self.all_taken(id, &mut sender).await
            && self
                .part_taken(id, &mut sender, LuaCall::diff_parts_done(id))
                .await
        {
            self.all_taken(id, &mut sender).await;
        }
    }

    /// Waits for every part under way; false once the diff is gone.
    async fn all_taken(&self, id: u64, sender: &mut PartSender) -> bool {
        while let Some(reply) = sender.waiting.pop_front() {
            if !self.reply_taken(id, reply).await {
                return false;
            }
        }
        true
    }

    /// Sends `call`, after waiting for the oldest part once
    /// [`PARTS_IN_FLIGHT`] are under way; false once the diff is gone.
    async fn part_taken(&self, id: u64, sender: &mut PartSender, call: LuaCall) -> bool {
        if sender.waiting.len() >= PARTS_IN_FLIGHT {
            let oldest = sender.waiting.pop_front().expect("parts under way");
            if !self.reply_taken(id, oldest).await {
                return false;
            }
        }
        let editor = self.editor.clone();
        sender
            .waiting
            .push_back(crate::task::spawn(async move { editor.call(call).await }));
        true
    }

    async fn reply_taken(&self, id: u64, reply: PartReply) -> bool {
        match reply.await.map_err(|e| e.to_string()).and_then(|r| r) {
            Ok(nvim_rs::Value::Boolean(true)) => true,
            Ok(_) => false,
            Err(error) => {
                self.refuse_parts(id, error);
                false
            }
        }
    }

    /// Large diff `id` cannot be shown after all: the agent hears why.
    fn refuse_parts(&self, id: u64, error: String) {
        if let Some(diff) = self.diffs.take(id) {
            self.finish_diff(
                diff,
                DiffOutcome::rejected(format!("Neovim could not show the diff: {error}")),
            );
        }
    }
}

/// The answer to one part's seam call.
type PartReply = tokio::task::JoinHandle<Result<nvim_rs::Value, String>>;

/// The parts of one large diff under way.
#[derive(Default)]
struct PartSender {
    waiting: VecDeque<PartReply>,
}
