//! A large diff reaches Neovim in parts (see [`crate::diff::parts`]): its
//! lines, straight into the diff's two buffers while the host diffs them,
//! then the hunks, to Lua, a few calls under way at a time.

use std::collections::VecDeque;

use super::State;
use crate::diff::parts::{Content, LinePart, PARTS_IN_FLIGHT, hunk_parts};
use crate::diff::pending::DiffOutcome;
use crate::nvim::seam::LuaCall;

/// The two buffers of a large diff, as Lua's `open_diff` made them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffBuffers {
    pub original: i64,
    pub proposed: i64,
}

impl DiffBuffers {
    /// `{original, proposed}` from `open_diff`'s answer.
    pub fn of(answer: &nvim_rs::Value) -> Option<DiffBuffers> {
        let field = |name: &str| {
            answer
                .as_map()?
                .iter()
                .find(|(key, _)| key.as_str() == Some(name))?
                .1
                .as_i64()
        };
        Some(DiffBuffers {
            original: field("original")?,
            proposed: field("proposed")?,
        })
    }
}

impl State {
    /// Sends a large diff's lines into `buffers` one bounded part at a time
    /// while the host diffs them, then the hunks to Lua; Neovim runs keys and
    /// redraws between parts and never waits long for the next. Stops once
    /// the diff is decided or gone; a part Neovim fails on rejects the diff.
    pub(super) async fn send_parts(&self, id: u64, content: Content, buffers: DiffBuffers) {
        let diffing = self
            .live_diffs
            .snapshot(id)
            .map(|snapshot| crate::task::spawn_blocking(move || snapshot.diff()));
        if !self.fill_buffers(id, &content, buffers).await {
            return;
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
        let mut sender = PartSender::default();
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

    /// Puts both sides' lines into their buffers, one part of each side
    /// under way at a time: a side's parts then arrive in order (calls
    /// under way at once can overtake each other), and Neovim has the
    /// other side's part to take while the host sends the next. False once
    /// the diff is decided or gone.
    async fn fill_buffers(&self, id: u64, content: &Content, buffers: DiffBuffers) -> bool {
        let [original, proposed] = content.line_parts().map(VecDeque::from);
        let mut sides: [(VecDeque<LinePart<'_>>, i64, Option<FillReply>); 2] = [
            (original, buffers.original, None),
            (proposed, buffers.proposed, None),
        ];
        loop {
            let mut under_way = false;
            for (parts, buf, waiting) in &mut sides {
                if let Some(reply) = waiting.take()
                    && !self.line_part_taken(id, reply).await
                {
                    return false;
                }
                let Some(part) = parts.pop_front() else {
                    continue;
                };
                if !self.diffs.is_pending(id) {
                    return false;
                }
                *waiting = Some(crate::task::spawn(self.editor.fill_lines(*buf, &part)));
                under_way = true;
            }
            if !under_way {
                return true;
            }
        }
    }

    async fn line_part_taken(&self, id: u64, reply: FillReply) -> bool {
        match reply.await.map_err(|e| e.to_string()).and_then(|r| r) {
            Ok(()) => true,
            Err(error) => {
                self.refuse_parts(id, error);
                false
            }
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
    pub(super) fn refuse_parts(&self, id: u64, error: String) {
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
/// The answer to one part of a side's lines.
type FillReply = tokio::task::JoinHandle<Result<(), String>>;

/// The parts of one large diff under way.
#[derive(Default)]
struct PartSender {
    waiting: VecDeque<PartReply>,
}
