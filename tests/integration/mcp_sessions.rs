//! MCP sessions cannot pile up: clients that initialize and never end their
//! session (a crashed agent, a script) are capped, the one idle longest
//! closed for a new one (its next request gets 404), and idle ones expire,
//! their memory handed back; the real clients keep working meanwhile.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::common::{DEADLINE, Session, eventually, eventually_within, repo_root};
use crate::health::health_report;
use crate::load_driver::rss_kib;
use crate::mcp_http::endpoint;
use crate::mcp_raw::{open_session, read_answer, send_post, status};
use crate::pi_extension::require_node_deps;

/// Sessions the tests open and abandon.
const ABANDONED: usize = 500;
/// The host's cap (src/http/sessions.rs).
const MAX_SESSIONS: u64 = 64;

/// The HTTP status of `tools/list` in session `id`.
async fn list_status(url: &str, token: &str, id: &str) -> u16 {
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let mut stream = send_post(url, token, Some(id), list).await;
    let text = read_answer(&mut stream).await.expect("an answer");
    status(&text)
}

/// The open sessions `status()` shows for the MCP endpoint.
async fn open_sessions(session: &Session) -> Option<u64> {
    session
        .lua("return require('pi-ide').status().sessions.MCP")
        .await
        .as_u64()
}

#[tokio::test]
async fn abandoned_sessions_are_capped_and_the_real_clients_keep_working() {
    require_node_deps();
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    let mut clients = tokio::process::Command::new("node")
        .arg(repo_root().join("tests/mcp/session_churn.mjs"))
        .args([&url, &token])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run node");
    let mut said = BufReader::new(clients.stderr.take().unwrap()).lines();
    let connected = tokio::time::timeout(DEADLINE, said.next_line()).await;
    assert!(
        matches!(&connected, Ok(Ok(Some(line))) if line == "connected"),
        "the clients connect: {connected:?}"
    );
    let oldest = open_session(&url, &token).await;
    for _ in 0..ABANDONED {
        open_session(&url, &token).await;
    }

    assert_eq!(
        list_status(&url, &token, &oldest).await,
        404,
        "the session idle longest was closed for a new one"
    );
    eventually("status() to show the cap", || async {
        (open_sessions(&session).await == Some(MAX_SESSIONS)).then_some(())
    })
    .await;
    let fresh = open_session(&url, &token).await;
    assert_eq!(
        list_status(&url, &token, &fresh).await,
        200,
        "the next client is served"
    );

    let mut stdin = clients.stdin.take().unwrap();
    stdin.write_all(b"go\n").await.unwrap();
    let mut out = String::new();
    tokio::time::timeout(
        DEADLINE,
        clients.stdout.take().unwrap().read_to_string(&mut out),
    )
    .await
    .expect("the clients report")
    .unwrap();
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}"));
    for client in ["sdk", "bridge"] {
        let before = &report[client]["before"]["tools"];
        assert!(before.as_u64().is_some_and(|n| n > 0), "{report}");
        assert_eq!(
            report[client]["after"]["tools"], *before,
            "{client} still lists the tools: {report}"
        );
    }
    // The clients may have ended their own sessions by now.
    let health = health_report(&session).await;
    let open: u64 = health
        .split("MCP sessions open: /mcp ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no count of open sessions: {health}"));
    assert!(
        (MAX_SESSIONS - 2..=MAX_SESSIONS).contains(&open)
            && health.contains(&format!("at most {MAX_SESSIONS} an endpoint")),
        "{health}"
    );
}

#[tokio::test]
async fn idle_sessions_expire_and_the_memory_they_held_goes_back() {
    // 0.02 minutes: 1.2 s idle.
    let session = Session::start_with("{ mcp = { session_idle_minutes = 0.02 } }").await;
    let host = session.running_host(0).await;
    let (url, token) = endpoint(&session).await;
    // What the first session builds once (tool lists, buffers) stays.
    let warm = open_session(&url, &token).await;
    assert_eq!(list_status(&url, &token, &warm).await, 200);
    let none_open = || async { (open_sessions(&session).await == Some(0)).then_some(()) };
    eventually("the first session to expire", none_open).await;
    let before = rss_kib(host);

    for _ in 0..ABANDONED {
        open_session(&url, &token).await;
    }
    let during = rss_kib(host);
    eventually_within(
        "every session to expire",
        Duration::from_secs(60),
        none_open,
    )
    .await;
    let after = eventually("the host's memory to come back", || async {
        let now = rss_kib(host);
        (now <= before + 2048).then_some(now)
    })
    .await;
    eprintln!("host RSS: {before} KiB before, {during} KiB with sessions, {after} KiB after");
    assert_eq!(
        list_status(&url, &token, &warm).await,
        404,
        "an expired session is gone"
    );
    let fresh = open_session(&url, &token).await;
    assert_eq!(list_status(&url, &token, &fresh).await, 200);
    assert!(
        health_report(&session)
            .await
            .contains("idle sessions close after 0.02 minutes"),
        "the idle time is shown"
    );
}

/// Opens session `id`'s event stream (`GET`) and returns its connection
/// once the server answered 200.
async fn listen(url: &str, token: &str, id: &str) -> tokio::net::TcpStream {
    let authority = crate::mcp_raw::authority(url);
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {token}\r\n\
         Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Accept: text/event-stream\r\n\r\n"
    );
    let mut stream = tokio::net::TcpStream::connect(authority).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    tokio::time::timeout(DEADLINE, async {
        let mut byte = [0; 1];
        while !head.ends_with(b"\r\n\r\n") {
            assert_eq!(stream.read(&mut byte).await.unwrap(), 1, "closed");
            head.push(byte[0]);
        }
    })
    .await
    .expect("the stream's headers");
    let head = String::from_utf8_lossy(&head);
    assert_eq!(status(&head), 200, "{head}");
    stream
}

#[tokio::test]
async fn with_every_session_listening_a_new_one_is_refused_with_the_reason() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    let mut streams = Vec::new();
    for _ in 0..MAX_SESSIONS {
        let id = open_session(&url, &token).await;
        streams.push(listen(&url, &token, &id).await);
    }
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"late","version":"0"}}}"#;
    let mut refused = send_post(&url, &token, None, initialize).await;
    let text = read_answer(&mut refused).await.expect("an answer");
    assert_eq!(status(&text), 500, "{text}");
    assert!(
        text.contains("64 MCP sessions are open and every one has a stream open"),
        "{text}"
    );
    // One listener leaves: its session is idle now, and gives way.
    drop(streams.pop());
    let fresh = eventually("a session once one is idle", || async {
        let mut stream = send_post(&url, &token, None, initialize).await;
        let text = read_answer(&mut stream).await?;
        (status(&text) == 200).then_some(text)
    })
    .await;
    assert!(fresh.to_lowercase().contains("mcp-session-id"), "{fresh}");
}
