//! Bytes from a socket → WebSocket frames (the server's own decoder, with
//! its size limits)
//! → JSON-RPC messages → routed MCP requests. Nothing may panic, every
//! request id must come back unchanged, and `openDiff` must never become a
//! JSON-RPC error.

#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ide::claude_ide::{Route, route};
use pi_ide::jsonrpc::{self, Incoming};
use pi_ide::ws::frame::{Decoder, Event};
use serde_json::Value;

fn check_text(text: &str) {
    match jsonrpc::parse(text) {
        Ok(Incoming::Request { id, method, params }) => {
            let routed = route(&method, &params);
            if method == "tools/call" && params.get("name").and_then(Value::as_str) == Some("openDiff") {
                assert!(matches!(routed, Route::Tool(_)), "openDiff routed to {routed:?}");
            }
            let reply: Value = serde_json::from_str(&jsonrpc::result(&id, Value::Null)).unwrap();
            assert_eq!(reply["id"], id);
            let reply: Value = serde_json::from_str(&jsonrpc::result_json(&id, "{}")).unwrap();
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
    // The raw input as a byte stream of client frames, cut into reads of
    // 1 to 256 bytes by its first byte.
    let mut decoder = Decoder::new(pi_ide::ws::MAX_MESSAGE_BYTES);
    let (mut buf, mut start) = (Vec::new(), 0);
    let step = usize::from(data.first().copied().unwrap_or(0)) + 1;
    'reads: for read in data.chunks(step) {
        buf.extend_from_slice(read);
        loop {
            match decoder.next(&mut buf, &mut start) {
                Ok(Some(Event::Text(text))) => check_text(&text),
                Ok(Some(Event::Binary(bytes))) => {
                    if let Ok(text) = std::str::from_utf8(&bytes) {
                        check_text(text);
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(_) => break 'reads,
            }
        }
        assert!(start <= buf.len());
    }
    // The raw input as the head of an upgrade request.
    let _ = pi_ide::ws::handshake::answer(data, "token");
});
