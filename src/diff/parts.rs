//! A large diff's lines and hunks cut into parts that Lua takes one seam
//! call at a time: decoding megabytes of lines in one `nvim_exec_lua` froze Neovim
//! for tens of milliseconds, a part of at most [`PART_BYTES`] costs it a
//! millisecond or two, and keys and redraws run between parts.

use std::sync::Arc;

use super::hunks::Hunk;
use super::text::LineText;

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
    /// Whole lines of one side (`original` or `proposed`), each ending in
    /// `\n`, from row `first`.
    Lines {
        side: &'static str,
        first: usize,
        text: &'a str,
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
#[derive(Debug)]
pub struct Content {
    pub original: Arc<LineText>,
    pub proposed: Arc<LineText>,
}

impl Content {
    /// The lines' parts, in order: the original's, then the proposal's.
    pub fn line_parts(&self) -> Vec<Part<'_>> {
        let mut parts = Vec::new();
        for (side, lines) in [("original", &self.original), ("proposed", &self.proposed)] {
            let (mut rest, mut first) = (lines.as_str(), 0);
            while !rest.is_empty() {
                let (text, count) = part_of(rest);
                parts.push(Part::Lines { side, first, text });
                first += count;
                rest = &rest[text.len()..];
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

/// The lines at the start of newline-terminated `text` that make one part,
/// and how many they are: at least one line, at most [`PART_LINES`] and
/// [`PART_BYTES`] unless one line is longer.
fn part_of(text: &str) -> (&str, usize) {
    let (mut end, mut count) = (0, 0);
    for (at, _) in text.match_indices('\n') {
        if count > 0 && at + 1 > PART_BYTES {
            break;
        }
        end = at + 1;
        count += 1;
        if count == PART_LINES {
            break;
        }
    }
    (&text[..end], count)
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
            original: Arc::new(LineText::from_lines(original.clone())),
            proposed: Arc::new(LineText::from_lines(proposed.clone())),
        };
        let (mut old, mut new, mut all_hunks, mut all_words) = (vec![], vec![], vec![], vec![]);
        let parts = content.line_parts().into_iter();
        for part in parts.chain(hunk_parts(&hunks, &words)) {
            match part {
                Part::Lines { side, first, text } => {
                    assert!(text.ends_with('\n'), "whole lines");
                    let lines: Vec<String> =
                        text.split_terminator('\n').map(String::from).collect();
                    assert!(lines.len() <= PART_LINES && !lines.is_empty());
                    let bytes = text.len();
                    assert!(lines.len() == 1 || bytes <= PART_BYTES, "{bytes}");
                    let into = if side == "original" {
                        &mut old
                    } else {
                        &mut new
                    };
                    assert_eq!(first, into.len(), "in order, without gaps");
                    into.extend(lines);
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
        let long_part = content
            .line_parts()
            .into_iter()
            .find(|p| matches!(p, Part::Lines { text, .. } if text.len() > PART_BYTES));
        assert!(
            matches!(long_part, Some(Part::Lines { text, .. }) if text == format!("{long}\n")),
            "a line longer than a part is a part of its own"
        );
    }
}
