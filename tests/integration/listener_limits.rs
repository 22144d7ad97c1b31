//! Limits on every listener, against the real host: half-sent headers and
//! silent connects are closed after the handshake/header timeout, a flood of
//! connections past the cap is refused while clients already connected are
//! served, and an HTTP body over the cap gets 413 before it is sent.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};

use crate::common::{Session, eventually};
use crate::context_socket::{Client, socket_in, socket_there};
use crate::mcp_http::endpoint;
use crate::mcp_raw::{authority, call, open_session, read_answer, send_post, status, tool_call};
use pi_ide::limits;

/// Generous: the timeouts under test are 5–10 s, the machine may be loaded.
const LONG: Duration = Duration::from_secs(60);

/// What a connection received before the server closed it; `None`: still
/// open after `within`.
async fn until_closed<S: AsyncReadExt + Unpin>(
    stream: &mut S,
    within: Duration,
) -> Option<Vec<u8>> {
    let mut received = Vec::new();
    let read = tokio::time::timeout(within, async {
        let mut chunk = [0; 4096];
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await;
    read.ok().map(|()| received)
}

fn refused_with_503(received: &[u8]) -> bool {
    received.starts_with(b"HTTP/1.1 503")
}

#[tokio::test]
async fn half_sent_headers_silent_connects_and_unfinished_lines_are_closed() {
    let session = Session::start().await;
    let (port, _) = session.lockfile().await;
    let (url, token) = endpoint(&session).await;
    let socket = socket_in(&session.work_dir);
    socket_there(&socket).await;
    let mcp = authority(&url).to_owned();

    let mut ws_silent = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut ws_half = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    ws_half
        .write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let mut http_silent = TcpStream::connect(&mcp).await.unwrap();
    let mut http_half = TcpStream::connect(&mcp).await.unwrap();
    http_half
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
        .await
        .unwrap();
    let mut line_half = UnixStream::connect(&socket).await.unwrap();
    line_half
        .write_all(br#"{"type":"review","fi"#)
        .await
        .unwrap();
    // A socket client that only listens is how pi's extension waits: kept.
    let (mut listener, _) = Client::greeted(&socket).await;

    // Clients that speak properly are served meanwhile.
    let mut agent = session.connect().await;
    let mcp_session = open_session(&url, &token).await;
    let (ws_silent, ws_half, http_silent, http_half, line_half) = tokio::join!(
        until_closed(&mut ws_silent, LONG),
        until_closed(&mut ws_half, LONG),
        until_closed(&mut http_silent, LONG),
        until_closed(&mut http_half, LONG),
        until_closed(&mut line_half, LONG),
    );
    for (name, outcome) in [
        ("a silent WebSocket connect", ws_silent),
        ("a half-sent upgrade", ws_half),
        ("a silent HTTP connect", http_silent),
        ("half-sent HTTP headers", http_half),
        ("an unfinished socket line", line_half),
    ] {
        assert!(outcome.is_some(), "{name} was kept open");
    }

    assert!(agent.request("tools/list", json!({})).await["result"]["tools"].is_array());
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert!(call(&url, &token, &mcp_session, &list).await["result"]["tools"].is_array());
    session.exec("vim.cmd.edit('listening.txt')").await;
    assert_eq!(listener.next().await["file"], "listening.txt");
}

#[tokio::test]
async fn a_websocket_flood_past_the_cap_is_refused_while_agents_are_served() {
    let session = Session::start().await;
    let (port, _) = session.lockfile().await;
    let mut agent = session.connect().await;
    let extra = 8;
    let mut flood = vec![];
    for _ in 0..limits::WS_MAX_CONNECTIONS + extra {
        flood.push(TcpStream::connect(("127.0.0.1", port)).await.unwrap());
    }
    assert!(
        agent.request("tools/list", json!({})).await["result"]["tools"].is_array(),
        "the connected agent is served during the flood"
    );
    let outcomes =
        futures_util::future::join_all(flood.iter_mut().map(|s| until_closed(s, LONG))).await;
    let refused = outcomes
        .iter()
        .filter(|o| o.as_deref().is_some_and(refused_with_503))
        .count();
    assert!(refused >= extra, "{refused} of the flood refused with 503");
    assert!(
        outcomes.iter().all(Option::is_some),
        "the rest closed at the handshake timeout"
    );
    drop(flood);
    let mut late = session.connect().await;
    assert!(late.request("tools/list", json!({})).await["result"]["tools"].is_array());
}

/// A kept-alive HTTP/1.1 connection: one request at a time, each answer
/// read to its end.
struct KeepAlive {
    stream: TcpStream,
    url: String,
    token: String,
}

impl KeepAlive {
    async fn open(url: &str, token: &str) -> KeepAlive {
        KeepAlive {
            stream: TcpStream::connect(authority(url)).await.unwrap(),
            url: url.to_owned(),
            token: token.to_owned(),
        }
    }

    /// Sends a POST and reads its whole answer (chunked or sized).
    async fn post(&mut self, session: Option<&str>, body: &str) -> String {
        let session = session.map_or(String::new(), |id| {
            format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n")
        });
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n{session}\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: {}\r\n\r\n{body}",
            authority(&self.url),
            self.token,
            body.len()
        );
        self.stream.write_all(request.as_bytes()).await.unwrap();
        let mut text = Vec::new();
        let read = tokio::time::timeout(LONG, async {
            let mut chunk = [0; 4096];
            loop {
                let n = self.stream.read(&mut chunk).await.unwrap();
                assert!(n > 0, "closed: {}", String::from_utf8_lossy(&text));
                text.extend_from_slice(&chunk[..n]);
                let so_far = String::from_utf8_lossy(&text);
                let Some((head, body)) = so_far.split_once("\r\n\r\n") else {
                    continue;
                };
                let head = head.to_ascii_lowercase();
                let done = if head.contains("transfer-encoding: chunked") {
                    body.ends_with("0\r\n\r\n")
                } else {
                    let length = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map_or(0, |v| v.trim().parse().unwrap());
                    body.len() >= length
                };
                if done {
                    break;
                }
            }
        })
        .await;
        assert!(
            read.is_ok(),
            "no whole answer: {}",
            String::from_utf8_lossy(&text)
        );
        String::from_utf8(text).unwrap()
    }
}

#[tokio::test]
async fn an_http_flood_past_the_cap_is_refused_while_a_connected_client_is_served() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    session.write_file("served.txt", "served\n");
    let mut client = KeepAlive::open(&url, &token).await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "kept-alive", "version": "0"}}});
    let head = client.post(None, &initialize.to_string()).await;
    let id = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("mcp-session-id:")
                .map(|v| v.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session: {head}"));
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(status(&client.post(Some(&id), initialized).await), 202);

    let extra = 8;
    let mut flood = vec![];
    for _ in 0..limits::MCP_MAX_CONNECTIONS + extra {
        flood.push(TcpStream::connect(authority(&url)).await.unwrap());
    }
    let read = tool_call(
        2,
        "get_file_text_by_path",
        json!({"pathInProject": "served.txt"}),
    );
    let answer = client.post(Some(&id), &read.to_string()).await;
    assert!(
        answer.contains(r#""text":"served""#),
        "served during the flood: {answer}"
    );
    let outcomes =
        futures_util::future::join_all(flood.iter_mut().map(|s| until_closed(s, LONG))).await;
    let refused = outcomes
        .iter()
        .filter(|o| o.as_deref().is_some_and(refused_with_503))
        .count();
    assert!(refused >= extra, "{refused} of the flood refused with 503");
    assert!(
        outcomes.iter().all(Option::is_some),
        "the rest closed at the header timeout"
    );
    drop(flood);
    let later = open_session(&url, &token).await;
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    assert!(call(&url, &token, &later, &list).await["result"]["tools"].is_array());
}

#[tokio::test]
async fn a_socket_flood_past_the_cap_is_refused_while_a_connected_client_is_served() {
    let session = Session::start_with("{ selection = { debounce_ms = 20 } }").await;
    let socket = socket_in(&session.work_dir);
    socket_there(&socket).await;
    let (mut client, _) = Client::greeted(&socket).await;
    let extra = 8;
    let mut flood = vec![];
    for _ in 0..limits::SOCKET_MAX_CONNECTIONS + extra {
        flood.push(UnixStream::connect(&socket).await.unwrap());
    }
    // Admitted: greeted with hello. Refused: closed with nothing said.
    let mut refused = 0;
    for stream in &mut flood {
        let mut first = [0; 1];
        match tokio::time::timeout(LONG, stream.read(&mut first)).await {
            Ok(Ok(0)) | Ok(Err(_)) => refused += 1,
            Ok(Ok(_)) => {}
            Err(_) => panic!("neither greeted nor closed"),
        }
    }
    assert!(refused >= extra, "{refused} of the flood refused");
    session.exec("vim.cmd.edit('during.txt')").await;
    assert_eq!(
        client.next().await["file"],
        "during.txt",
        "served during the flood"
    );
    drop(flood);
    eventually(
        "a new client to be greeted once the flood is gone",
        || async {
            let mut stream = UnixStream::connect(&socket).await.ok()?;
            let mut first = [0; 1];
            (stream.read(&mut first).await.ok()? == 1).then_some(())
        },
    )
    .await;
}

#[tokio::test]
async fn an_http_body_over_the_cap_gets_413_before_it_is_sent() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    let mut stream = TcpStream::connect(authority(&url)).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n\r\n{{\"jsonrpc\":",
        authority(&url),
        limits::MCP_MAX_BODY_BYTES + 1
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let answer = until_closed(&mut stream, LONG)
        .await
        .expect("an answer, then closed");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    // A body at the cap's side of the line is read and answered.
    let fits = tool_call(
        1,
        "get_file_text_by_path",
        json!({"pathInProject": "x".repeat(1 << 20)}),
    );
    let mut stream = send_post(&url, &token, None, &fits.to_string()).await;
    let answer = read_answer(&mut stream).await.expect("answered");
    assert_ne!(status(&answer), 413, "{answer}");
}

#[tokio::test]
async fn only_loopback_origins_reach_mcp() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    for (origin, allowed) in [
        (None, true),
        (Some("http://localhost:3000"), true),
        (Some("http://127.0.0.1"), true),
        (Some("https://[::1]:8443"), true),
        (Some("https://evil.example"), false),
        (Some("http://127.0.0.1.evil.example"), false),
        (Some("http://localhost@evil.example"), false),
        (Some("http://localhost.evil.example:80"), false),
        (Some("null"), false),
        (Some("file://"), false),
        (Some("chrome-extension://abcdef"), false),
    ] {
        let origin_line = origin.map_or(String::new(), |o| format!("Origin: {o}\r\n"));
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n{origin_line}\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{ping}",
            authority(&url),
            ping.len()
        );
        let mut stream = TcpStream::connect(authority(&url)).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let answer = read_answer(&mut stream).await.expect("answered");
        assert_eq!(
            status(&answer) == 403,
            !allowed,
            "Origin {origin:?}: {answer}"
        );
    }
}
