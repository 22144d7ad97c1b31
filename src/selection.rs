//! Turns the positions Lua reports (0-based rows, byte columns) plus the lines
//! they cover into `selection_changed` params: 0-based lines, UTF-16
//! characters (LSP's unit), the selected text and `isEmpty` for a bare cursor.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::uri::file_url;

/// One debounced report from `lua/pi-ide/selection.lua`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Positions {
    pub buf: i64,
    pub path: String,
    pub mode: Mode,
    /// `[row, byte_col]` of the first selected character (or the cursor).
    pub start: [u32; 2],
    /// `[row, byte_col]` of the last selected character, inclusive.
    pub end: [u32; 2],
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Cursor,
    Char,
    Line,
    Block,
}

impl Positions {
    /// Rows to fetch: `start.row ..= end.row`.
    pub fn rows(&self) -> (u32, u32) {
        (self.start[0], self.end[0].max(self.start[0]))
    }

    /// How many bytes of `rows()` to read for the first `text_bytes` of
    /// the selection: what precedes it on its first row, and a character
    /// more (where the last selected one ends).
    pub fn bytes_to_read(&self, text_bytes: usize) -> u32 {
        let before = match self.mode {
            // A block's columns may start anywhere on each row.
            Mode::Block => self.start[1].max(self.end[1]) as usize,
            _ => self.start[1] as usize,
        };
        let wanted = match self.mode {
            Mode::Cursor => 0,
            _ => text_bytes,
        };
        u32::try_from(before + wanted + 4).unwrap_or(u32::MAX)
    }

    /// Builds the params from the lines `rows()` covers.
    pub fn to_params(&self, lines: &[String]) -> Value {
        let (first, last) = self.rows();
        let line = |row: u32| {
            lines
                .get((row - first) as usize)
                .map(String::as_str)
                .unwrap_or("")
        };
        let [start_row, start_col] = self.start;
        let end_row = last;
        let end_col = self.end[1];
        let (start_char, end_char, text) = match self.mode {
            Mode::Cursor => {
                let at = utf16_col(line(start_row), start_col as usize);
                (at, at, String::new())
            }
            Mode::Char => {
                let first_line = line(start_row);
                let last_line = line(end_row);
                let stop = after_char(last_line, end_col as usize);
                let text = if start_row == end_row {
                    slice(first_line, start_col as usize, stop).to_owned()
                } else {
                    let mut parts = vec![slice(first_line, start_col as usize, first_line.len())];
                    parts.extend((start_row + 1..end_row).map(line));
                    parts.push(slice(last_line, 0, stop));
                    parts.join("\n")
                };
                (
                    utf16_col(first_line, start_col as usize),
                    utf16_col(last_line, stop),
                    text,
                )
            }
            Mode::Line => {
                let text = (first..=last).map(line).collect::<Vec<_>>().join("\n");
                let last_line = line(end_row);
                (0, utf16_col(last_line, last_line.len()), text)
            }
            Mode::Block => {
                let (left, right) = (
                    start_col.min(end_col) as usize,
                    start_col.max(end_col) as usize,
                );
                let text = (first..=last)
                    .map(|row| {
                        let l = line(row);
                        slice(l, left, after_char(l, right))
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                let last_line = line(end_row);
                (
                    utf16_col(line(start_row), left),
                    utf16_col(last_line, after_char(last_line, right)),
                    text,
                )
            }
        };
        json!({
            "text": text,
            "filePath": self.path,
            "fileUrl": file_url(&self.path),
            "selection": {
                "start": {"line": start_row, "character": start_char},
                "end": {"line": end_row, "character": end_char},
                "isEmpty": self.mode == Mode::Cursor,
            },
        })
    }
}

/// Byte offset just past the character that starts at (or covers) `byte`.
fn after_char(line: &str, byte: usize) -> usize {
    if byte >= line.len() {
        return line.len();
    }
    let start = floor_boundary(line, byte);
    start + line[start..].chars().next().map_or(0, char::len_utf8)
}

fn floor_boundary(line: &str, byte: usize) -> usize {
    let mut at = byte.min(line.len());
    while !line.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn slice(line: &str, from: usize, to: usize) -> &str {
    let from = floor_boundary(line, from);
    let to = floor_boundary(line, to).max(from);
    &line[from..to]
}

/// UTF-16 code units before byte offset `byte` of `line`.
pub fn utf16_col(line: &str, byte: usize) -> usize {
    line[..floor_boundary(line, byte)].encode_utf16().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positions(mode: Mode, start: [u32; 2], end: [u32; 2]) -> Positions {
        Positions {
            buf: 1,
            path: "/w/a b.rs".into(),
            mode,
            start,
            end,
        }
    }

    fn lines(text: &[&str]) -> Vec<String> {
        text.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_bare_cursor_is_empty_with_utf16_columns() {
        let params = positions(Mode::Cursor, [4, 4], [4, 4]).to_params(&lines(&["añb c"]));
        assert_eq!(params["selection"]["isEmpty"], true);
        assert_eq!(
            params["selection"]["start"],
            json!({"line": 4, "character": 3})
        );
        assert_eq!(params["text"], "");
        assert_eq!(params["fileUrl"], "file:///w/a%20b.rs");
        assert_eq!(params["filePath"], "/w/a b.rs");
    }

    #[test]
    fn selections_carry_their_text_and_exclusive_end() {
        let buf = lines(&["first line", "second", "third line"]);
        let table = [
            (Mode::Char, [0, 6], [0, 9], "line", [0, 6, 0, 10]),
            (
                Mode::Char,
                [0, 6],
                [2, 4],
                "line\nsecond\nthird",
                [0, 6, 2, 5],
            ),
            (
                Mode::Line,
                [0, 3],
                [1, 0],
                "first line\nsecond",
                [0, 0, 1, 6],
            ),
            (Mode::Block, [0, 2], [2, 0], "fir\nsec\nthi", [0, 0, 2, 3]),
        ];
        for (mode, start, end, text, [sl, sc, el, ec]) in table {
            let first = start[0] as usize;
            let params = positions(mode, start, end).to_params(&buf[first..]);
            assert_eq!(params["text"], text, "{mode:?}");
            assert_eq!(params["selection"]["isEmpty"], false);
            assert_eq!(
                params["selection"]["start"],
                json!({"line": sl, "character": sc}),
                "{mode:?}"
            );
            assert_eq!(
                params["selection"]["end"],
                json!({"line": el, "character": ec}),
                "{mode:?}"
            );
        }
    }

    #[test]
    fn multibyte_and_out_of_range_columns_do_not_panic() {
        let buf = lines(&["😀é"]);
        let params = positions(Mode::Char, [0, 1], [0, 5]).to_params(&buf);
        assert_eq!(params["text"], "😀é");
        assert_eq!(params["selection"]["end"]["character"], 3);
        let params = positions(Mode::Char, [0, 0], [3, 99]).to_params(&buf);
        assert_eq!(params["selection"]["end"]["line"], 3);
    }
}
