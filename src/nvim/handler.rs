//! Receives what Lua sends and forwards it; never awaits Neovim here, since
//! nvim-rs handles notifications one at a time on its I/O loop.

use std::sync::Arc;

use async_trait::async_trait;
use nvim_rs::compat::tokio::Compat;
use nvim_rs::{Neovim, Value};

use super::seam::EditorEvent;
use crate::outline::worker::{Command, Worker};

/// Where the events Lua sends go, parsed, in the order Lua sent them.
/// Called on nvim-rs's I/O loop: it must not block or await.
pub trait EventSink: Send + Sync + 'static {
    fn receive(&self, event: EditorEvent);
}

#[derive(Clone)]
pub struct NvimHandler {
    events: Arc<dyn EventSink>,
    /// Buffer change events go straight to the outline worker, in order.
    outline: Worker,
}

impl NvimHandler {
    pub fn new(events: Arc<dyn EventSink>, outline: Worker) -> Self {
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

#[async_trait]
impl nvim_rs::Handler for NvimHandler {
    type Writer = Compat<super::stdio::Output>;

    async fn handle_notify(&self, name: String, args: Vec<Value>, _: Neovim<Self::Writer>) {
        if name.starts_with("nvim_buf_") {
            if let Some(command) = parse_buffer_event(&name, &args) {
                self.outline.send(command);
            }
            return;
        }
        match EditorEvent::parse(&name, &args) {
            Some(event) => self.events.receive(event),
            None => tracing::warn!("ignored malformed notification {name}"),
        }
    }

    async fn handle_request(
        &self,
        name: String,
        _: Vec<Value>,
        _: Neovim<Self::Writer>,
    ) -> Result<Value, Value> {
        // Lua only notifies: a request would freeze Neovim while it waits.
        Err(Value::from(format!("unknown request {name}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
