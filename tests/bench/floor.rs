//! The agents' own floor: a WebSocket server that answers every request at
//! once with a result captured from our host (same bytes, same sizes), on
//! a thread of its own. No plugin can be answered faster than the agents
//! can send, receive and parse; the load figures against this server show
//! how much of a plugin's figure is the agents' own time.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

use crate::common::Session;
use crate::stamped::StampedAgent;

/// Results by method (`tools/call` by tool name), as our host gave them.
pub type Canned = Arc<HashMap<String, Value>>;

/// Asks our host in `session` once for each request the load sends.
pub async fn capture(session: &Session) -> Canned {
    let (port, lock) = session.lockfile().await;
    let mut agent = StampedAgent::connect(port, lock["authToken"].as_str().unwrap()).await;
    let mut canned = HashMap::new();
    for (key, method, params) in [
        ("tools/list", "tools/list", json!({})),
        (
            "getDiagnostics",
            "tools/call",
            json!({"name": "getDiagnostics", "arguments": {}}),
        ),
        ("ping", "ping", json!({})),
    ] {
        agent.send(json!({"jsonrpc": "2.0", "id": key, "method": method, "params": params}));
        let frame = agent.next(|m| m["id"] == key).await;
        canned.insert(key.to_owned(), frame.message["result"].clone());
    }
    canned.insert("initialize".to_owned(), json!({}));
    Arc::new(canned)
}

/// Starts the server; its port.
pub fn serve(canned: Canned) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = TcpListener::from_std(listener).unwrap();
            while let Ok((stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                tokio::spawn(answer(stream, canned.clone()));
            }
        });
    });
    port
}

async fn answer(stream: tokio::net::TcpStream, canned: Canned) {
    let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else {
        return;
    };
    while let Some(Ok(message)) = ws.next().await {
        let Message::Text(text) = message else {
            continue;
        };
        let request: Value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
        let Some(id) = request.get("id") else {
            continue;
        };
        let key = match request["method"].as_str() {
            Some("tools/call") => request["params"]["name"].as_str().unwrap_or(""),
            Some(method) => method,
            None => "",
        };
        let reply = match canned.get(key) {
            Some(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            None => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": key}}),
        };
        if ws.send(Message::text(reply.to_string())).await.is_err() {
            return;
        }
    }
}
