//! The two sides of each open large-file diff, kept so that edits of either
//! buffer can be re-diffed here, off Neovim's UI thread. Lua sends only the
//! changed range of lines; the sides are shared with a running diff and
//! copied only when an edit arrives while one runs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::hunks::{DEADLINE, Hunk, line_hunks};
use super::text::LineText;
use super::words::words;

/// Which buffer of a diff changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Original,
    Proposed,
}

/// Lines `first..last` (0-based, end exclusive, as the host last saw them)
/// of one side became `lines`. `seq` counts Lua's edits of this diff.
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    pub id: u64,
    pub seq: u64,
    pub side: Side,
    pub first: usize,
    pub last: usize,
    pub lines: Vec<String>,
}

/// Both sides as of edit `seq`, to diff.
pub struct Snapshot {
    pub seq: u64,
    original: Arc<LineText>,
    proposed: Arc<LineText>,
}

/// A diff's new hunks and their word ranges (see [`super::words`]).
#[derive(Debug, PartialEq)]
pub struct Rediffed {
    pub hunks: Vec<Hunk>,
    pub words: Vec<u32>,
}

impl Snapshot {
    /// Diffs the two sides; CPU work, for `spawn_blocking`.
    pub fn diff(&self) -> Rediffed {
        let original: Vec<&str> = self.original.lines().collect();
        let proposed: Vec<&str> = self.proposed.lines().collect();
        let hunks = line_hunks(&original, &proposed, DEADLINE);
        let words = words(&original, &proposed, &hunks);
        Rediffed { hunks, words }
    }
}

struct Live {
    original: Arc<LineText>,
    proposed: Arc<LineText>,
    seq: u64,
    diffing: bool,
}

#[derive(Default)]
pub struct LiveDiffs {
    inner: Mutex<HashMap<u64, Live>>,
}

impl LiveDiffs {
    /// Starts keeping the sides of large diff `id` (shared, not copied).
    pub fn insert(&self, id: u64, original: Arc<LineText>, proposed: Arc<LineText>) {
        let live = Live {
            original,
            proposed,
            seq: 0,
            diffing: false,
        };
        self.lock().insert(id, live);
    }

    /// Forgets diff `id` (it was decided or closed).
    pub fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// Applies `edit`; true when the caller should start diffing (no diff
    /// of this id runs now; one that runs picks the edit up when it ends).
    pub fn edit(&self, edit: Edit) -> bool {
        let mut inner = self.lock();
        let Some(live) = inner.get_mut(&edit.id) else {
            return false;
        };
        let side = match edit.side {
            Side::Original => &mut live.original,
            Side::Proposed => &mut live.proposed,
        };
        Arc::make_mut(side).splice(edit.first, edit.last, &edit.lines);
        live.seq = live.seq.max(edit.seq);
        !std::mem::replace(&mut live.diffing, true)
    }

    /// The sides to diff now, if `id` is still open.
    pub fn snapshot(&self, id: u64) -> Option<Snapshot> {
        let inner = self.lock();
        let live = inner.get(&id)?;
        Some(Snapshot {
            seq: live.seq,
            original: live.original.clone(),
            proposed: live.proposed.clone(),
        })
    }

    /// A diff of `id` up to edit `seq` ended: the next snapshot when edits
    /// came in meanwhile, else `None` (and no diff runs any more).
    pub fn finished(&self, id: u64, seq: u64) -> Option<Snapshot> {
        let mut inner = self.lock();
        let live = inner.get_mut(&id)?;
        if live.seq == seq {
            live.diffing = false;
            return None;
        }
        Some(Snapshot {
            seq: live.seq,
            original: live.original.clone(),
            proposed: live.proposed.clone(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Live>> {
        crate::mutex::lock(&self.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::lines;

    fn edit(seq: u64, side: Side, first: usize, last: usize, text: &str) -> Edit {
        Edit {
            id: 1,
            seq,
            side,
            first,
            last,
            lines: lines(text),
        }
    }

    #[test]
    fn edits_are_spliced_and_rediffed() {
        let live = LiveDiffs::default();
        live.insert(
            1,
            Arc::new(LineText::from_lines(lines("a\nb\nc\nd"))),
            Arc::new(LineText::from_lines(lines("a\nB\nc\nd"))),
        );
        assert!(
            live.edit(edit(1, Side::Proposed, 1, 2, "b")),
            "starts a diff"
        );
        let snapshot = live.snapshot(1).unwrap();
        assert_eq!(snapshot.seq, 1);
        assert!(
            snapshot.diff().hunks.is_empty(),
            "the edit undid the change"
        );
        assert!(
            !live.edit(edit(2, Side::Proposed, 3, 3, "e")),
            "a diff runs: it picks the edit up"
        );
        let next = live.finished(1, 1).expect("edit 2 came in meanwhile");
        assert_eq!(next.seq, 2);
        let rediffed = next.diff();
        assert_eq!(
            rediffed.hunks,
            [Hunk {
                old_start: 3,
                old_len: 0,
                new_start: 3,
                new_len: 1
            }]
        );
        assert!(rediffed.words.is_empty());
        assert!(live.finished(1, 2).is_none());
        assert!(
            live.edit(edit(3, Side::Original, 0, 9, "x")),
            "ranges are clamped"
        );
        let rediffed = live.snapshot(1).unwrap().diff();
        assert_eq!(rediffed.hunks.len(), 1);
        assert_eq!(
            (rediffed.hunks[0].old_len, rediffed.hunks[0].new_len),
            (1, 5)
        );
        live.remove(1);
        assert!(!live.edit(edit(4, Side::Proposed, 0, 0, "y")));
        assert!(live.snapshot(1).is_none() && live.finished(1, 3).is_none());
    }
}
