//! opencode's `/event` stream: server-sent events, each `data:` a JSON
//! event `{type, properties}`. Events are read from the body's frames as
//! they come; one larger than [`MAX_EVENT_BYTES`] ends the stream (the
//! follower connects again).

use bytes::{Buf, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::Value;

/// The largest event kept (an edit's whole diff rides in one).
const MAX_EVENT_BYTES: usize = 64 << 20;

pub struct EventStream {
    body: Incoming,
    buffer: BytesMut,
}

impl EventStream {
    pub fn new(body: Incoming) -> EventStream {
        EventStream {
            body,
            buffer: BytesMut::new(),
        }
    }

    /// The next event; `None` when the stream ended (or broke).
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(block) = take_block(&mut self.buffer) {
                if let Some(event) = parse(&block) {
                    return Some(event);
                }
                continue;
            }
            if self.buffer.len() > MAX_EVENT_BYTES {
                tracing::warn!("an opencode event over {MAX_EVENT_BYTES} bytes; reconnecting");
                return None;
            }
            let frame = self.body.frame().await?.ok()?;
            if let Ok(data) = frame.into_data() {
                self.buffer.extend_from_slice(&data);
            }
        }
    }
}

/// The next event block (up to a blank line), if one is complete.
fn take_block(buffer: &mut BytesMut) -> Option<String> {
    let text = &buffer[..];
    let (end, skip) = [(&b"\r\n\r\n"[..], 4), (&b"\n\n"[..], 2)]
        .iter()
        .filter_map(|(sep, len)| Some((text.windows(sep.len()).position(|w| w == *sep)?, *len)))
        .min_by_key(|(at, _)| *at)?;
    let block = String::from_utf8_lossy(&buffer[..end]).into_owned();
    buffer.advance(end + skip);
    Some(block)
}

/// The JSON of a block's `data:` lines.
fn parse(block: &str) -> Option<Value> {
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

    #[test]
    fn blocks_are_split_at_blank_lines_and_read_from_their_data() {
        let mut buffer = BytesMut::from(
            &b"data: {\"type\":\"a\"}\n\n: comment\n\ndata: {\"type\":\"b\",\r\ndata: \"x\":1}\r\n\r\ndata: {\"ty"[..],
        );
        let first = take_block(&mut buffer).unwrap();
        assert_eq!(parse(&first).unwrap()["type"], "a");
        assert_eq!(parse(&take_block(&mut buffer).unwrap()), None, "a comment");
        let joined = parse(&take_block(&mut buffer).unwrap()).unwrap();
        assert_eq!(
            (joined["type"].as_str(), joined["x"].as_u64()),
            (Some("b"), Some(1))
        );
        assert_eq!(take_block(&mut buffer), None, "unfinished");
        assert_eq!(&buffer[..], b"data: {\"ty");
    }
}
