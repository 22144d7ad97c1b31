//! Word-level changes inside changed lines (Neovim's `DiffText`): within each
//! hunk the n-th old line is paired with the n-th new line, as diff mode
//! pairs them, and the words that differ are reported as byte ranges.

use similar::{Algorithm, DiffOp};

use super::hunks::{Hunk, diff_ops};

/// Lines longer than this are marked as changed as a whole.
const MAX_LINE_BYTES: usize = 4096;

/// Every hunk's word ranges in one flat list of `hunk, side, row, start,
/// end` (hunk: 0-based index; side 0 = old, 1 = new; row relative to the
/// hunk's start on that side; 0-based byte columns, end exclusive): one
/// Lua table to decode instead of one per hunk.
pub fn words(old: &[&str], new: &[&str], hunks: &[Hunk]) -> Vec<u32> {
    let mut flat = Vec::new();
    for (index, hunk) in hunks.iter().enumerate() {
        for row in 0..hunk.old_len.min(hunk.new_len) {
            let (Some(a), Some(b)) = (old.get(hunk.old_start + row), new.get(hunk.new_start + row))
            else {
                break;
            };
            let (old_ranges, new_ranges) = changed_ranges(a, b);
            for (side, ranges) in [(0, old_ranges), (1, new_ranges)] {
                for (start, end) in ranges {
                    flat.extend([index as u32, side, row as u32, start as u32, end as u32]);
                }
            }
        }
    }
    flat
}

/// Byte ranges `(start, end)` of a line, end exclusive.
type Spans = Vec<(usize, usize)>;

/// The byte ranges of `old` and of `new` whose words differ, merged where
/// they touch.
pub fn changed_ranges(old: &str, new: &str) -> (Spans, Spans) {
    if old.len() > MAX_LINE_BYTES || new.len() > MAX_LINE_BYTES {
        return (whole(old), whole(new));
    }
    let (a, b) = (tokens(old), tokens(new));
    let text_a: Vec<&str> = a.iter().map(|&(s, e)| &old[s..e]).collect();
    let text_b: Vec<&str> = b.iter().map(|&(s, e)| &new[s..e]).collect();
    let (mut ranges_a, mut ranges_b) = (Vec::new(), Vec::new());
    for op in diff_ops(Algorithm::Myers, &text_a, &text_b, None) {
        if let DiffOp::Equal { .. } = op {
            continue;
        }
        push_span(&mut ranges_a, &a, op.old_range());
        push_span(&mut ranges_b, &b, op.new_range());
    }
    (ranges_a, ranges_b)
}

fn whole(line: &str) -> Spans {
    if line.is_empty() {
        vec![]
    } else {
        vec![(0, line.len())]
    }
}

fn push_span(out: &mut Spans, tokens: &[(usize, usize)], range: std::ops::Range<usize>) {
    if range.is_empty() {
        return;
    }
    let (start, end) = (tokens[range.start].0, tokens[range.end - 1].1);
    match out.last_mut() {
        Some(last) if last.1 >= start => last.1 = last.1.max(end),
        _ => out.push((start, end)),
    }
}

/// Runs of word characters, runs of white space, and single other characters.
fn tokens(line: &str) -> Vec<(usize, usize)> {
    #[derive(PartialEq)]
    enum Class {
        Word,
        Space,
        Other,
    }
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            Class::Word
        } else if c.is_whitespace() {
            Class::Space
        } else {
            Class::Other
        }
    };
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut previous = None;
    for (at, c) in line.char_indices() {
        let this = class(c);
        let extends = this != Class::Other && previous.as_ref() == Some(&this);
        match out.last_mut() {
            Some(last) if extends => last.1 = at + c.len_utf8(),
            _ => out.push((at, at + c.len_utf8())),
        }
        previous = Some(this);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_words_that_differ_are_marked() {
        let (a, b) = changed_ranges("let x = compute(a, b);", "let x = compute(a, c);");
        assert_eq!((a, b), (vec![(19, 20)], vec![(19, 20)]));
        let (a, b) = changed_ranges("foo bar", "foo bar baz");
        assert_eq!((a, b), (vec![], vec![(7, 11)]));
        let (a, b) = changed_ranges("héllo wörld", "héllo world");
        assert_eq!((a, b), (vec![(7, 13)], vec![(7, 12)]));
        let long = "x".repeat(MAX_LINE_BYTES + 1);
        assert_eq!(changed_ranges(&long, "y").0, vec![(0, long.len())]);
    }

    #[test]
    fn rows_are_relative_to_each_hunk() {
        let old: Vec<&str> = "a\nb one\nc\nd".lines().collect();
        let new: Vec<&str> = "a\nb two\nc\nx\nd".lines().collect();
        let hunks = crate::diff::hunks::line_hunks(&old, &new, crate::diff::hunks::DEADLINE);
        assert_eq!(hunks.len(), 2);
        let found = words(&old, &new, &hunks);
        assert_eq!(
            found,
            [0, 0, 0, 2, 5, 0, 1, 0, 2, 5],
            "an insertion pairs no lines"
        );
    }
}
