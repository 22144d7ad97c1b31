//! A large diff's lines and hunks cut into bounded parts. The lines go
//! straight into the diff's buffers (`nvim_buf_set_lines`, decoded by
//! Neovim's C code: as Lua arguments, megabytes of lines became as many
//! Lua strings, whose interning and collection cost Neovim more than the
//! lines themselves, up to 12 ms at once for 4 MB); the hunks go to Lua.
//! Each part costs Neovim about a millisecond, and keys and redraws run
//! between parts.

use std::sync::Arc;

use super::hunks::Hunk;
use super::text::LineText;

/// Text per part: about a millisecond of decoding and `nvim_buf_set_lines`.
pub const PART_BYTES: usize = 128 * 1024;
/// Lines per part, whatever their length (short lines cost per line).
const PART_LINES: usize = 2048;
/// Hunk parts sent before the first is answered: Neovim takes the next
/// part while the host is still reading its answer to the last.
pub const PARTS_IN_FLIGHT: usize = 3;
/// Hunks per part, with their words: decoding 1,024 of them (each an
/// array, and their words) took Neovim ~4 ms.
const PART_HUNKS: usize = 256;

/// Whole lines of one side, each ending in `\n`, from row `first`.
#[derive(Debug, PartialEq)]
pub struct LinePart<'a> {
    pub first: usize,
    pub text: &'a str,
}

/// Hunks from index `first` and their words, indices as in the whole list
/// (see [`super::words`]).
#[derive(Debug, PartialEq)]
pub struct HunkPart<'a> {
    pub first: usize,
    pub hunks: &'a [Hunk],
    pub words: &'a [u32],
}

/// The text of a large diff, held once (the live diff shares the sides).
#[derive(Debug)]
pub struct Content {
    pub original: Arc<LineText>,
    pub proposed: Arc<LineText>,
}

impl Content {
    /// The parts of each side's lines, in order: the original's and the
    /// proposal's.
    pub fn line_parts(&self) -> [Vec<LinePart<'_>>; 2] {
        [&self.original, &self.proposed].map(|lines| {
            let (mut parts, mut rest, mut first) = (Vec::new(), lines.as_str(), 0);
            while !rest.is_empty() {
                let (text, count) = part_of(rest);
                parts.push(LinePart { first, text });
                first += count;
                rest = &rest[text.len()..];
            }
            parts
        })
    }
}

/// The parts of `hunks` and their `words` (see [`super::words`]), in order.
pub fn hunk_parts<'a>(hunks: &'a [Hunk], words: &'a [u32]) -> Vec<HunkPart<'a>> {
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
        parts.push(HunkPart {
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
        let [old_parts, new_parts] = content.line_parts();
        let sides = [(&old_parts, &original), (&new_parts, &proposed)];
        for (parts, side) in sides {
            let mut lines: Vec<String> = Vec::new();
            for part in parts {
                let text = part.text;
                assert!(text.ends_with('\n'), "whole lines");
                let these: Vec<String> = text.split_terminator('\n').map(String::from).collect();
                assert!(these.len() <= PART_LINES && !these.is_empty());
                let bytes = text.len();
                assert!(these.len() == 1 || bytes <= PART_BYTES, "{bytes}");
                assert_eq!(part.first, lines.len(), "in order, without gaps");
                lines.extend(these);
            }
            assert_eq!(&lines, side);
        }
        let (mut all_hunks, mut all_words) = (vec![], vec![]);
        for part in hunk_parts(&hunks, &words) {
            assert_eq!(part.first, all_hunks.len());
            assert!(part.hunks.len() <= PART_HUNKS);
            let range = part.first as u32..(part.first + part.hunks.len()) as u32;
            assert!(part.words.chunks(5).all(|w| range.contains(&w[0])));
            all_hunks.extend_from_slice(part.hunks);
            all_words.extend_from_slice(part.words);
        }
        assert_eq!((all_hunks, all_words), (hunks, words));
        let long_part = new_parts.iter().find(|p| p.text.len() > PART_BYTES);
        assert_eq!(
            long_part.map(|p| p.text),
            Some(format!("{long}\n").as_str()),
            "a line longer than a part is a part of its own"
        );
    }
}
