//! opencode's `/event` stream: server-sent events, each `data:` a JSON
//! event `{type, properties}`. Events are read from the body's frames as
//! they come, each byte looked at once; one larger than
//! [`MAX_EVENT_BYTES`] is dropped as it streams by (its edit, if it was
//! one, is left to opencode's own prompt), and the stream goes on. A large
//! event is parsed off the runtime's thread.

use bytes::{Buf, Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::Value;

/// The largest event kept: an edit's whole diff rides in one (as large as
/// the largest body the MCP endpoint takes).
pub const MAX_EVENT_BYTES: usize = 16 << 20;
/// Events larger than this are parsed on a blocking thread.
const PARSED_IN_PLACE_BYTES: usize = 256 << 10;

pub struct EventStream {
    body: Incoming,
    blocks: Blocks,
}

impl EventStream {
    pub fn new(body: Incoming) -> EventStream {
        EventStream {
            body,
            blocks: Blocks::default(),
        }
    }

    /// The next event; `None` when the stream ended (or broke).
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            match self.blocks.next() {
                Some(Taken::Block(block)) => {
                    if let Some(event) = parse_anywhere(block).await {
                        return Some(event);
                    }
                    continue;
                }
                Some(Taken::Dropped(bytes)) => {
                    tracing::warn!(
                        "an opencode event of {bytes} bytes dropped (at most {MAX_EVENT_BYTES} are read)"
                    );
                    continue;
                }
                None => {}
            }
            let frame = self.body.frame().await?.ok()?;
            if let Ok(data) = frame.into_data() {
                self.blocks.push(&data);
            }
        }
    }
}

/// What [`Blocks::next`] gives.
#[derive(Debug, PartialEq)]
enum Taken {
    /// One event block, without its blank line.
    Block(Bytes),
    /// An event over the cap went by: its size.
    Dropped(usize),
}

/// The stream's bytes cut at blank lines (`\n\n` or `\r\n\r\n`).
#[derive(Default)]
struct Blocks {
    buffer: BytesMut,
    /// Where the search for the next blank line goes on: what comes
    /// before holds none.
    scanned: usize,
    /// Bytes of an event over the cap let go so far (its rest is dropped
    /// as it comes).
    skipped: Option<usize>,
}

impl Blocks {
    fn push(&mut self, data: &[u8]) {
        self.buffer.extend_from_slice(data);
    }

    fn next(&mut self) -> Option<Taken> {
        if let Some((end, skip)) = self.find() {
            let block = self.buffer.split_to(end).freeze();
            self.buffer.advance(skip);
            self.scanned = 0;
            return Some(match self.skipped.take() {
                Some(before) => Taken::Dropped(before + end + skip),
                None if end > MAX_EVENT_BYTES => Taken::Dropped(end + skip),
                None => Taken::Block(block),
            });
        }
        if self.buffer.len() > MAX_EVENT_BYTES || self.skipped.is_some() {
            // Keep only what the search has still to look at, and the byte
            // before it (a `\r\n\r\n` starts one byte before its `\n`).
            let gone = self.scanned.saturating_sub(1);
            self.buffer.advance(gone);
            self.scanned -= gone;
            *self.skipped.get_or_insert(0) += gone;
        }
        None
    }

    /// The first blank line past `scanned`: where it starts and its
    /// length; `scanned` moves up to what is still undecided.
    fn find(&mut self) -> Option<(usize, usize)> {
        let text = &self.buffer[..];
        let mut at = self.scanned;
        while let Some(offset) = text[at..].iter().position(|&b| b == b'\n') {
            let newline = at + offset;
            match (text.get(newline + 1), text.get(newline + 2)) {
                (Some(b'\n'), _) => return Some((newline, 2)),
                (Some(b'\r'), Some(b'\n')) if newline > 0 && text[newline - 1] == b'\r' => {
                    return Some((newline - 1, 4));
                }
                // What follows this newline has not come yet.
                (None, _) | (Some(b'\r'), None) => {
                    self.scanned = newline;
                    return None;
                }
                _ => at = newline + 1,
            }
        }
        self.scanned = text.len();
        None
    }
}

/// [`parse`], on a blocking thread when `block` is large.
async fn parse_anywhere(block: Bytes) -> Option<Value> {
    if block.len() <= PARSED_IN_PLACE_BYTES {
        return parse(&block);
    }
    tokio::task::spawn_blocking(move || parse(&block))
        .await
        .ok()
        .flatten()
}

