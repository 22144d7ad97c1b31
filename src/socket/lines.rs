//! Bytes → lines, each at most a given length: a longer line is reported
//! once and skipped up to its newline, so the next line reads normally.

/// What a chunk of input held.
#[derive(Debug, PartialEq)]
pub enum Chunk {
    /// A complete line, without its newline.
    Line(Vec<u8>),
    /// A line went over the cap; it is being skipped.
    TooLong,
}

pub struct Lines {
    max: usize,
    partial: Vec<u8>,
    skipping: bool,
}

impl Lines {
    pub fn new(max: usize) -> Lines {
        Lines {
            max,
            partial: Vec::new(),
            skipping: false,
        }
    }

    /// Feeds bytes as they were read; returns what they completed.
    pub fn feed(&mut self, mut data: &[u8]) -> Vec<Chunk> {
        let mut out = vec![];
        while let Some(at) = data.iter().position(|&b| b == b'\n') {
            let head = &data[..at];
            if self.skipping {
                self.skipping = false;
            } else if self.partial.len() + head.len() > self.max {
                out.push(Chunk::TooLong);
            } else {
                self.partial.extend_from_slice(head);
                out.push(Chunk::Line(std::mem::take(&mut self.partial)));
            }
            self.partial.clear();
            data = &data[at + 1..];
        }
        if !self.skipping && !data.is_empty() {
            if self.partial.len() + data.len() > self.max {
                self.partial = Vec::new();
                self.skipping = true;
                out.push(Chunk::TooLong);
            } else {
                self.partial.extend_from_slice(data);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Chunk {
        Chunk::Line(text.as_bytes().to_vec())
    }

    #[test]
    fn splits_across_reads() {
        let mut lines = Lines::new(10);
        assert_eq!(lines.feed(b"ab"), []);
        assert_eq!(
            lines.feed(b"c\nde\n\nf"),
            [line("abc"), line("de"), line("")]
        );
        assert_eq!(lines.feed(b"g\n"), [line("fg")]);
    }

    #[test]
    fn a_long_line_is_skipped_once_and_the_next_reads() {
        let mut lines = Lines::new(4);
        assert_eq!(lines.feed(b"123"), []);
        assert_eq!(lines.feed(b"45"), [Chunk::TooLong]);
        assert_eq!(lines.feed(b"6789"), []);
        assert_eq!(lines.feed(b"0\nok\n"), [line("ok")]);
        assert_eq!(lines.feed(b"12345\nyes\n"), [Chunk::TooLong, line("yes")]);
        assert_eq!(lines.feed(b"1234\n"), [line("1234")], "the cap itself fits");
    }
}
