//! Line diffs of large files, computed in the host: Neovim's own diff mode
//! takes seconds on the UI thread for a 4 MB file with many changes.

use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};

/// When the larger side has more bytes than this, a diff is computed here
/// and Lua draws it (the large-file view); up to it, Neovim's diff mode is
/// instant. Measured with `cargo bench --bench figures -- diff_mode`.
pub const HOST_DIFF_BYTES: usize = 192 * 1024;
/// A diff that takes longer comes out coarser rather than later.
pub const DEADLINE: Duration = Duration::from_secs(2);

/// Whether a diff of sides this large (bytes) goes to the large-file view.
pub fn is_large(old_bytes: usize, new_bytes: usize) -> bool {
    old_bytes.max(new_bytes) > HOST_DIFF_BYTES
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
    let ops = diff_ops(Algorithm::Patience, old, new, deadline);
    let mut out: Vec<Hunk> = Vec::new();
    for op in ops {
        let (old_range, new_range) = match op {
            DiffOp::Equal { .. } => continue,
            other => (other.old_range(), other.new_range()),
        };
        match out.last_mut() {
            Some(last)
                if last.old_start + last.old_len == old_range.start
                    && last.new_start + last.new_len == new_range.start =>
            {
                last.old_len += old_range.len();
                last.new_len += new_range.len();
            }
            _ => out.push(Hunk {
                old_start: old_range.start,
                old_len: old_range.len(),
                new_start: new_range.start,
                new_len: new_range.len(),
            }),
        }
    }
    out
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
        let mut rebuilt = Vec::new();
        let mut at = 0;
        for hunk in hunks(&old, &new, DEADLINE) {
            rebuilt.extend_from_slice(&old[at..hunk.old_start]);
            rebuilt.extend_from_slice(&new[hunk.new_start..hunk.new_start + hunk.new_len]);
            at = hunk.old_start + hunk.old_len;
        }
        rebuilt.extend_from_slice(&old[at..]);
        assert_eq!(rebuilt, new);
    }
}
