//! Receives what Lua sends and forwards it; never awaits Neovim here, since
//! nvim-rs handles notifications one at a time on its I/O loop.

use async_trait::async_trait;
use nvim_rs::compat::tokio::Compat;
use nvim_rs::{Neovim, Value};
use tokio::sync::mpsc::UnboundedSender;

use super::convert::to_json;
use crate::diffs::DiffOutcome;
use crate::selection::Positions;

/// What Neovim told the host, in the order it happened.
#[derive(Debug)]
pub enum EditorEvent {
    Selection(Positions),
    DiffDecided { id: u64, outcome: DiffOutcome },
    Cwd(String),
    Stop,
}

#[derive(Clone)]
pub struct NvimHandler {
    events: UnboundedSender<EditorEvent>,
}

impl NvimHandler {
    pub fn new(events: UnboundedSender<EditorEvent>) -> Self {
        NvimHandler { events }
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
        "stop" => Some(EditorEvent::Stop),
        _ => None,
    }
}

#[async_trait]
impl nvim_rs::Handler for NvimHandler {
    type Writer = Compat<tokio::fs::File>;

    async fn handle_notify(&self, name: String, args: Vec<Value>, _: Neovim<Self::Writer>) {
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
    fn malformed_notifications_are_dropped() {
        assert!(parse_event("diff_decided", &[Value::from("x")]).is_none());
        assert!(parse_event("diff_decided", &[Value::from(1), Value::from(true)]).is_none());
        assert!(parse_event("selection", &[Value::from(1)]).is_none());
        assert!(parse_event("cwd", &[]).is_none());
        assert!(parse_event("bogus", &[]).is_none());
    }
}
