//! Entry points for the fuzz targets in `tests/fuzz`: each feeds bytes a
//! client (or Lua) could send to the code that reads them, as the host
//! does. Not used by the host itself.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use nvim_rs::Value;
use nvim_rs::rpc::model::{self, RpcMessage};
use serde_json::{Value as Json, json};
use tokio::runtime::Runtime;
use tokio_util::compat::TokioAsyncReadCompatExt;

use crate::context_review::messages;
pub use crate::context_review::messages::Incoming;
use crate::diagnostics::Mirror;
use crate::host::events::Inbox;
use crate::nvim::handler::{NvimHandler, parse_buffer_event};
use crate::nvim::seam::EditorEvent;
use crate::outline::worker::Worker;
use crate::socket::lines::{Chunk, Lines};
use crate::state::{Settings, State};

fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

/// The context/review socket's bytes, cut into reads at the positions
/// `cuts` gives, framed with a line cap of `max`, each line parsed as a
/// message. The framing's buffer never holds more than the cap.
pub fn socket_lines(data: &[u8], cuts: &[u8], max: usize) -> Vec<Incoming> {
    let mut lines = Lines::new(max);
    let mut parsed = vec![];
    let mut rest = data;
    let mut sizes = cuts.iter().map(|&c| usize::from(c) + 1).cycle();
    while !rest.is_empty() {
        let size = sizes.next().unwrap_or(rest.len()).min(rest.len());
        let (read, after) = rest.split_at(size);
        rest = after;
        for chunk in lines.feed(read) {
            if let Chunk::Line(line) = chunk {
                assert!(line.len() <= max, "a line over the cap came through");
                parsed.push(messages::parse(&line));
            }
        }
        assert!(
            lines.buffered() <= max + 1,
            "the framing held {} bytes",
            lines.buffered()
        );
    }
    parsed
}

/// The token the WebSocket entry points upgrade with.
pub const WEBSOCKET_TOKEN: &str = "token";

/// Bytes a client writes to the WebSocket port, served as the host serves
/// them: tokio-tungstenite upgrades through our handshake callback, then
/// reads messages under our caps. With `upgrade`, a valid upgrade request
/// comes first and `data` is the frames after it. Returns the text of each
/// message read until the connection ends.
pub fn websocket_texts(data: &[u8], upgrade: bool) -> Vec<String> {
    use futures_util::StreamExt;
    use tokio::io::AsyncWriteExt;
    use tokio_tungstenite::tungstenite::Message;

    let mut input = Vec::new();
    if upgrade {
        input.extend_from_slice(
            b"GET / HTTP/1.1\r\nHost: 127.0.0.1:1\r\nUpgrade: websocket\r\n\
              Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\
              Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
              x-pi-ide-authorization: token\r\n\r\n",
        );
    }
    input.extend_from_slice(data);
    runtime().block_on(async move {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (mut from_server, mut to_server) = tokio::io::split(client);
        let feed = async move {
            let _ = to_server.write_all(&input).await;
            let _ = to_server.shutdown().await;
        };
        let discard = async move {
            let _ = tokio::io::copy(&mut from_server, &mut tokio::io::sink()).await;
        };
        let serve = async move {
            let mut texts = Vec::new();
            let Ok((mut ws, _)) = crate::ws::handshake::accept(server, WEBSOCKET_TOKEN).await
            else {
                return texts;
            };
            while let Some(Ok(message)) = ws.next().await {
                match message {
                    Message::Text(text) => texts.push(text.to_string()),
                    Message::Binary(bytes) => {
                        texts.extend(std::str::from_utf8(&bytes).ok().map(str::to_owned))
                    }
                    _ => {}
                }
            }
            texts
        };
        tokio::join!(feed, discard, serve).2
    })
}

/// Bytes from Neovim's side of the channel: msgpack-RPC messages as nvim-rs
/// decodes them, each notification parsed as the handler does.
pub fn editor_messages(data: &[u8]) -> usize {
    runtime().block_on(async {
        let mut reader = std::io::Cursor::new(data.to_vec()).compat();
        let mut rest = vec![];
        let mut parsed = 0;
        while let Ok(message) = model::decode(&mut reader, &mut rest).await {
            if let RpcMessage::RpcNotification { method, params } = message {
                let known = match method.starts_with("nvim_buf_") {
                    true => parse_buffer_event(&method, &params).is_some(),
                    false => EditorEvent::parse(&method, &params).is_some(),
                };
                parsed += usize::from(known);
            }
        }
        parsed
    })
}

/// What the HTTP endpoint did with a request.
#[derive(Debug)]
pub struct HttpVerdict {
    pub status: u16,
    /// Each header as the request carried it.
    pub headers: Vec<(String, Vec<u8>)>,
}

/// The token the fuzzed HTTP requests are checked against.
pub const HTTP_TOKEN: &str = "fuzz-token-0123456789";

