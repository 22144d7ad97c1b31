//! `pi-ide mcp-stdio`: this Neovim's `/mcp` endpoint as a stdio MCP
//! server, for agents whose `mcpServers` take only commands. Each JSON-RPC
//! line from stdin is POSTed to the endpoint (`$PI_IDE_MCP_URL`) with the
//! token (`$PI_IDE_MCP_TOKEN`, never on a command line); each answer, a
//! JSON body or the events of an SSE body, goes to stdout as a line.
//! `initialize` is relayed before anything else is read, so the session
//! id it brings goes with every later request; the rest run side by side
//! (a tool waiting for the person holds up nothing else).

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::Request;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

pub const URL_VAR: &str = "PI_IDE_MCP_URL";
pub const TOKEN_VAR: &str = "PI_IDE_MCP_TOKEN";
/// The longest line read from the agent, and the largest answer relayed.
const MAX_MESSAGE_BYTES: usize = 16 << 20;
/// Answers waiting for stdout.
const MAX_WAITING_ANSWERS: usize = 256;

/// Runs the relay until stdin closes; why it could not, in words.
pub async fn run() -> Result<(), String> {
    let url = std::env::var(URL_VAR).map_err(|_| format!("${URL_VAR} is not set"))?;
    let token = std::env::var(TOKEN_VAR).map_err(|_| format!("${TOKEN_VAR} is not set"))?;
    let endpoint = Arc::new(Relay::new(&url, token)?);
    let (answers, mut waiting) = mpsc::channel::<String>(MAX_WAITING_ANSWERS);
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = waiting.recv().await {
            let written = async {
                stdout.write_all(line.as_bytes()).await?;
                stdout.write_all(b"\n").await?;
                stdout.flush().await
            };
            if written.await.is_err() {
                return;
            }
        }
    });
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if line.trim().is_empty() {
            continue;
        }
        if line.len() > MAX_MESSAGE_BYTES {
            eprintln!("pi-ide mcp-stdio: a message over 16 MiB was dropped");
            continue;
        }
        let first = serde_json::from_str::<serde_json::Value>(&line)
            .is_ok_and(|message| message["method"] == "initialize");
        let relay = endpoint.clone();
        let answers = answers.clone();
        let exchange = async move {
            match relay.post(line).await {
                Ok(replies) => {
                    for reply in replies {
                        let _ = answers.send(reply).await;
                    }
                }
                Err(why) => eprintln!("pi-ide mcp-stdio: {why}"),
            }
        };
        match first {
            true => exchange.await,
            false => {
                tokio::spawn(exchange);
            }
        }
    }
    drop(answers);
    let _ = writer.await;
    Ok(())
}

/// The endpoint and the session it gave us.
struct Relay {
    /// `host:port` to dial, and the path.
    address: String,
    path: String,
    token: String,
    session: Mutex<Option<String>>,
}

impl Relay {
    fn new(url: &str, token: String) -> Result<Relay, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("{url} is not an http:// URL"))?;
        let (address, path) = rest.split_once('/').unwrap_or((rest, ""));
        Ok(Relay {
            address: address.to_owned(),
            path: format!("/{path}"),
            token,
            session: Mutex::default(),
        })
    }

    /// POSTs one message; the messages of its answer.
    async fn post(&self, message: String) -> Result<Vec<String>, String> {
        let stream = TcpStream::connect(&self.address)
            .await
            .map_err(|e| format!("cannot reach {}: {e}", self.address))?;
        let _ = stream.set_nodelay(true);
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(connection);
        let mut request = Request::post(&self.path)
            .header("host", &self.address)
            .header("authorization", format!("Bearer {}", self.token))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = crate::mutex::lock(&self.session).clone() {
            request = request.header("mcp-session-id", session);
        }
        let request = request
            .body(Full::new(Bytes::from(message)))
            .map_err(|e| e.to_string())?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        if let Some(session) = response.headers().get("mcp-session-id")
            && let Ok(session) = session.to_str()
        {
            *crate::mutex::lock(&self.session) = Some(session.to_owned());
        }
        let status = response.status();
        let event_stream = response
            .headers()
            .get("content-type")
            .and_then(|t| t.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let body = Limited::new(response.into_body(), MAX_MESSAGE_BYTES)
            .collect()
            .await
            .map_err(|e| format!("reading the answer failed: {e}"))?
            .to_bytes();
        let body = String::from_utf8_lossy(&body);
        if !status.is_success() {
            return Err(format!("the endpoint answered {status}: {}", body.trim()));
        }
        Ok(match event_stream {
            true => events(&body),
            false if body.trim().is_empty() => vec![],
            false => vec![body.trim().to_owned()],
        })
    }
}

/// The `data` of each event of an SSE body.
fn events(body: &str) -> Vec<String> {
    let mut events = vec![];
    let mut data: Vec<&str> = vec![];
    for line in body.lines().chain(std::iter::once("")) {
        if line.is_empty() {
            if !data.is_empty() {
                let event = data.join("\n");
                if !event.trim().is_empty() {
                    events.push(event);
                }
                data.clear();
            }
        } else if let Some(value) = line.strip_prefix("data:") {
            data.push(value.strip_prefix(' ').unwrap_or(value));
        }
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sse_body_gives_the_data_of_each_event() {
        let body = "id: 1\ndata: {\"a\":1}\n\n: keep-alive\n\ndata:{\"b\":2}\n";
        assert_eq!(events(body), ["{\"a\":1}", "{\"b\":2}"]);
        let relay = Relay::new("http://127.0.0.1:7/mcp", "t".into()).unwrap();
        assert_eq!(
            (relay.address.as_str(), relay.path.as_str()),
            ("127.0.0.1:7", "/mcp")
        );
        assert!(Relay::new("https://x/mcp", "t".into()).is_err());
    }
}
