//! Large diffs follow the person's edits: Lua sends the changed lines, the
//! host re-diffs in `spawn_blocking` and sends the new hunks back. Edits
//! that arrive during a diff are picked up by one more diff when it ends.

use std::sync::Arc;

use super::State;
use crate::diff::live::Edit;
use crate::nvim::seam::LuaCall;

impl State {
    /// Applies `edit` to its diff's copy and re-diffs unless a diff of it
    /// runs already.
    pub fn diff_edited(self: &Arc<State>, edit: Edit) {
        let id = edit.id;
        if self.live_diffs.edit(edit) {
            crate::task::spawn(rediff(self.clone(), id));
        }
    }
}

async fn rediff(state: Arc<State>, id: u64) {
    let mut next = state.live_diffs.snapshot(id);
    while let Some(snapshot) = next {
        let seq = snapshot.seq;
        match crate::task::spawn_blocking(move || snapshot.diff()).await {
            Ok(rediffed) => state.editor.push(LuaCall::DiffHunks {
                id,
                seq,
                hunks: rediffed.hunks,
                words: rediffed.words,
            }),
            Err(error) => tracing::warn!("re-diffing diff {id} failed: {error}"),
        }
        next = state.live_diffs.finished(id, seq);
    }
}