/// An HTTP request head (`METHOD PATH`, then `Name: value` lines) through
/// the endpoint's checks: ours (token, path, body cap), then rmcp's (Host,
/// Origin) in front of a handler that serves nothing. `None`: the bytes
/// are no request hyper would have parsed.
pub fn http_request(data: &[u8]) -> Option<HttpVerdict> {
    let text = std::str::from_utf8(data).ok()?;
    let mut lines = text.split("\r\n");
    let mut first = lines.next()?.splitn(2, ' ');
    let method = hyper::Method::from_bytes(first.next()?.as_bytes()).ok()?;
    let uri: hyper::Uri = first.next()?.parse().ok()?;
    let mut builder = hyper::Request::builder().method(method).uri(uri);
    let mut headers = vec![];
    for line in lines.take_while(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':')?;
        let name = hyper::header::HeaderName::from_bytes(name.as_bytes()).ok()?;
        let value = hyper::header::HeaderValue::from_bytes(value.trim().as_bytes()).ok()?;
        headers.push((name.as_str().to_owned(), value.as_bytes().to_vec()));
        builder = builder.header(name, value);
    }
    let request = builder
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .ok()?;
    let status = runtime().block_on(crate::http::server::screen(request, HTTP_TOKEN));
    Some(HttpVerdict { status, headers })
}

/// The project tools over a stand-in Neovim that knows no buffers.
struct Project {
    state: Arc<State>,
    root: PathBuf,
}

/// Text of a file outside the fuzzed project: no tool result may hold it.
pub const OUTSIDE_SECRET: &str = "OUTSIDE-THE-PROJECT-d41d8cd9";

fn project() -> &'static Project {
    static PROJECT: OnceLock<Project> = OnceLock::new();
    PROJECT.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("pi-ide-fuzz-{}", std::process::id()));
        let root = base.join("project");
        std::fs::create_dir_all(root.join("src")).expect("the fuzz project");
        std::fs::create_dir_all(base.join("outside")).expect("the outside dir");
        std::fs::write(root.join("a.txt"), "alpha\nbeta\n").expect("a file");
        std::fs::write(root.join("src/b.rs"), "fn b() {}\n").expect("a file");
        std::fs::write(base.join("outside/secret.txt"), OUTSIDE_SECRET).expect("a file");
        let root = root.canonicalize().expect("the root");
        let state = runtime()
            .block_on(stand_in_state(&root))
            .expect("a stand-in Neovim");
        Project { state, root }
    })
}

/// Shared state whose Neovim is a task that answers `project_roots` with
/// `root` and every other call with nil.
async fn stand_in_state(root: &std::path::Path) -> std::io::Result<Arc<State>> {
    let (host_end, nvim_end) = tokio::net::UnixStream::pair()?;
    let diagnostics = Arc::new(Mirror::default());
    diagnostics.update(vec![]);
    let (inbox, _) = Inbox::new(diagnostics.clone());
    let outline = Worker::spawn()?;
    let handler = NvimHandler::new(inbox, outline.clone());
    let (nvim, _io_loop) = crate::nvim::attach_socket(host_end, handler)?;
    crate::task::spawn(stand_in_neovim(nvim_end, root.display().to_string()));
    let settings = Settings {
        token: HTTP_TOKEN.into(),
        root: root.to_path_buf(),
        approve_edits: true,
        terminal_commands: true,
        keeps_place: false,
    };
    Ok(Arc::new(State::new(nvim, outline, diagnostics, settings)))
}

async fn stand_in_neovim(stream: tokio::net::UnixStream, root: String) {
    use tokio::io::AsyncWriteExt;
    let (read, mut writer) = stream.into_split();
    let mut reader = read.compat();
    let mut rest = vec![];
    while let Ok(message) = model::decode(&mut reader, &mut rest).await {
        let RpcMessage::RpcRequest { msgid, params, .. } = message else {
            continue;
        };
        let call = params
            .get(1)
            .and_then(|args| args.as_array()?.first()?.as_str());
        let result = match call {
            Some("project_roots") => {
                Value::Map(vec![(Value::from("cwd"), Value::from(root.as_str()))])
            }
            _ => Value::Nil,
        };
        let answer = RpcMessage::RpcResponse {
            msgid,
            error: Value::Nil,
            result,
        };
        let mut bytes = vec![];
        if model::encode_sync(&mut bytes, answer).is_err()
            || writer.write_all(&bytes).await.is_err()
        {
            return;
        }
    }
}

/// Project tool number `tool` (modulo their count) called with `arguments`,
/// its result; `None` when it waits (for a language server, the person)
/// longer than a fuzz run can.
pub fn project_call(tool: u8, arguments: serde_json::Map<String, Json>) -> Option<Json> {
    let tools = crate::mcp_http::TOOLS;
    let name = tools[usize::from(tool) % tools.len()].spec().name;
    let project = project();
    runtime().block_on(async {
        let call = crate::mcp_http::call(&project.state, name, Json::Object(arguments), None);
        let result = tokio::time::timeout(Duration::from_millis(20), call)
            .await
            .ok()?;
        Some(result.unwrap_or_else(|| json!({"unknown tool": name})))
    })
}

/// The fuzzed project's root.
pub fn project_root() -> PathBuf {
    project().root.clone()
}
