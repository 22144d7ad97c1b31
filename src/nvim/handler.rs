//! Receives what Lua sends and forwards it; never awaits Neovim here, since
//! nvim-rs handles notifications one at a time on its I/O loop.

use async_trait::async_trait;
use nvim_rs::compat::tokio::Compat;
use nvim_rs::{Neovim, Value};
use tokio::sync::mpsc::UnboundedSender;

use super::convert::to_json;
use crate::diffs::DiffOutcome;
use crate::outline::worker::{Command, Worker};
use crate::selection::Positions;
use crate::suggest::SuggestRequest;

/// What Neovim told the host, in the order it happened.
#[derive(Debug)]
pub enum EditorEvent {
    Selection(Positions),
    DiffDecided { id: u64, outcome: DiffOutcome },
    Cwd(String),
    Suggest(SuggestRequest),
    SuggestCancel(u64),
    ListModels,
    Stop,
}

#[derive(Clone)]
pub struct NvimHandler {
    events: UnboundedSender<EditorEvent>,
    /// Buffer change events go straight to the outline worker, in order.
    outline: Worker,
}

impl NvimHandler {
    pub fn new(events: UnboundedSender<EditorEvent>, outline: Worker) -> Self {
        NvimHandler { events, outline }
    }
}

/// Parses `nvim_buf_*_event` notifications into worker commands.
pub fn parse_buffer_event(name: &str, args: &[Value]) -> Option<Command> {
    let buf = buffer_handle(args.first()?)?;
    match name {
        "nvim_buf_lines_event" => Some(Command::Lines {
            buf,
            tick: args.get(1)?.as_u64().unwrap_or(0),
            first: args.get(2)?.as_i64()?,
            last: args.get(3)?.as_i64()?,
            lines: args
                .get(4)?
                .as_array()?
                .iter()
                .map(|l| l.as_str().unwrap_or_default().to_owned())
                .collect(),
        }),
        "nvim_buf_detach_event" => Some(Command::Detach { buf }),
        _ => None,
    }
}

/// A buffer handle: msgpack ext type 0 holding an integer, or a plain integer.
fn buffer_handle(value: &Value) -> Option<i64> {
    if let Some(handle) = value.as_i64() {
        return Some(handle);
    }
    let Value::Ext(_, bytes) = value else {
        return None;
    };
    let (&tag, rest) = bytes.split_first()?;
    let be = |n: usize| {
        rest.get(..n)
            .map(|b| b.iter().fold(0i64, |acc, &x| (acc << 8) | i64::from(x)))
    };
    match tag {
        0x00..=0x7f => Some(i64::from(tag)),
        0xcc => be(1),
        0xcd => be(2),
        0xce => be(4),
        0xcf | 0xd3 => be(8),
        _ => None,
    }
}

/// Parses one notification; `None` for anything malformed.
pub fn parse_event(name: &str, args: &[Value]) -> Option<EditorEvent> {
    match name {
        "selection" => serde_json::from_value(to_json(args.first()?))
            .ok()
            .map(EditorEvent::Selection),
        "diff_decided" => {
            let id = args.first()?.as_u64()?;
            let outcome = if args.get(1)?.as_bool()? {
                DiffOutcome::Accepted(args.get(2)?.as_str()?.to_owned())
            } else {
                DiffOutcome::Rejected { reason: None }
            };
            Some(EditorEvent::DiffDecided { id, outcome })
        }
        "cwd" => Some(EditorEvent::Cwd(args.first()?.as_str()?.to_owned())),
        "suggest" => serde_json::from_value(to_json(args.first()?))
            .ok()
            .map(EditorEvent::Suggest),
        "suggest_cancel" => Some(EditorEvent::SuggestCancel(args.first()?.as_u64()?)),
        "list_models" => Some(EditorEvent::ListModels),
        "stop" => Some(EditorEvent::Stop),
        _ => None,
    }
}

