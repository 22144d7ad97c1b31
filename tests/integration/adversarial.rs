//! Bad input from sockets: the server answers or closes that one client and
//! keeps serving everyone else; nothing crashes, nothing is written.

use std::time::Instant;

use futures_util::SinkExt;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};

use crate::common::{Agent, DEADLINE, Session, eventually, texts};

/// Reads until the server closes the TCP connection; returns the seconds it took.
async fn seconds_until_closed(stream: &mut TcpStream) -> f64 {
    let started = Instant::now();
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout(DEADLINE, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return started.elapsed().as_secs_f64(),
            Ok(Ok(_)) => {}
            Err(_) => panic!("the server kept an idle connection open"),
        }
    }
}

async fn still_serves(agent: &mut Agent) {
    let reply = agent.request("tools/list", json!({})).await;
    assert!(reply["result"]["tools"].is_array(), "{reply}");
}

#[tokio::test]
async fn silent_and_stalled_handshakes_are_closed_while_others_are_served() {
    let session = Session::start().await;
    let (port, _) = session.lockfile().await;
    let mut silent = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut stalled = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stalled
        .write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n")
        .await
        .unwrap();
    let mut agent = session.connect().await;
    still_serves(&mut agent).await;
    let (a, b) = tokio::join!(
        seconds_until_closed(&mut silent),
        seconds_until_closed(&mut stalled)
    );
    assert!(
        a > 1.0 && b > 1.0,
        "closed by the handshake timeout, not at once: {a} {b}"
    );
    still_serves(&mut agent).await;
    let (_, lock) = session.lockfile().await;
    let log = session.host_log().await;
    assert!(
        !log.contains(lock["authToken"].as_str().unwrap()),
        "the token never reaches the log"
    );
}

#[tokio::test]
async fn odd_frames_affect_only_their_own_connection() {
    let session = Session::start().await;
    let mut bystander = session.connect().await;

    // Binary frames carry JSON too.
    let mut agent = session.connect().await;
    agent
        .ws
        .send(Message::binary(
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec(),
        ))
        .await
        .unwrap();
    assert_eq!(agent.read().await.unwrap()["id"], 1);

    // A message in fragments is put back together.
    let text = br#"{"jsonrpc":"2.0","id":"frag","method":"tools/list"}"#;
    agent
        .ws
        .send(Message::Frame(Frame::message(
            text[..10].to_vec(),
            OpCode::Data(Data::Text),
            false,
        )))
        .await
        .unwrap();
    agent
        .ws
        .send(Message::Frame(Frame::message(
            text[10..].to_vec(),
            OpCode::Data(Data::Continue),
            true,
        )))
        .await
        .unwrap();
    assert_eq!(agent.read().await.unwrap()["id"], "frag");

    // A flood of pings is answered and the connection keeps working.
    for _ in 0..5_000 {
        agent
            .ws
            .feed(Message::Ping(b"x".to_vec().into()))
            .await
            .unwrap();
    }
    agent.ws.flush().await.unwrap();
    still_serves(&mut agent).await;

    // Invalid UTF-8 in a text frame closes that connection only.
    let mut broken = session.connect().await;
    broken
        .ws
        .send(Message::Frame(Frame::message(
            vec![b'{', 0xff, 0xfe, b'}'],
            OpCode::Data(Data::Text),
            true,
        )))
        .await
        .unwrap();
    assert!(broken.read().await.is_none(), "the connection is closed");

    // A message over the limit closes that connection only.
    let mut greedy = session.connect().await;
    let huge = vec![b' '; pi_ide::ws::MAX_MESSAGE_BYTES + 1];
    let _ = greedy.ws.send(Message::binary(huge)).await;
    assert!(greedy.read().await.is_none(), "the connection is closed");

    still_serves(&mut bystander).await;
    still_serves(&mut agent).await;
}

