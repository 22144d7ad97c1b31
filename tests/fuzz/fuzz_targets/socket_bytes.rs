//! Bytes from a socket → WebSocket frames (with the server's size limits)
//! → JSON-RPC messages → routed MCP requests. Nothing may panic, every
//! request id must come back unchanged, and `openDiff` must never become a
//! JSON-RPC error.

#![no_main]

use std::io::{self, Cursor, Read, Write};

use libfuzzer_sys::fuzz_target;
use pi_ide::jsonrpc::{self, Incoming};
use pi_ide::claude_ide::{Route, route};
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocket, WebSocketConfig};

/// A socket that reads the fuzz input and swallows what the server writes.
struct Input(Cursor<Vec<u8>>);

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Input {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn check_text(text: &str) {
    match jsonrpc::parse(text) {
        Ok(Incoming::Request { id, method, params }) => {
            let routed = route(&method, &params);
            if method == "tools/call" && params.get("name").and_then(Value::as_str) == Some("openDiff") {
                assert!(matches!(routed, Route::Tool(_)), "openDiff routed to {routed:?}");
            }
            let reply: Value = serde_json::from_str(&jsonrpc::result(&id, Value::Null)).unwrap();
            assert_eq!(reply["id"], id);
        }
        Ok(_) => {}
        Err(rejected) => {
            let reply: Value = serde_json::from_str(&rejected.reply).unwrap();
            assert!(reply["error"]["code"].is_i64());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    // The raw input as one message, as if it arrived in a single text frame.
    if let Ok(text) = std::str::from_utf8(data) {
        check_text(text);
    }
    // The raw input as a byte stream of client frames.
    let max = pi_ide::ws::MAX_MESSAGE_BYTES;
    let config = WebSocketConfig::default().max_message_size(Some(max)).max_frame_size(Some(max));
    let mut socket = WebSocket::from_raw_socket(Input(Cursor::new(data.to_vec())), Role::Server, Some(config));
    for _ in 0..64 {
        match socket.read() {
            Ok(Message::Text(text)) => check_text(text.as_str()),
            Ok(Message::Binary(bytes)) => {
                if let Ok(text) = std::str::from_utf8(&bytes) {
                    check_text(text);
                }
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
});
