//! A large diff's lines and hunks cut into parts that Lua takes one seam
//! call at a time: decoding megabytes of lines in one `nvim_exec_lua` froze Neovim
//! for tens of milliseconds, a part of at most [`PART_BYTES`] costs it a
//! millisecond or two, and keys and redraws run between parts.

use std::sync::Arc;

use super::hunks::Hunk;

/// Text per part: about a millisecond of decoding and `nvim_buf_set_lines`.
pub const PART_BYTES: usize = 128 * 1024;
/// Lines per part, whatever their length (short lines cost per line).
const PART_LINES: usize = 2048;
/// Parts sent before the first is answered: Neovim takes the next part
/// while the host is still reading its answer to the last.
pub const PARTS_IN_FLIGHT: usize = 3;
/// Hunks per part, with their words.
const PART_HUNKS: usize = 1024;

/// What a part carries.
#[derive(Debug, PartialEq)]
pub enum Part<'a> {
    /// Lines of one side (`original` or `proposed`), from row `first`.
    Lines {
        side: &'static str,
        first: usize,
        lines: &'a [String],
    },
    /// Hunks from index `first` and their words, indices as in the whole
    /// list (see [`super::words`]).
    Hunks {
        first: usize,
        hunks: &'a [Hunk],
        words: &'a [u32],
    },
}

/// The text of a large diff, held once (the live diff shares the sides).
pub struct Content {
    pub original: Arc<Vec<String>>,
    pub proposed: Arc<Vec<String>>,
}

impl Content {
    /// The lines' parts, in order: the original's, then the proposal's.
    pub fn line_parts(&self) -> Vec<Part<'_>> {
        let mut parts = Vec::new();
        for (side, lines) in [("original", &self.original), ("proposed", &self.proposed)] {
            let mut first = 0;
            while first < lines.len() {
                let last = part_end(lines, first);
                parts.push(Part::Lines {
                    side,
                    first,
                    lines: &lines[first..last],
                });
                first = last;
            }
        }
        parts
    }
}

/// The parts of `hunks` and their `words` (see [`super::words`]), in order.
pub fn hunk_parts<'a>(hunks: &'a [Hunk], words: &'a [u32]) -> Vec<Part<'a>> {
    let mut parts = Vec::new();
    let mut words = words;
    for (n, chunk) in hunks.chunks(PART_HUNKS).enumerate() {
        let first = n * PART_HUNKS;
        let end = (first + chunk.len()) as u32;
        // Five numbers a word, the first its hunk's index.
        let split = words
            .chunks(5)
            .position(|word| word[0] >= end)
            .map_or(words.len(), |at| at * 5);
        let (these, rest) = words.split_at(split);
        words = rest;
        parts.push(Part::Hunks {
            first,
            hunks: chunk,
            words: these,
        });
    }
    parts
}

/// The end of the part of `lines` that starts at `first`: at least one
/// line, at most [`PART_LINES`] and [`PART_BYTES`] unless one line is longer.
fn part_end(lines: &[String], first: usize) -> usize {
    let mut bytes = 0;
    let mut last = first;
    while last < lines.len() && last - first < PART_LINES {
        let more = lines[last].len() + 1;
        if last > first && bytes + more > PART_BYTES {
            break;
        }
        bytes += more;
        last += 1;
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(i: usize) -> Hunk {
        Hunk {
            old_start: i * 10,
            old_len: 1,
            new_start: i * 10,
            new_len: 1,
        }
    }

    #[test]
    fn parts_are_bounded_and_cover_everything_once() {
        let long = "x".repeat(PART_BYTES * 2);
        let original: Vec<String> = (0..5000).map(|i| format!("line {i}")).collect();
        let mut proposed = original.clone();
        proposed[10] = long.clone();
        let hunks: Vec<Hunk> = (0..PART_HUNKS + 3).map(hunk).collect();
        // Two words in hunk 0, one in the last hunk of the first part, one
        // in the second part.
        let words = vec![
            0,
            0,
            0,
            1,
            2,
            0,
            1,
            0,
            1,
            2,
            (PART_HUNKS - 1) as u32,
            1,
            0,
            0,
            1,
            (PART_HUNKS + 2) as u32,
            0,
            0,
            3,
            4,
        ];
        let content = Content {
            original: Arc::new(original.clone()),
            proposed: Arc::new(proposed.clone()),
        };
        let (mut old, mut new, mut all_hunks, mut all_words) = (vec![], vec![], vec![], vec![]);
        let parts = content.line_parts().into_iter();
        for part in parts.chain(hunk_parts(&hunks, &words)) {
            match part {
                Part::Lines { side, first, lines } => {
                    assert!(lines.len() <= PART_LINES && !lines.is_empty());
                    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
                    assert!(lines.len() == 1 || bytes <= PART_BYTES, "{bytes}");
                    let into = if side == "original" {
                        &mut old
                    } else {
                        &mut new
                    };
                    assert_eq!(first, into.len(), "in order, without gaps");
                    into.extend_from_slice(lines);
                }
                Part::Hunks {
                    first,
                    hunks,
                    words,
                } => {
                    assert_eq!(first, all_hunks.len());
                    assert!(hunks.len() <= PART_HUNKS);
                    let range = first as u32..(first + hunks.len()) as u32;
                    assert!(words.chunks(5).all(|w| range.contains(&w[0])));
                    all_hunks.extend_from_slice(hunks);
                    all_words.extend_from_slice(words);
                }
            }
        }
        assert_eq!((old, new), (original, proposed));
        assert_eq!((all_hunks, all_words), (hunks, words));
        let long_part = content.line_parts().into_iter().find(
            |p| matches!(p, Part::Lines { lines, .. } if lines.iter().any(|l| l.len() > PART_BYTES)),
        );
        assert!(
            matches!(long_part, Some(Part::Lines { lines, .. }) if lines.len() == 1),
            "a line longer than a part is a part of its own"
        );
    }
}
