//! An agent that timestamps every frame the moment it arrives, on the same
//! clock as Neovim's `vim.uv.hrtime()` (CLOCK_MONOTONIC).

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

/// Nanoseconds on CLOCK_MONOTONIC.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A received frame: arrival time, parsed message, size in bytes.
pub struct Frame {
    pub at_ns: u64,
    pub message: Value,
    pub bytes: usize,
}

pub struct StampedAgent {
    outbox: mpsc::UnboundedSender<String>,
    frames: mpsc::UnboundedReceiver<Frame>,
}

impl StampedAgent {
    pub async fn connect(port: u16, token: &str) -> StampedAgent {
        let request = crate::common::upgrade_request(port, &[("x-pi-ide-authorization", token)]);
        let (ws, _) = tokio_tungstenite::connect_async(request).await.unwrap();
        let (mut sink, mut stream) = ws.split();
        let (outbox, mut outgoing) = mpsc::unbounded_channel::<String>();
        let (arrived, frames) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Some(Ok(frame)) = stream.next().await {
                let at_ns = now_ns();
                if let Message::Text(text) = frame {
                    let message = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
                    if arrived
                        .send(Frame {
                            at_ns,
                            message,
                            bytes: text.len(),
                        })
                        .is_err()
                    {
                        break;
                    }
                }
            }
        });
        tokio::spawn(async move {
            while let Some(text) = outgoing.recv().await {
                if sink.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
        });
        let mut agent = StampedAgent { outbox, frames };
        agent.send(json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {"clientInfo": {"name": "pi-ide"}}}));
        agent.next(|m| m["id"] == "init").await;
        agent
    }

    pub fn send(&self, message: Value) {
        let _ = self.outbox.send(message.to_string());
    }

    /// The next frame matching `wanted`; others are dropped.
    pub async fn next(&mut self, wanted: impl Fn(&Value) -> bool) -> Frame {
        loop {
            let frame =
                tokio::time::timeout(std::time::Duration::from_secs(60), self.frames.recv())
                    .await
                    .expect("timed out waiting for a frame")
                    .expect("connection closed");
            if wanted(&frame.message) {
                return frame;
            }
        }
    }

    /// The next request from the editor with `method`.
    pub async fn request(&mut self, method: &str) -> Frame {
        self.next(|m| m["method"] == method && m.get("id").is_some())
            .await
    }

    pub fn reply(&self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }
}
