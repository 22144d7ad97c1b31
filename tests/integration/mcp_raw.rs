//! A bare Streamable-HTTP MCP client over a raw TCP socket, for tests that
//! must control exactly when each request goes out (a cancel in the middle
//! of a call, a request sent during a connection flood).

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::DEADLINE;

/// `127.0.0.1:<port>` of an MCP url.
pub(crate) fn authority(url: &str) -> &str {
    url.trim_start_matches("http://").trim_end_matches("/mcp")
}

/// Sends one `POST /mcp` and returns the open connection, unread.
pub(crate) async fn send_post(
    url: &str,
    token: &str,
    session: Option<&str>,
    body: &str,
) -> TcpStream {
    let authority = authority(url);
    let session = session.map_or(String::new(), |id| {
        format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n")
    });
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {token}\r\n{session}\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(authority).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    stream
}

/// Reads a response until it holds a JSON-RPC result or error, or the
/// server closes; the text read. `None`: nothing came within the deadline.
pub(crate) async fn read_answer(stream: &mut TcpStream) -> Option<String> {
    let mut text = Vec::new();
    let read = tokio::time::timeout(DEADLINE, async {
        let mut chunk = [0; 4096];
        loop {
            let n = stream.read(&mut chunk).await.unwrap_or(0);
            text.extend_from_slice(&chunk[..n]);
            if n == 0 || message(&String::from_utf8_lossy(&text)).is_some() {
                break;
            }
        }
    })
    .await;
    read.ok()
        .map(|()| String::from_utf8_lossy(&text).into_owned())
}

/// The HTTP status code of a response text.
pub(crate) fn status(text: &str) -> u16 {
    text.split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"))
}

/// The JSON-RPC message in a response (plain JSON or one SSE `data:` line),
/// once it has arrived whole.
pub(crate) fn message(text: &str) -> Option<Value> {
    let (head, body) = text.split_once("\r\n\r\n")?;
    let body = match head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        true => dechunk(body),
        false => body.to_owned(),
    };
    body.lines()
        .filter_map(|line| line.strip_prefix("data:").or(Some(line)))
        .filter_map(|line| serde_json::from_str::<Value>(line.trim()).ok())
        .find(|value| value.get("jsonrpc").is_some())
}

/// The data of a chunked body, as far as it has arrived.
fn dechunk(mut body: &str) -> String {
    let mut data = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        let (Some(chunk), Some(after)) = (rest.get(..size), rest.get(size..)) else {
            break;
        };
        if size == 0 {
            break;
        }
        data.push_str(chunk);
        body = after.trim_start_matches("\r\n");
    }
    data
}

/// One request and its JSON-RPC answer.
pub(crate) async fn call(url: &str, token: &str, session: &str, body: &Value) -> Value {
    let mut stream = send_post(url, token, Some(session), &body.to_string()).await;
    let text = read_answer(&mut stream)
        .await
        .expect("an answer within the deadline");
    message(&text).unwrap_or_else(|| panic!("no JSON-RPC answer in {text:?}"))
}

/// A 2025-11-25 session (initialize, then initialized); its id.
pub(crate) async fn open_session(url: &str, token: &str) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw-test", "version": "0"}}});
    let mut stream = send_post(url, token, None, &initialize.to_string()).await;
    let head = read_answer(&mut stream).await.expect("initialize answered");
    assert_eq!(status(&head), 200, "{head}");
    let id = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id in {head}"));
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let mut stream = send_post(url, token, Some(&id), initialized).await;
    let head = read_answer(&mut stream)
        .await
        .expect("initialized answered");
    assert_eq!(status(&head), 202, "{head}");
    id
}

/// `tools/call` of `name` with `arguments`, as a request body.
pub(crate) fn tool_call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}
