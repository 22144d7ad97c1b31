//! What lasts on the MCP endpoint: with a fixed port the token is kept
//! across Neovim restarts (0600 in a 0700 directory; a corrupt or exposed
//! file is replaced and the person told), `:PiIde mcp` and `:checkhealth`
//! say so; and sessions are kept however long they idle unless an idle
//! time is set.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{Session, eventually};
use crate::health::health_report;
use crate::mcp_http::endpoint;
use crate::mcp_python::python_client;

/// A port nothing listens on right now.
pub(crate) fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Where a Neovim whose `$XDG_STATE_HOME` is `state_dir` keeps the token.
pub(crate) fn token_file(state_dir: &Path) -> PathBuf {
    state_dir.join("nvim/pi-ide/mcp-token")
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Waits until Lua knows the MCP URL (the lockfile comes first).
pub(crate) async fn wait_mcp_url(session: &Session) {
    eventually("the host reported its MCP url", || async {
        let url = session
            .lua("return require('pi-ide').status().mcp_url")
            .await;
        url.as_str().map(str::to_owned)
    })
    .await;
}

/// Neovim whose stdpath("state") is under `state_dir`, set up with `opts`.
async fn start_with_state(state_dir: &Path, opts: &str) -> Session {
    let session = Session::spawn().await;
    session
        .exec(&format!(
            "vim.env.XDG_STATE_HOME = {:?}
             local opts = {opts}; opts.bin = {:?}; require('pi-ide').setup(opts)",
            state_dir.to_str().unwrap(),
            crate::common::host_binary().to_str().unwrap(),
        ))
        .await;
    session
}

#[tokio::test]
async fn a_fixed_port_keeps_its_token_across_neovim_restarts() {
    let port = free_port();
    let opts = format!("{{ mcp = {{ port = {port} }} }}");
    let first = Session::start_with(&opts).await;
    let (url, token) = endpoint(&first).await;
    assert_eq!(url, format!("http://127.0.0.1:{port}/mcp"));
    let file = token_file(&first.state_dir);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        format!("{token}\n")
    );
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().unwrap()), 0o700);
    let log = eventually("the host's log", || async {
        let log = std::fs::read_to_string(first.state_dir.join("nvim/pi-ide.log")).ok()?;
        log.contains("MCP endpoint").then_some(log)
    })
    .await;
    assert!(!log.contains(&token), "the token never goes to the log");

    wait_mcp_url(&first).await;
    first.exec("vim.cmd('PiIde mcp')").await;
    let told = first.notifications().await.join("\n");
    assert!(
        told.contains(&format!(
            "claude mcp add --transport http nvim {url} --header \"Authorization: Bearer $(cat '{}')\"",
            file.display()
        )),
        "{told}"
    );
    assert!(!told.contains(&token), "{told}");
    let health = health_report(&first).await;
    assert!(
        health.contains(&format!("OK MCP endpoint {url}"))
            && health.contains("token kept in")
            && health.contains("idle sessions close after 240 minutes"),
        "{health}"
    );

    // Neovim quits; the next one, with the same stdpath("state"), serves
    // the same token, so a client configured once keeps working.
    first.exec("require('pi-ide.host').stop()").await;
    first.wait_stopped().await;
    let second = start_with_state(&first.state_dir, &opts).await;
    let (again_url, again_token) = endpoint(&second).await;
    assert_eq!((&again_url, &again_token), (&url, &token));
    let report = python_client(
        &url,
        json!({"headers": {"Authorization": format!("Bearer {token}")}}),
    );
    assert_eq!(report["protocolVersion"], "2026-07-28", "{report}");

    // Port 0: a fresh token each start, none kept.
    let any = Session::start().await;
    let (_, fresh) = endpoint(&any).await;
    assert_ne!(fresh, token);
    assert!(!token_file(&any.state_dir).exists());
    wait_mcp_url(&any).await;
    any.exec("vim.cmd('PiIde mcp')").await;
    let told = any.notifications().await.join("\n");
    assert!(told.contains("mcp = { port = N }"), "{told}");
}

#[tokio::test]
async fn a_corrupt_or_exposed_kept_token_is_replaced_and_the_person_told() {
    for (body, file_mode, reason) in [
        ("garbage\n", 0o600, "is not a token"),
        (&*format!("{}\n", "c".repeat(64)), 0o644, "mode 644"),
    ] {
        let session = Session::spawn().await;
        let file = token_file(&session.state_dir);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, body).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(file_mode)).unwrap();
        session
            .exec(&format!(
                "require('pi-ide').setup({{ bin = {:?}, mcp = {{ port = {} }} }})",
                crate::common::host_binary().to_str().unwrap(),
                free_port()
            ))
            .await;
        let (_, token) = endpoint(&session).await;
        assert_ne!(token, body.trim(), "{reason}");
        let told = eventually("a warning about the kept token", || async {
            let told = session.notifications().await.join("\n");
            told.contains("kept MCP token").then_some(told)
        })
        .await;
        assert!(
            told.contains(reason) && told.contains(":PiIde mcp"),
            "{told}"
        );
        assert!(!told.contains(&token), "never shows the token: {told}");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            format!("{token}\n")
        );
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(file.parent().unwrap()), 0o700);
        let health = health_report(&session).await;
        assert!(health.contains("WARNING the kept MCP token"), "{health}");
    }
}

/// Status and head of a raw MCP `POST` (read until the answer or EOF).
async fn post(url: &str, token: &str, session: Option<&str>, body: &str) -> (u16, String) {
    let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
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
    let mut text = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut chunk = [0; 4096];
        loop {
            let n = stream.read(&mut chunk).await.unwrap_or(0);
            text.extend_from_slice(&chunk[..n]);
            let so_far = String::from_utf8_lossy(&text);
            if n == 0 || so_far.contains("\"result\"") || so_far.contains("\"error\"") {
                break;
            }
        }
    })
    .await;
    let text = String::from_utf8_lossy(&text).into_owned();
    assert!(read.is_ok(), "no answer: {text}");
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    (status, text)
}

/// A 2025-11-25 session (initialize, then initialized); its id.
async fn open_session(url: &str, token: &str) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "idle-test", "version": "0"}}});
    let (status, head) = post(url, token, None, &initialize.to_string()).await;
    assert_eq!(status, 200, "{head}");
    let id = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id in {head}"));
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, head) = post(url, token, Some(&id), initialized).await;
    assert_eq!(status, 202, "{head}");
    id
}

#[tokio::test]
async fn idle_sessions_are_kept_unless_an_idle_time_is_set() {
    // 0.01 minutes: 600 ms.
    let short = Session::start_with("{ mcp = { session_idle_minutes = 0.01 } }").await;
    let default = Session::start().await;
    let (short_url, short_token) = endpoint(&short).await;
    let (url, token) = endpoint(&default).await;
    let short_id = open_session(&short_url, &short_token).await;
    let id = open_session(&url, &token).await;
    // Idling is the point here: three times the short idle time.
    tokio::time::sleep(Duration::from_millis(1800)).await;
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, head) = post(&url, &token, Some(&id), list).await;
    assert_eq!(status, 200, "the default keeps an idle session: {head}");
    assert!(head.contains("get_file_text_by_path"), "{head}");
    let (status, head) = post(&short_url, &short_token, Some(&short_id), list).await;
    assert_eq!(status, 404, "closed after the idle time set: {head}");
    let health = health_report(&short).await;
    assert!(
        health.contains("idle sessions close after 0.01 minutes"),
        "{health}"
    );
}
