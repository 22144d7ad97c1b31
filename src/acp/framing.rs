//! The agent's stdio as JSON-RPC lines for the protocol crate: a line is
//! at most [`MAX_LINE_BYTES`], and a line that is not JSON ends the
//! session (an agent that prints its logs to stdout would otherwise fill
//! the transcript with parse errors), saying why.

use std::io;
use std::sync::{Arc, Mutex};

use agent_client_protocol::Lines;
use futures_util::{SinkExt, StreamExt};
use tokio::process::{ChildStdin, ChildStdout};
use tokio_util::codec::{FramedRead, FramedWrite, LinesCodec, LinesCodecError};

/// The longest line an agent may send (a 1 MB answer fits many times).
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// Why the agent's output ended the session, when it was the output's fault.
#[derive(Clone, Default)]
pub struct Garbled(Arc<Mutex<Option<String>>>);

impl Garbled {
    pub fn take(&self) -> Option<String> {
        crate::mutex::lock(&self.0).take()
    }

    fn set(&self, why: String) {
        crate::mutex::lock(&self.0).get_or_insert(why);
    }
}

/// The crate's transport over the agent's stdin and stdout.
pub fn transport(
    stdin: ChildStdin,
    stdout: ChildStdout,
    garbled: Garbled,
) -> Lines<
    impl futures_util::Sink<String, Error = io::Error> + Send + 'static,
    impl futures_util::Stream<Item = io::Result<String>> + Send + 'static,
> {
    let outgoing =
        SinkExt::<String>::sink_map_err(FramedWrite::new(stdin, LinesCodec::new()), codec_error);
    let incoming = FramedRead::new(stdout, LinesCodec::new_with_max_length(MAX_LINE_BYTES))
        .filter(|line| std::future::ready(!matches!(line, Ok(l) if l.trim().is_empty())))
        .map(move |line| checked(line, &garbled))
        .take_while(|line| std::future::ready(line.is_ok()));
    Lines::new(outgoing, incoming)
}

/// A line passed on when it is JSON; otherwise the reason is kept and the
/// stream ends.
fn checked(line: Result<String, LinesCodecError>, garbled: &Garbled) -> io::Result<String> {
    match line {
        Ok(line) if is_json(&line) => Ok(line),
        Ok(line) => {
            let shown: String = line.chars().take(120).collect();
            let why = format!("the agent wrote a line that is not JSON-RPC to stdout: {shown}");
            garbled.set(why.clone());
            Err(io::Error::new(io::ErrorKind::InvalidData, why))
        }
        Err(error) => {
            let why = match error {
                LinesCodecError::MaxLineLengthExceeded => {
                    format!("the agent sent a line over {} MiB", MAX_LINE_BYTES >> 20)
                }
                LinesCodecError::Io(error) => format!("reading the agent's output failed: {error}"),
            };
            garbled.set(why.clone());
            Err(io::Error::new(io::ErrorKind::InvalidData, why))
        }
    }
}

fn is_json(line: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(line).is_ok()
}

fn codec_error(error: LinesCodecError) -> io::Error {
    match error {
        LinesCodecError::Io(error) => error,
        other => io::Error::other(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_that_is_not_json_ends_the_stream_with_its_reason() {
        let garbled = Garbled::default();
        assert!(checked(Ok(r#"{"jsonrpc":"2.0"}"#.into()), &garbled).is_ok());
        assert!(garbled.take().is_none());
        assert!(checked(Ok("Loaded cached credentials.".into()), &garbled).is_err());
        let why = garbled.take().unwrap();
        assert!(
            why.contains("not JSON-RPC") && why.contains("Loaded cached"),
            "{why}"
        );
        assert!(checked(Err(LinesCodecError::MaxLineLengthExceeded), &garbled).is_err());
        assert!(garbled.take().unwrap().contains("16 MiB"));
    }
}
