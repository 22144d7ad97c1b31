//! A minimal Streamable-HTTP MCP client for timing tool calls at the
//! client: one kept-alive HTTP/1.1 connection, plain POSTs with the bearer
//! token, answers read as JSON or from an SSE stream (chunked or not), so
//! the figures include no process start-up or SDK machinery.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

pub struct McpClient {
    stream: BufReader<TcpStream>,
    authority: String,
    token: String,
    session: Option<String>,
    next_id: u64,
}

/// One HTTP response: its headers (names lowercased) and body.
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl McpClient {
    /// Connects to `url` (`http://127.0.0.1:<port>/mcp`) and initializes a
    /// session.
    pub async fn connect(url: &str, token: &str) -> McpClient {
        let authority = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned();
        let stream = TcpStream::connect(&authority).await.expect("connect");
        stream.set_nodelay(true).unwrap();
        let mut client = McpClient {
            stream: BufReader::new(stream),
            authority,
            token: token.to_owned(),
            session: None,
            next_id: 0,
        };
        let init = client
            .post(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "pi-ide-bench", "version": "0"},
                }}),
            )
            .await;
        assert_eq!(init.status, 200, "initialize: {}", init.body);
        client.session = init
            .headers
            .iter()
            .find(|(name, _)| name == "mcp-session-id")
            .map(|(_, value)| value.clone());
        let initialized = client
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert!(initialized.status < 300, "{}", initialized.body);
        client
    }

    /// `method` with `params`; the JSON-RPC result (or error object).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let response = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let message = messages(&response.body)
            .into_iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {method} in {}", response.body));
        message
            .get("result")
            .or_else(|| message.get("error"))
            .cloned()
            .unwrap_or(Value::Null)
    }

    /// `tools/call`; the `CallToolResult`.
    pub async fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// Ends the session (`DELETE`), as a client that leaves properly does.
    pub async fn close(mut self) {
        let session = self.session.clone().unwrap_or_default();
        let request = format!(
            "DELETE /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\
             Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n",
            self.authority, self.token
        );
        self.stream
            .get_mut()
            .write_all(request.as_bytes())
            .await
            .unwrap();
        let response = self.read_response().await;
        assert!(response.status < 300, "DELETE: {}", response.status);
    }

    async fn post(&mut self, body: Value) -> Response {
        let body = body.to_string();
        let session = self
            .session
            .as_ref()
            .map(|id| format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n"))
            .unwrap_or_default();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n{session}\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: {}\r\n\r\n{body}",
            self.authority,
            self.token,
            body.len()
        );
        self.stream
            .get_mut()
            .write_all(request.as_bytes())
            .await
            .unwrap();
        self.read_response().await
    }

    async fn read_response(&mut self) -> Response {
        let status_line = self.line().await;
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status in {status_line:?}"));
        let mut headers = Vec::new();
        loop {
            let line = self.line().await;
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                headers.push((name.trim().to_lowercase(), value.trim().to_owned()));
            }
        }
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        let body = if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            let mut body = Vec::new();
            loop {
                let size = usize::from_str_radix(self.line().await.trim(), 16).expect("chunk size");
                if size == 0 {
                    self.line().await;
                    break;
                }
                let mut chunk = vec![0; size + 2];
                self.stream.read_exact(&mut chunk).await.unwrap();
                body.extend_from_slice(&chunk[..size]);
            }
            body
        } else {
            let length: usize = header("content-length")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let mut body = vec![0; length];
            self.stream.read_exact(&mut body).await.unwrap();
            body
        };
        Response {
            status,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        }
    }

    async fn line(&mut self) -> String {
        let mut line = String::new();
        let n = self.stream.read_line(&mut line).await.unwrap();
        assert!(n > 0, "the server closed the connection");
        line.trim_end_matches(['\r', '\n']).to_owned()
    }
}

/// The JSON-RPC messages of a body: plain JSON, or SSE `data:` lines.
fn messages(body: &str) -> Vec<Value> {
    if let Ok(message) = serde_json::from_str::<Value>(body) {
        return vec![message];
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}
