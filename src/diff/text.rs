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
        let crlf =
            text.contains("\r\n") && text.matches('\n').count() == text.matches("\r\n").count();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_exactly() {
        for text in [
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
        ] {
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
