//! Bytes → lines, each at most a given length (tokio-util's `LinesCodec`):
//! a longer line is reported once and skipped up to its newline, so the
//! next line reads normally; memory stays within the cap either way.

use bytes::BytesMut;
use tokio_util::codec::{Decoder, LinesCodec, LinesCodecError};

/// What a chunk of input held.
#[derive(Debug, PartialEq)]
pub enum Chunk {
    /// A complete line, without its newline (or `\r\n`).
    Line(String),
    /// A line went over the cap; it is being skipped.
    TooLong,
    /// A line that is not UTF-8, skipped.
    NotUtf8,
}

pub struct Lines {
    codec: LinesCodec,
    buffer: BytesMut,
    /// The last byte fed was not a newline: a line has begun.
    in_progress: bool,
}

impl Lines {
    pub fn new(max: usize) -> Lines {
        Lines {
            codec: LinesCodec::new_with_max_length(max),
            buffer: BytesMut::new(),
            in_progress: false,
        }
    }

    /// Feeds bytes as they were read; returns what they completed.
    pub fn feed(&mut self, data: &[u8]) -> Vec<Chunk> {
        if let Some(&last) = data.last() {
            self.in_progress = last != b'\n';
        }
        self.buffer.extend_from_slice(data);
        let mut out = vec![];
        loop {
            match self.codec.decode(&mut self.buffer) {
                Ok(Some(line)) => out.push(Chunk::Line(line)),
                Ok(None) => break,
                Err(LinesCodecError::MaxLineLengthExceeded) => out.push(Chunk::TooLong),
                Err(LinesCodecError::Io(_)) => out.push(Chunk::NotUtf8),
            }
        }
        // The codec keeps at most one line's worth; give back the rest.
        if self.buffer.is_empty() && self.buffer.capacity() > 64 * 1024 {
            self.buffer = BytesMut::new();
        }
        out
    }

    /// Bytes held for the line being read.
    #[cfg(feature = "fuzzing")]
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Whether a line has begun and not ended yet.
    pub fn in_progress(&self) -> bool {
        self.in_progress
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Chunk {
        Chunk::Line(text.to_owned())
    }

    #[test]
    fn splits_across_reads() {
        let mut lines = Lines::new(10);
        assert_eq!(lines.feed(b"ab"), []);
        assert!(lines.in_progress());
        assert_eq!(
            lines.feed(b"c\nde\r\n\nf"),
            [line("abc"), line("de"), line("")]
        );
        assert_eq!(lines.feed(b"g\n"), [line("fg")]);
        assert!(!lines.in_progress());
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
        assert_eq!(lines.feed(b"\xff\xfe\nok\n"), [Chunk::NotUtf8, line("ok")]);
    }

    #[test]
    fn a_skipped_line_holds_no_more_than_the_cap() {
        let mut lines = Lines::new(1024);
        for _ in 0..100 {
            lines.feed(&[b'x'; 64 * 1024]);
            assert!(lines.buffer.len() <= 1025, "{}", lines.buffer.len());
        }
        assert_eq!(lines.feed(b"\n{}\n"), [line("{}")]);
    }
}