#[tokio::test]
async fn json_rpc_edge_cases_get_the_right_answer_and_keep_the_connection() {
    let session = Session::start().await;
    let mut agent = session.connect().await;
    let cases: &[(&str, Value, Option<i64>)] = &[
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            Value::Null,
            None,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"a-string","method":"ping"}"#,
            json!("a-string"),
            None,
        ),
        (
            r#"{"jsonrpc":"2.0","id":-5,"method":"ping"}"#,
            json!(-5),
            None,
        ),
        (
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
            json!(18446744073709551615u64),
            None,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            json!(1.5),
            None,
        ),
        (
            r#"{"id":2,"method":"tools/call","params":{"name":"getDiagnostics","arguments":{"extra":1}},"more":true}"#,
            json!(2),
            None,
        ),
        (
            r#"{"id":3,"method":"tools/call","params":"not an object"}"#,
            json!(3),
            Some(-32602),
        ),
        (
            r#"{"id":4,"method":"tools/call","params":{"name":"close_tab","arguments":[]}}"#,
            json!(4),
            Some(-32602),
        ),
        (
            r#"{"id":5,"method":"tools/list","params":[1,2,3]}"#,
            json!(5),
            None,
        ),
    ];
    for (text, id, code) in cases {
        agent.send_raw(text).await;
        let reply = agent.read().await.expect("connection kept");
        assert_eq!(&reply["id"], id, "{text}: {reply}");
        assert_eq!(reply["error"]["code"].as_i64(), *code, "{text}: {reply}");
    }
    // A notification (no id) gets no answer: the next message is the ping's.
    agent
        .send_raw(r#"{"jsonrpc":"2.0","method":"tools/list"}"#)
        .await;
    agent
        .send_raw(r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#)
        .await;
    assert_eq!(agent.read().await.unwrap()["id"], "after");
    // Deep nesting is a parse error, not a crash.
    let deep = format!(
        "{{\"id\":1,\"method\":\"ping\",\"params\":{}{}}}",
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    agent.send_raw(&deep).await;
    assert_eq!(agent.read().await.unwrap()["error"]["code"], -32700);
    still_serves(&mut agent).await;
}

#[tokio::test]
async fn unusual_open_diff_targets_show_exactly_what_was_proposed() {
    let session = Session::start().await;
    let mut agent = session.connect().await;
    let long_name = format!("{}.txt", "ä".repeat(100));
    let cases: Vec<(std::path::PathBuf, &str, &str)> = vec![
        (
            session.write_file("empty.txt", ""),
            "now something\n",
            "empty",
        ),
        (
            session.write_file("ünïcødé 文件.txt", "old\n"),
            "neu\n",
            "unicode",
        ),
        (
            session.write_file(&long_name, "old\n"),
            "new\n",
            "long-name",
        ),
        (session.write_file("no-eol.txt", "a\nb"), "a\nc", "no-eol"),
    ];
    for (path, proposal, tab) in &cases {
        let before = std::fs::read(path).unwrap();
        let id = agent.open_diff(path, proposal, tab).await;
        session.wait_diffs(1).await;
        let lines = session.lua("return vim.api.nvim_buf_get_lines(require('pi-ide.diff').list()[1].proposed_buf, 0, -1, false)").await;
        let expected: Vec<&str> = proposal
            .strip_suffix('\n')
            .unwrap_or(proposal)
            .split('\n')
            .collect();
        assert_eq!(lines, json!(expected), "{tab}");
        session.exec("require('pi-ide.diff').accept()").await;
        assert_eq!(
            texts(&agent.response(&id).await),
            ["FILE_SAVED", *proposal],
            "{tab}"
        );
        assert_eq!(std::fs::read(path).unwrap(), before, "{tab}: never written");
    }

    // A different target path is named in the diff and answered normally.
    let old = session.write_file("old-name.txt", "x\n");
    let new = session.work_dir.join("new-name.txt");
    let arguments = json!({"old_file_path": old, "new_file_path": new, "new_file_contents": "y\n", "tab_name": "rename"});
    let id = agent
        .send(
            "tools/call",
            json!({"name": "openDiff", "arguments": arguments}),
        )
        .await;
    session.wait_diffs(1).await;
    assert!(
        session
            .lua("return vim.wo.winbar")
            .await
            .as_str()
            .unwrap()
            .contains("replaces old-name.txt")
    );
    session.exec("require('pi-ide.diff').accept()").await;
    assert_eq!(texts(&agent.response(&id).await), ["FILE_SAVED", "y\n"]);
    assert!(!new.exists());
}

#[tokio::test]
async fn a_four_megabyte_diff_round_trips() {
    let session = Session::start().await;
    let original: String = (0..100_000)
        .map(|i| format!("line {i:08} of the original file\n"))
        .collect();
    let proposal = original.replace("line 00050000 of", "CHANGED 00050000 of");
    assert!(proposal.len() > 3_500_000);
    let path = session.write_file("big.txt", &original);
    let mut agent = session.connect().await;
    let id = agent.open_diff(&path, &proposal, "big").await;
    session.wait_diffs(1).await;
    session.exec("require('pi-ide.diff').accept()").await;
    let reply = agent.response(&id).await;
    assert!(
        texts(&reply)[1] == proposal,
        "the whole proposal comes back"
    );
}

#[tokio::test]
async fn a_close_frame_mid_request_closes_its_diff() {
    let session = Session::start().await;
    let path = session.write_file("mid.txt", "a\n");
    let mut agent = session.connect().await;
    agent.open_diff(&path, "b\n", "mid").await;
    session.wait_diffs(1).await;
    agent.ws.close(None).await.unwrap();
    session.wait_diffs(0).await;
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\n");
}

#[tokio::test]
async fn an_unusable_lock_directory_is_reported_with_its_path() {
    let session = Session::spawn().await;
    let blocker = session.write_file("not-a-dir", "");
    let dir = blocker.join("locks");
    session
        .exec(&format!(
            "require('pi-ide').setup({{ bin = '{}', lock_dir = '{}' }})",
            env!("CARGO_BIN_EXE_pi-ide"),
            dir.display()
        ))
        .await;
    let told = eventually("the failure to be reported", || async {
        let told = session.notifications().await;
        told.iter()
            .any(|m| m.contains("cannot write a lockfile"))
            .then_some(told)
    })
    .await;
    assert!(
        told.iter().any(|m| m.contains(dir.to_str().unwrap())),
        "{told:?}"
    );
    session.wait_stopped().await;
}

#[tokio::test]
async fn a_large_message_leaves_no_memory_behind_while_its_agent_stays() {
    let session = Session::start().await;
    let host = session.running_host(0).await;
    let mut agent = session.connect().await;
    still_serves(&mut agent).await;
    let idle = crate::load_driver::rss_kib(host);
    // As large as the largest diffs agents send.
    let filler = "x".repeat(4 << 20);
    let reply = agent.request("ping", json!({ "filler": filler })).await;
    assert_eq!(reply["result"], json!({}), "{reply}");
    drop(filler);
    // Within 6 MiB of idle again, the connection still open: tungstenite
    // keeps a read buffer the size of the connection's largest frame.
    eventually("the host to give the message's memory back", || async {
        (crate::load_driver::rss_kib(host) <= idle + 6 * 1024).then_some(())
    })
    .await;
    still_serves(&mut agent).await;
}

/// A raw upgraded connection, to send frames no WebSocket library writes.
async fn raw_upgrade(session: &Session) -> TcpStream {
    let (port, lock) = session.lockfile().await;
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let request = format!(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         x-pi-ide-authorization: {}\r\n\r\n",
        lock["authToken"].as_str().unwrap()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).await.unwrap();
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    stream
}

/// One client frame, masked as RFC 6455 requires (payloads under 126 bytes).
fn client_frame(first: u8, payload: &[u8]) -> Vec<u8> {
    let mask = [0x37, 0xfa, 0x21, 0x3d];
    let mut frame = vec![first, 0x80 | u8::try_from(payload.len()).unwrap()];
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    frame
}

/// The code of the Close frame the server answers with (frames before it,
/// such as pongs, are skipped); `None` if it closed without one.
async fn close_code(stream: &mut TcpStream) -> Option<u16> {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        // Server frames here are short and unmasked: opcode, length, payload.
        while bytes.len() >= 2 && bytes.len() >= 2 + usize::from(bytes[1] & 0x7f) {
            let len = usize::from(bytes[1] & 0x7f);
            if bytes[0] & 0x0f == 0x8 {
                return (len >= 2).then(|| u16::from_be_bytes([bytes[2], bytes[3]]));
            }
            bytes.drain(..2 + len);
        }
        match tokio::time::timeout(DEADLINE, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return None,
            Ok(Ok(read)) => bytes.extend_from_slice(&buf[..read]),
            Err(_) => panic!("the server neither closed nor answered"),
        }
    }
}

#[tokio::test]
async fn each_broken_frame_gets_the_close_code_rfc_6455_asks_for() {
    let session = Session::start().await;
    let mut bystander = session.connect().await;
    let close = |payload: &[u8]| client_frame(0x88, payload);
    let with_code = |code: u16| close(&code.to_be_bytes());
    let mut cases: Vec<(&str, Vec<u8>, u16)> = vec![
        ("a close with code 1000", with_code(1000), 1000),
        ("a close with code 3000", with_code(3000), 3000),
        ("a close with a 1-byte payload", close(&[0x03]), 1002),
        (
            "a close whose reason is not UTF-8",
            close(&[0x03, 0xe8, 0xff, 0xfe]),
            1007,
        ),
        ("reserved bits set", client_frame(0xc1, b"{}"), 1002),
        ("an unknown opcode", client_frame(0x83, b""), 1002),
        ("a fragmented ping", client_frame(0x09, b"x"), 1002),
        (
            "a continuation with nothing to continue",
            client_frame(0x80, b"x"),
            1002,
        ),
        (
            "text that is not UTF-8",
            client_frame(0x81, &[b'{', 0xff, b'}']),
            1007,
        ),
    ];
    for code in [0, 999, 1004, 1005, 1006, 1016, 1100, 2000, 2999] {
        cases.push(("a close with an invalid code", with_code(code), 1002));
    }
    let mut unmasked = client_frame(0x81, b"{}");
    unmasked[1] &= 0x7f;
    unmasked.drain(2..6);
    cases.push(("an unmasked frame", unmasked, 1002));
    let mut long_ping = vec![0x89, 0x80 | 126, 0, 126];
    long_ping.extend_from_slice(&[0; 4]);
    long_ping.extend_from_slice(&[0; 126]);
    cases.push(("a ping over 125 bytes", long_ping, 1002));
    for (what, frame, expected) in cases {
        let mut stream = raw_upgrade(&session).await;
        stream.write_all(&frame).await.unwrap();
        assert_eq!(close_code(&mut stream).await, Some(expected), "{what}");
    }
    still_serves(&mut bystander).await;
}