/// The JSON of a block's `data:` lines.
fn parse(block: &[u8]) -> Option<Value> {
    let block = String::from_utf8_lossy(block);
    let data: Vec<&str> = block
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|data| data.strip_prefix(' ').unwrap_or(data))
        .collect();
    if data.is_empty() {
        return None;
    }
    serde_json::from_str(&data.join("\n")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks_of(chunks: &[&[u8]]) -> (Vec<Taken>, Blocks) {
        let mut blocks = Blocks::default();
        let mut taken = vec![];
        for chunk in chunks {
            blocks.push(chunk);
            while let Some(block) = blocks.next() {
                taken.push(block);
            }
        }
        (taken, blocks)
    }

    const STREAM: &[u8] =
        b"data: {\"type\":\"a\"}\n\n: comment\n\ndata: {\"type\":\"b\",\r\ndata: \"x\":1}\r\n\r\ndata: {\"ty";

    #[test]
    fn blocks_are_split_at_blank_lines_and_read_from_their_data() {
        let (taken, blocks) = blocks_of(&[STREAM]);
        let parsed: Vec<Option<Value>> = taken
            .iter()
            .map(|t| match t {
                Taken::Block(block) => parse(block),
                Taken::Dropped(_) => panic!("nothing is over the cap"),
            })
            .collect();
        assert_eq!(parsed.len(), 3, "{taken:?}");
        assert_eq!(parsed[0].as_ref().unwrap()["type"], "a");
        assert_eq!(parsed[1], None, "a comment");
        let joined = parsed[2].as_ref().unwrap();
        assert_eq!(
            (joined["type"].as_str(), joined["x"].as_u64()),
            (Some("b"), Some(1))
        );
        assert_eq!(&blocks.buffer[..], b"data: {\"ty", "unfinished");
    }

    #[test]
    fn a_stream_cut_into_frames_anywhere_gives_the_same_blocks() {
        let (whole, _) = blocks_of(&[STREAM]);
        for first in 0..STREAM.len() {
            for second in first..STREAM.len() {
                let (cut, rest) =
                    blocks_of(&[&STREAM[..first], &STREAM[first..second], &STREAM[second..]]);
                assert_eq!(cut, whole, "cut at {first} and {second}");
                assert_eq!(&rest.buffer[..], b"data: {\"ty");
            }
        }
        let bytes: Vec<&[u8]> = STREAM.chunks(1).collect();
        assert_eq!(blocks_of(&bytes).0, whole, "a byte per frame");
    }

    #[test]
    fn an_event_over_the_cap_is_dropped_and_the_next_is_read_in_bounded_memory() {
        let mut blocks = Blocks::default();
        blocks.push(b"data: {\"type\":\"huge\",\"diff\":\"");
        let chunk = vec![b'x'; 1 << 20];
        let mut largest = 0;
        for _ in 0..(MAX_EVENT_BYTES >> 20) + 8 {
            blocks.push(&chunk);
            assert_eq!(blocks.next(), None);
            largest = largest.max(blocks.buffer.len());
        }
        assert!(
            largest <= MAX_EVENT_BYTES + chunk.len(),
            "kept {largest} bytes"
        );
        blocks.push(b"\"}\r");
        assert_eq!(blocks.next(), None);
        blocks.push(b"\n\r\ndata: {\"type\":\"next\"}\n\n");
        let Some(Taken::Dropped(size)) = blocks.next() else {
            panic!("the large event is not dropped");
        };
        assert!(size > MAX_EVENT_BYTES, "{size}");
        let Some(Taken::Block(next)) = blocks.next() else {
            panic!("the stream does not go on");
        };
        assert_eq!(parse(&next).unwrap()["type"], "next");
    }

    #[tokio::test]
    async fn a_large_event_is_parsed_as_a_small_one() {
        let text = "y".repeat(PARSED_IN_PLACE_BYTES * 2);
        let block = format!("data: {{\"type\":\"big\",\"text\":\"{text}\"}}");
        let event = parse_anywhere(Bytes::from(block)).await.unwrap();
        assert_eq!(event["text"].as_str().map(str::len), Some(text.len()));
    }
}
