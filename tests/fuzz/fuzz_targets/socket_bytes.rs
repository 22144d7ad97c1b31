//! Bytes from a socket → the WebSocket upgrade and frames (tokio-tungstenite
//! through the host's handshake callback, with its size limits)
//! → JSON-RPC messages → routed MCP requests. Nothing may panic, every
//! request id must come back unchanged, and `openDiff` must never become a
//! JSON-RPC error.

#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ide::jsonrpc::{self, Incoming};
use pi_ide::mcp_ws::{Route, route};
use serde_json::Value;

fn check_text(text: &str) {
    match jsonrpc::parse(text) {
        Ok(Incoming::Request { id, method, params }) => {
            let open_diff = method == "tools/call"
                && params.get("name").and_then(Value::as_str) == Some("openDiff");
            let routed = route(&method, params);
            if open_diff {
                assert!(matches!(routed, Route::Tool(_)), "openDiff routed to {routed:?}");
            }
            let sent = serde_json::to_value(&id).unwrap();
            let reply: Value = serde_json::from_str(&jsonrpc::result(&id, Value::Null)).unwrap();
            assert_eq!(reply["id"], sent);
            let raw = jsonrpc::raw(&serde_json::json!({}));
            let reply: Value = serde_json::from_str(&jsonrpc::raw_result(&id, &raw)).unwrap();
            assert_eq!(reply["id"], sent);
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
    // The raw input as the frames after a valid upgrade, read by
    // tokio-tungstenite under the host's caps, each message checked.
    for text in pi_ide::fuzzing::websocket_texts(data, true) {
        check_text(&text);
    }
    // The raw input as everything a client sends, upgrade request included.
    let _ = pi_ide::fuzzing::websocket_texts(data, false);
});
