//! Line diffs of large files, computed in the host: Neovim's own diff mode
//! takes seconds on the UI thread for a 4 MB file with many changes.

use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};

/// When the larger side has more bytes than this, a diff is computed here
/// and Lua draws it (the large-file view) without Neovim's diff mode.
pub const HOST_DIFF_BYTES: usize = 192 * 1024;
/// Below [`HOST_DIFF_BYTES`], what Neovim's diff mode costs the UI thread
/// decides. Measured (CPU time of `:diffthis`, Neovim 0.11.4): about
/// 0.43 µs a line plus 4.5 ns a line for each hunk (its folds look the
/// hunks up for every line), so 4,000 lines cost 1.7 ms unchanged and
/// 7.7 ms with a change every 10th line, 1,000 lines 2.4 ms with every
/// other line changed. A frame at 120 Hz is 8 ms, and opening also decodes
/// and fills both buffers and redraws: diff mode gets at most
/// [`DIFF_MODE_LINES`] lines a side and [`DIFF_MODE_WORK`] lines × hunks,
/// about 4 ms. Each edit of a side costs diff mode the same again.
pub const DIFF_MODE_LINES: usize = 4000;
/// See [`DIFF_MODE_LINES`].
pub const DIFF_MODE_WORK: usize = 500_000;
/// A diff that takes longer comes out coarser rather than later.
pub const DEADLINE: Duration = Duration::from_secs(2);

/// Whether sides this large (bytes) go to the large-file view whatever
/// their changes.
pub fn is_large(old_bytes: usize, new_bytes: usize) -> bool {
    old_bytes.max(new_bytes) > HOST_DIFF_BYTES
}

/// Whether Neovim's diff mode would stall the UI for more than a few
/// milliseconds on these sides (lines, at most [`HOST_DIFF_BYTES`] each):
/// too many lines, or too many lines for their number of hunks. Diffs up to
/// [`DIFF_MODE_LINES`] lines here, a millisecond or two: call it off the
/// async runtime.
pub fn diff_mode_stalls(old: &[&str], new: &[&str]) -> bool {
    let lines = old.len().max(new.len());
    if lines > DIFF_MODE_LINES {
        return true;
    }
    let hunks = line_hunks(old, new, DEADLINE).len();
    lines * hunks > DIFF_MODE_WORK
}

/// Lines `old_start..old_start + old_len` became `new_start..new_start + new_len`
/// (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
}

/// Lua draws hunks from `[old_start, old_len, new_start, new_len]`.
impl serde::Serialize for Hunk {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        [self.old_start, self.old_len, self.new_start, self.new_len].serialize(serializer)
    }
}

/// The changed regions between two texts' lines, in order; deletions and
/// insertions that touch are one hunk.
pub fn hunks(old: &[String], new: &[String], deadline: Duration) -> Vec<Hunk> {
    line_hunks(&as_strs(old), &as_strs(new), deadline)
}

/// [`hunks`] of lines borrowed from wherever they are held.
pub fn line_hunks(old: &[&str], new: &[&str], deadline: Duration) -> Vec<Hunk> {
    let deadline = Instant::now().checked_add(deadline);
    let mut out = Vec::new();
    hunks_of_piece(old, new, (0, 0), deadline, &mut out);
    out
}

/// Sides longer than this are diffed in pieces: `similar`'s patience diff
/// holds about 250 bytes a line while it runs, 16 MiB for a 4 MB file,
/// more than the two sides themselves.
const PIECE_LINES: usize = 16 * 1024;
/// Lines around the middle of the old side tried as the cut between pieces.
const CUT_TRIES: usize = 64;

/// The hunks of `old` and `new`, which start at rows `at` of the whole
/// sides, appended to `out`. Large sides are cut in two at a line the
/// diff would keep (see [`cut`]) and each half diffed on its own.
fn hunks_of_piece(
    old: &[&str],
    new: &[&str],
    at: (usize, usize),
    deadline: Option<Instant>,
    out: &mut Vec<Hunk>,
) {
    if old.len().max(new.len()) > PIECE_LINES
        && let Some((i, j)) = cut(old, new)
    {
        hunks_of_piece(&old[..i], &new[..j], at, deadline, out);
        let after = (at.0 + i + 1, at.1 + j + 1);
        return hunks_of_piece(&old[i + 1..], &new[j + 1..], after, deadline, out);
    }
    patience_hunks(old, new, at, deadline, out);
}