#[async_trait]
impl nvim_rs::Handler for NvimHandler {
    type Writer = Compat<tokio::fs::File>;

    async fn handle_notify(&self, name: String, args: Vec<Value>, _: Neovim<Self::Writer>) {
        if name.starts_with("nvim_buf_") {
            if let Some(command) = parse_buffer_event(&name, &args) {
                self.outline.send(command);
            }
            return;
        }
        match parse_event(&name, &args) {
            Some(event) => {
                let _ = self.events.send(event);
            }
            None => tracing::warn!("ignored malformed notification {name}"),
        }
    }

    async fn handle_request(
        &self,
        name: String,
        _: Vec<Value>,
        _: Neovim<Self::Writer>,
    ) -> Result<Value, Value> {
        match name.as_str() {
            "ping" => Ok(Value::Map(vec![
                (
                    Value::from("version"),
                    Value::from(env!("CARGO_PKG_VERSION")),
                ),
                (Value::from("seam"), Value::from(crate::SEAM_VERSION)),
            ])),
            _ => Err(Value::from(format!("unknown request {name}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_seam_notifications() {
        let accepted = parse_event(
            "diff_decided",
            &[Value::from(3), Value::from(true), Value::from("text\n")],
        );
        assert!(
            matches!(accepted, Some(EditorEvent::DiffDecided { id: 3, outcome: DiffOutcome::Accepted(t) }) if t == "text\n")
        );
        let rejected = parse_event("diff_decided", &[Value::from(4), Value::from(false)]);
        assert!(matches!(
            rejected,
            Some(EditorEvent::DiffDecided {
                id: 4,
                outcome: DiffOutcome::Rejected { .. }
            })
        ));
        assert!(
            matches!(parse_event("cwd", &[Value::from("/w")]), Some(EditorEvent::Cwd(d)) if d == "/w")
        );
        let positions = Value::Map(vec![
            (Value::from("buf"), Value::from(1)),
            (Value::from("path"), Value::from("/w/a")),
            (Value::from("mode"), Value::from("cursor")),
            (
                Value::from("start"),
                Value::Array(vec![Value::from(0), Value::from(2)]),
            ),
            (
                Value::from("end"),
                Value::Array(vec![Value::from(0), Value::from(2)]),
            ),
        ]);
        assert!(matches!(
            parse_event("selection", &[positions]),
            Some(EditorEvent::Selection(_))
        ));
    }

    #[test]
    fn buffer_events_carry_ext_handles() {
        let buf = Value::Ext(0, vec![0xcd, 0x01, 0x02]);
        let lines = Value::Array(vec![Value::from("a"), Value::from("b")]);
        let args = [
            buf.clone(),
            Value::from(7),
            Value::from(2),
            Value::from(-1),
            lines,
            Value::from(false),
        ];
        let Some(Command::Lines {
            buf: 258,
            tick: 7,
            first: 2,
            last: -1,
            lines,
        }) = parse_buffer_event("nvim_buf_lines_event", &args)
        else {
            panic!("not parsed");
        };
        assert_eq!(lines, ["a", "b"]);
        assert!(matches!(
            parse_buffer_event("nvim_buf_detach_event", &[Value::Ext(0, vec![5])]),
            Some(Command::Detach { buf: 5 })
        ));
        assert!(parse_buffer_event("nvim_buf_changedtick_event", &[buf, Value::from(8)]).is_none());
        assert!(parse_buffer_event("nvim_buf_lines_event", &[Value::from("x")]).is_none());
    }

    #[test]
    fn malformed_notifications_are_dropped() {
        assert!(parse_event("diff_decided", &[Value::from("x")]).is_none());
        assert!(parse_event("diff_decided", &[Value::from(1), Value::from(true)]).is_none());
        assert!(parse_event("selection", &[Value::from(1)]).is_none());
        assert!(parse_event("cwd", &[]).is_none());
        assert!(parse_event("bogus", &[]).is_none());
    }
}
