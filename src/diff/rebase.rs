//! An accepted edit carried over onto a file that changed while the person
//! reviewed it: a three-way merge of lines, as git's, that gives up where
//! the two changes overlap or touch.

use super::hunks::{DEADLINE, Hunk, hunks};

/// `proposal` (made from `base`) applied to `changed` (also made from
/// `base`), or `None` when a change of each side overlaps or touches the
/// other's. A change both sides made alike counts once.
pub fn rebase(base: &[String], changed: &[String], proposal: &[String]) -> Option<Vec<String>> {
    let theirs = hunks(base, changed, DEADLINE);
    let ours = hunks(base, proposal, DEADLINE);
    // Each kept hunk with the side its new lines come from.
    let mut merged: Vec<(Hunk, &[String])> = Vec::with_capacity(theirs.len() + ours.len());
    let (mut t, mut o) = (theirs.iter().peekable(), ours.iter().peekable());
    loop {
        let next = match (t.peek(), o.peek()) {
            (None, None) => break,
            (Some(a), Some(b)) if touch(a, b) => {
                if !alike(a, changed, b, proposal) {
                    return None;
                }
                o.next();
                (*t.next()?, changed)
            }
            (Some(a), Some(b)) if a.old_start <= b.old_start => (*t.next()?, changed),
            (Some(_), Some(_)) | (None, Some(_)) => (*o.next()?, proposal),
            (Some(_), None) => (*t.next()?, changed),
        };
        merged.push((next.0, next.1));
    }
    let mut out = Vec::with_capacity(changed.len() + proposal.len().saturating_sub(base.len()));
    let mut at = 0;
    for (hunk, side) in merged {
        out.extend_from_slice(&base[at..hunk.old_start]);
        out.extend_from_slice(&side[hunk.new_start..hunk.new_start + hunk.new_len]);
        at = hunk.old_start + hunk.old_len;
    }
    out.extend_from_slice(&base[at..]);
    Some(out)
}

/// The hunks' ranges of the base overlap or meet (an insertion next to a
/// change meets it).
fn touch(a: &Hunk, b: &Hunk) -> bool {
    a.old_start <= b.old_start + b.old_len && b.old_start <= a.old_start + a.old_len
}

/// Both replace the same lines with the same text.
fn alike(a: &Hunk, a_side: &[String], b: &Hunk, b_side: &[String]) -> bool {
    a.old_start == b.old_start
        && a.old_len == b.old_len
        && a_side[a.new_start..a.new_start + a.new_len]
            == b_side[b.new_start..b.new_start + b.new_len]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::lines;

    #[test]
    fn changes_apart_are_both_kept() {
        let base = lines("a\nb\nc\nd\ne\nf\ng");
        let changed = lines("A\nb\nc\nd\ne\nf\ng\nh");
        let proposal = lines("a\nb\nc\nD1\nD2\ne\nf\ng");
        assert_eq!(
            rebase(&base, &changed, &proposal).unwrap(),
            lines("A\nb\nc\nD1\nD2\ne\nf\ng\nh")
        );
        let deleted = lines("a\nb\nc\nd\ne\nf");
        assert_eq!(
            rebase(&base, &deleted, &lines("x\na\nb\nc\nd\ne\nf\ng")).unwrap(),
            lines("x\na\nb\nc\nd\ne\nf"),
            "an insertion at the top and a deletion at the bottom"
        );
    }

    #[test]
    fn changes_that_overlap_or_touch_give_up() {
        let base = lines("a\nb\nc\nd");
        assert_eq!(
            rebase(&base, &lines("a\nB\nc\nd"), &lines("a\nX\nc\nd")),
            None
        );
        assert_eq!(
            rebase(&base, &lines("a\nb\nC\nd"), &lines("a\nX\nc\nd")),
            None,
            "neighbouring lines touch"
        );
        assert_eq!(
            rebase(&base, &lines("a\nb\nnew\nc\nd"), &lines("a\nX\nc\nd")),
            None,
            "an insertion right after a changed line"
        );
        assert_eq!(
            rebase(&base, &lines("a\nB\nc\nd"), &lines("a\nB\nc\nd\ne")).unwrap(),
            lines("a\nB\nc\nd\ne"),
            "the same change on both sides counts once"
        );
    }

    #[test]
    fn an_unchanged_side_gives_the_other() {
        let base = lines("a\nb");
        let other = lines("a\nb\nc");
        assert_eq!(rebase(&base, &base, &other).unwrap(), other);
        assert_eq!(rebase(&base, &other, &base).unwrap(), other);
        assert_eq!(rebase(&[], &[], &other).unwrap(), other);
    }
}