/// [`hunks_of_piece`] by one patience diff.
fn patience_hunks(
    old: &[&str],
    new: &[&str],
    at: (usize, usize),
    deadline: Option<Instant>,
    out: &mut Vec<Hunk>,
) {
    for op in diff_ops(Algorithm::Patience, old, new, deadline) {
        let (old_range, new_range) = match op {
            DiffOp::Equal { .. } => continue,
            other => (other.old_range(), other.new_range()),
        };
        let (old_start, new_start) = (at.0 + old_range.start, at.1 + new_range.start);
        match out.last_mut() {
            Some(last)
                if last.old_start + last.old_len == old_start
                    && last.new_start + last.new_len == new_start =>
            {
                last.old_len += old_range.len();
                last.new_len += new_range.len();
            }
            _ => out.push(Hunk {
                old_start,
                old_len: old_range.len(),
                new_start,
                new_len: new_range.len(),
            }),
        }
    }
}

/// A line near the middle of `old` that each side has exactly once, with
/// the same lines before and after it in both: patience diff keeps such a
/// line unless a block moved across it, so the lines before it and those
/// after it can be diffed apart. Its row in `old` and in `new`.
fn cut(old: &[&str], new: &[&str]) -> Option<(usize, usize)> {
    let middle = old.len() / 2;
    (0..CUT_TRIES)
        .filter_map(|n| {
            let away = n.div_ceil(2);
            if n % 2 == 0 {
                middle.checked_add(away)
            } else {
                middle.checked_sub(away)
            }
        })
        .filter(|&i| i > 0 && i + 1 < old.len())
        .find_map(|i| {
            let j = only_row(new, old[i])?;
            let same_around =
                j > 0 && j + 1 < new.len() && old[i - 1] == new[j - 1] && old[i + 1] == new[j + 1];
            (same_around && only_row(old, old[i]) == Some(i)).then_some((i, j))
        })
}

/// The row of `line` in `lines` if it is there exactly once.
fn only_row(lines: &[&str], line: &str) -> Option<usize> {
    let mut rows = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| **l == line)
        .map(|(row, _)| row);
    let first = rows.next()?;
    rows.next().is_none().then_some(first)
}

/// `similar`'s diff of two slices of `&str`. Every diff in the host goes
/// through this one element type, so `similar`'s algorithms are compiled
/// once rather than once per element type.
pub fn diff_ops(
    algorithm: Algorithm,
    old: &[&str],
    new: &[&str],
    deadline: Option<Instant>,
) -> Vec<DiffOp> {
    capture_diff_slices_deadline(algorithm, old, new, deadline)
}

