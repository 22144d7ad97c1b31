//! Text split into buffer lines and joined back byte for byte: the
//! proposal the person accepts must reach the agent exactly, line endings
//! and final newline included.

use serde::Serialize;

/// Text split into buffer lines plus what it takes to join them back exactly.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lines {
    pub lines: Vec<String>,
    /// Ends with a newline (the buffer's `'eol'`).
    pub eol: bool,
    /// Every newline is `\r\n` (the buffer's `'fileformat'` is `dos`).
    pub crlf: bool,
}

impl Lines {
    pub fn split(text: &str) -> Lines {
        let crlf = all_crlf(text);
        let newline = if crlf { "\r\n" } else { "\n" };
        // Split in place: a proposal can be megabytes, copied only once,
        // into its lines.
        let (body, eol) = match text.strip_suffix(newline) {
            Some(body) => (body, true),
            None => (text, false),
        };
        let mut lines: Vec<String> = body.split('\n').map(str::to_owned).collect();
        if crlf {
            // Every piece but the last was followed by `\r\n`.
            let last = lines.len() - 1;
            for line in &mut lines[..last] {
                line.pop();
            }
        }
        Lines { lines, eol, crlf }
    }

    /// The exact text these lines came from.
    pub fn join(&self) -> String {
        let newline = if self.crlf { "\r\n" } else { "\n" };
        let mut text = self.lines.join(newline);
        if self.eol {
            text.push_str(newline);
        }
        text
    }
}

/// Whether `text` has newlines and every one is `\r\n`.
fn all_crlf(text: &str) -> bool {
    text.contains("\r\n") && text.matches('\n').count() == text.matches("\r\n").count()
}

/// A large side's lines in one string, each followed by `\n` (`\r\n`
/// files lose their `\r`s): megabytes of lines held as one block instead of
/// a string per line, made from the text in place.
#[derive(Debug, Clone, PartialEq)]
pub struct LineText {
    text: String,
}

impl LineText {
    /// The lines of `text` (as [`Lines::split`] cuts them), with the text's
    /// `eol` and `crlf`, reusing its bytes.
    pub fn from_text(text: String) -> (LineText, bool, bool) {
        let crlf = all_crlf(&text);
        let mut bytes = text.into_bytes();
        if crlf {
            let mut kept = 0;
            for at in 0..bytes.len() {
                if !(bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n')) {
                    bytes[kept] = bytes[at];
                    kept += 1;
                }
            }
            bytes.truncate(kept);
        }
        let eol = bytes.last() == Some(&b'\n');
        if !eol {
            bytes.push(b'\n');
        }
        let text = String::from_utf8(bytes).expect("only ASCII \\r was taken out");
        (LineText { text }, eol, crlf)
    }

    /// `lines`, taking them.
    pub fn from_lines(lines: Vec<String>) -> LineText {
        LineText {
            text: terminated(&lines),
        }
    }

    pub fn lines(&self) -> std::str::SplitTerminator<'_, char> {
        self.text.split_terminator('\n')
    }

    /// The bytes of the lines and their newlines.
    pub fn len(&self) -> usize {
        self.text.len()
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Every line, each ending in `\n`.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Lines `first..last` (clamped to the lines there are) become `lines`.
    pub fn splice(&mut self, first: usize, last: usize, lines: &[String]) {
        let first = first.min(last);
        let start = line_start_in(&self.text, first);
        let end = start + line_start_in(&self.text[start..], last.saturating_sub(first));
        self.text.replace_range(start..end, &terminated(lines));
    }
}

/// `lines`, each followed by `\n`.
fn terminated(lines: &[String]) -> String {
    let mut text = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// Where line `n` of newline-terminated `text` starts, or its end.
fn line_start_in(text: &str, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    text.match_indices('\n')
        .nth(n - 1)
        .map_or(text.len(), |(at, _)| at + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Line endings, final newlines and lone `\r`s of every kind.
    const TEXTS: [&str; 13] = [
        "",
        "\n",
        "a",
        "a\n",
        "a\nb",
        "a\nb\n",
        "a\r\nb\r\n",
        "a\r\nb",
        "mixed\r\nends\n",
        "\n\n",
        "x\ry\n",
        "a\r\nb\r",
        "\r\n\r\n",
    ];

    #[test]
    fn line_text_holds_the_lines_split_holds() {
        for text in TEXTS {
            let split = Lines::split(text);
            let (packed, eol, crlf) = LineText::from_text(text.to_owned());
            assert_eq!(packed.lines().collect::<Vec<_>>(), split.lines, "{text:?}");
            assert_eq!((eol, crlf), (split.eol, split.crlf), "{text:?}");
            assert_eq!(
                LineText::from_lines(split.lines.clone()),
                packed,
                "{text:?}"
            );
        }
    }

    #[test]
    fn line_text_splices_like_a_vec_of_lines() {
        let start: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let cases: &[(usize, usize, &[&str])] = &[
            (0, 0, &["x"]),
            (1, 2, &["y", "z"]),
            (0, 3, &[]),
            (3, 3, &["end"]),
            (2, 9, &["clamped"]),
            (7, 9, &["past"]),
            (2, 1, &["backwards"]),
        ];
        for &(first, last, with) in cases {
            let with: Vec<String> = with.iter().map(|l| l.to_string()).collect();
            let mut vec = start.clone();
            let end = last.min(vec.len());
            vec.splice(first.min(end)..end, with.clone());
            let mut packed = LineText::from_lines(start.clone());
            packed.splice(first, last, &with);
            assert_eq!(packed.lines().collect::<Vec<_>>(), vec, "{first}..{last}");
        }
        assert_eq!(LineText::from_lines(start).as_str(), "a\nb\nc\n");
    }

    #[test]
    fn lines_round_trip_exactly() {
        for text in TEXTS {
            let lines = Lines::split(text);
            assert_eq!(lines.join(), text, "{text:?}");
        }
        assert_eq!(
            Lines::split(""),
            Lines {
                lines: vec![String::new()],
                eol: false,
                crlf: false
            }
        );
        assert_eq!(
            Lines::split("a\r\nb\r\n"),
            Lines {
                lines: vec!["a".into(), "b".into()],
                eol: true,
                crlf: true
            }
        );
        assert!(
            !Lines::split("mixed\r\nends\n").crlf,
            "mixed endings keep their \\r in the lines"
        );
    }
}
