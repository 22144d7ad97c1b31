//! The upgrade: only the right token in the right header gets a WebSocket.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Error;

use crate::common::{Agent, Session, upgrade_request};

fn status_of(result: Result<Agent, Error>) -> u16 {
    match result {
        Err(Error::Http(response)) => response.status().as_u16(),
        Err(other) => panic!("expected an HTTP refusal, got {other}"),
        Ok(_) => panic!("expected a refusal, got a WebSocket"),
    }
}

#[tokio::test]
async fn wrong_or_missing_tokens_get_401_before_the_upgrade() {
    let session = Session::start().await;
    let (port, lock) = session.lockfile().await;
    let token = lock["authToken"].as_str().unwrap();
    let cases = [
        ("x-pi-ide-authorization", "wrong".to_owned()),
        (
            "x-pi-ide-authorization",
            token[..token.len() - 1].to_owned(),
        ),
        ("x-pi-ide-authorization", format!("{token}x")),
        ("authorization", token.to_owned()),
        ("x-unrelated", "1".to_owned()),
    ];
    for (header, value) in cases {
        assert_eq!(
            status_of(Agent::connect(port, header, &value, None).await),
            401,
            "{header}: {value}"
        );
    }
    // A correct token from a web page is refused too.
    let request = upgrade_request(
        port,
        &[
            ("x-pi-ide-authorization", token),
            ("Origin", "https://evil.example"),
        ],
    );
    match tokio_tungstenite::connect_async(request).await {
        Err(Error::Http(response)) => assert_eq!(response.status(), 401),
        other => panic!("web origin accepted: {:?}", other.map(|_| ())),
    }
    // The server still serves the rightful client afterwards.
    let mut agent = session.connect().await;
    assert!(agent.request("tools/list", serde_json::json!({})).await["result"].is_object());
}

#[tokio::test]
async fn bare_connects_and_plain_http_do_not_disturb_the_server() {
    let session = Session::start().await;
    let (port, _) = session.lockfile().await;
    // pi probes the port with a connect that sends nothing.
    for _ in 0..3 {
        drop(TcpStream::connect(("127.0.0.1", port)).await.unwrap());
    }
    let mut plain = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    plain
        .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(crate::common::DEADLINE, plain.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(!answer.starts_with("HTTP/1.1 101"), "{answer}");
    let mut agent = session.connect().await;
    assert!(agent.request("tools/list", serde_json::json!({})).await["result"].is_object());
}

#[tokio::test]
async fn claude_gets_the_mcp_subprotocol_and_pi_needs_none() {
    let session = Session::start().await;
    let (port, lock) = session.lockfile().await;
    let token = lock["authToken"].as_str().unwrap();
    let request = upgrade_request(
        port,
        &[
            ("x-claude-code-ide-authorization", token),
            ("Sec-WebSocket-Protocol", "mcp"),
        ],
    );
    let (_, response) = tokio_tungstenite::connect_async(request).await.unwrap();
    assert_eq!(
        response.headers().get("sec-websocket-protocol").unwrap(),
        "mcp"
    );
    let request = upgrade_request(
        port,
        &[
            ("x-pi-ide-authorization", token),
            (
                "Sec-WebSocket-Extensions",
                "permessage-deflate; client_max_window_bits",
            ),
        ],
    );
    let (_, response) = tokio_tungstenite::connect_async(request).await.unwrap();
    assert!(response.headers().get("sec-websocket-protocol").is_none());
    assert!(
        response.headers().get("sec-websocket-extensions").is_none(),
        "deflate is not implemented, so not accepted"
    );
}