fn as_strs(lines: &[String]) -> Vec<&str> {
    lines.iter().map(String::as_str).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::lines;

    #[test]
    fn hunks_cover_changes_insertions_and_deletions() {
        let old = lines("a\nb\nc\nd\ne\nf");
        let new = lines("a\nB\nc\ne\nf\ng\nh");
        let found = hunks(&old, &new, DEADLINE);
        assert_eq!(
            found,
            [
                Hunk {
                    old_start: 1,
                    old_len: 1,
                    new_start: 1,
                    new_len: 1
                },
                Hunk {
                    old_start: 3,
                    old_len: 1,
                    new_start: 3,
                    new_len: 0
                },
                Hunk {
                    old_start: 6,
                    old_len: 0,
                    new_start: 5,
                    new_len: 2
                },
            ]
        );
        assert!(hunks(&old, &old, DEADLINE).is_empty());
        assert_eq!(
            hunks(&[], &new, DEADLINE),
            [Hunk {
                old_start: 0,
                old_len: 0,
                new_start: 0,
                new_len: 7
            }]
        );
    }

    #[test]
    fn the_larger_side_decides_the_view() {
        assert!(!is_large(HOST_DIFF_BYTES, HOST_DIFF_BYTES));
        assert!(is_large(0, HOST_DIFF_BYTES + 1));
        assert!(is_large(HOST_DIFF_BYTES + 1, 0));
    }

    /// `count` numbered lines, and the same with every `every`th changed.
    fn changed_every(count: usize, every: usize) -> (Vec<String>, Vec<String>) {
        let old: Vec<String> = (0..count).map(|i| format!("line {i}")).collect();
        let new = old
            .iter()
            .enumerate()
            .map(|(i, l)| match i % every {
                0 => format!("{l} changed"),
                _ => l.clone(),
            })
            .collect();
        (old, new)
    }

    fn stalls(count: usize, every: usize) -> bool {
        let (old, new) = changed_every(count, every);
        diff_mode_stalls(&as_strs(&old), &as_strs(&new))
    }

    #[test]
    fn diff_mode_keeps_what_it_shows_within_a_frame() {
        // Few changes in a few thousand lines; many in a thousand.
        assert!(!stalls(DIFF_MODE_LINES, 200));
        assert!(!stalls(1000, 3));
        assert!(!stalls(0, 1));
        // Too many lines even unchanged; too many changes for the lines.
        assert!(stalls(DIFF_MODE_LINES + 1, usize::MAX));
        assert!(stalls(DIFF_MODE_LINES, 10));
        assert!(stalls(2000, 5));
        // The longer side counts.
        let (old, _) = changed_every(DIFF_MODE_LINES + 1, 1);
        assert!(diff_mode_stalls(&[], &as_strs(&old)));
        assert!(diff_mode_stalls(&as_strs(&old), &[]));
    }

    /// `old` with `hunks` applied, taking the new lines from `new`.
    fn apply(old: &[String], new: &[String], hunks: &[Hunk]) -> Vec<String> {
        let mut rebuilt = Vec::new();
        let mut at = 0;
        for hunk in hunks {
            rebuilt.extend_from_slice(&old[at..hunk.old_start]);
            rebuilt.extend_from_slice(&new[hunk.new_start..hunk.new_start + hunk.new_len]);
            at = hunk.old_start + hunk.old_len;
        }
        rebuilt.extend_from_slice(&old[at..]);
        rebuilt
    }

    #[test]
    fn large_sides_are_diffed_in_pieces_with_the_hunks_of_one_diff() {
        let old: Vec<String> = (0..3 * PIECE_LINES).map(|i| format!("line {i}")).collect();
        // Sparse changes, then a stretch of dense changes, insertions and
        // deletions across the middle.
        let dense = PIECE_LINES..2 * PIECE_LINES;
        let new: Vec<String> = old
            .iter()
            .enumerate()
            .filter(|(i, _)| !(dense.contains(i) && i % 13 == 5))
            .flat_map(|(i, l)| match (i % 500 == 250, dense.contains(&i)) {
                (true, _) => vec![format!("{l} changed")],
                (false, true) if i % 7 == 3 => vec![format!("{l} changed")],
                (false, true) if i % 11 == 0 => vec![l.clone(), "inserted".into()],
                _ => vec![l.clone()],
            })
            .collect();
        let (o, n) = (as_strs(&old), as_strs(&new));
        assert!(cut(&o, &n).is_some(), "the sides are cut");
        let mut whole = Vec::new();
        patience_hunks(&o, &n, (0, 0), None, &mut whole);
        let pieces = line_hunks(&o, &n, DEADLINE);
        assert_eq!(pieces, whole);
        assert_eq!(apply(&old, &new, &pieces), new);
    }

    #[test]
    fn a_block_moved_across_the_cut_still_gives_a_diff_of_the_sides() {
        let old: Vec<String> = (0..3 * PIECE_LINES).map(|i| format!("line {i}")).collect();
        let middle = old.len() / 2;
        let mut new = old.clone();
        let moved: Vec<String> = new.drain(middle - 100..middle + 100).collect();
        new.splice(0..0, moved);
        assert_eq!(apply(&old, &new, &hunks(&old, &new, DEADLINE)), new);
        let mut lines = old.clone();
        lines[middle] = lines[0].clone();
        assert_eq!(
            cut(&as_strs(&lines), &as_strs(&old)).map(|(i, _)| i == middle),
            Some(false),
            "a line the old side has twice is no cut"
        );
    }

    #[test]
    fn applying_the_hunks_turns_old_into_new() {
        let old: Vec<String> = (0..5000).map(|i| format!("line {i}")).collect();
        let new: Vec<String> = old
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 13 != 0)
            .flat_map(|(i, l)| {
                if i % 7 == 0 {
                    vec![format!("changed {i}"), "added".into()]
                } else {
                    vec![l.clone()]
                }
            })
            .collect();
        assert_eq!(apply(&old, &new, &hunks(&old, &new, DEADLINE)), new);
    }
}
