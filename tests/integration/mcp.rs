//! MCP over the socket: initialize, tools/list, errors that keep the connection.

use serde_json::{Value, json};

use crate::common::Session;

#[tokio::test]
async fn initialize_and_tools_list_follow_the_contract() {
    let session = Session::start().await;
    let (port, lock) = session.lockfile().await;
    let mut agent = crate::common::Agent::connect(
        port,
        "x-pi-ide-authorization",
        lock["authToken"].as_str().unwrap(),
        None,
    )
    .await
    .unwrap();
    let reply = agent.initialize("pi-ide").await;
    assert_eq!(reply["result"]["protocolVersion"], "2024-11-05");
    assert_eq!(reply["result"]["serverInfo"]["name"], "pi-ide.nvim");
    assert!(reply["result"]["serverInfo"]["version"].is_string());
    agent
        .send_raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    let tools = agent.request("tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for wanted in [
        "openDiff",
        "close_tab",
        "closeAllDiffTabs",
        "getDiagnostics",
    ] {
        assert!(names.contains(&wanted), "{names:?}");
    }
    for tool in tools["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["type"], "object");
        assert!(tool["inputSchema"]["properties"].is_object(), "{tool}");
    }
    session.wait_clients(1).await;
    let status = session.lua("return require('pi-ide').status()").await;
    assert_eq!(status["clients"][0]["kind"], "pi");
    assert_eq!(status["clients"][0]["name"], "pi-ide");
}

#[tokio::test]
async fn bad_messages_get_errors_and_the_connection_stays() {
    let session = Session::start().await;
    let mut agent = session.connect().await;
    let cases: &[(&str, Value, i64)] = &[
        ("not json", Value::Null, -32700),
        ("[1]", Value::Null, -32600),
        (
            r#"{"jsonrpc":"2.0","id":"abc-1","method":"bogus/method"}"#,
            json!("abc-1"),
            -32601,
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#,
            json!(7),
            -32601,
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"close_tab","arguments":{"tab_name":3}}}"#,
            json!(8),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"close_tab","arguments":{}}}"#,
            json!(9),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{}}"#,
            json!(10),
            -32602,
        ),
    ];
    for (text, id, code) in cases {
        agent.send_raw(text).await;
        let reply = agent.read().await.expect("connection kept");
        assert_eq!(
            (&reply["id"], reply["error"]["code"].as_i64()),
            (id, Some(*code)),
            "{text}: {reply}"
        );
    }
    let reply = agent.request("tools/list", json!({})).await;
    assert!(reply["result"]["tools"].is_array());
}

#[tokio::test]
async fn several_clients_are_served_at_once() {
    let session = Session::start().await;
    let mut first = session.connect().await;
    let mut second = session.connect_claude().await;
    session.wait_clients(2).await;
    let a = first
        .call_tool("close_tab", json!({"tab_name": "none"}))
        .await;
    let b = second.call_tool("closeAllDiffTabs", json!({})).await;
    assert_eq!(crate::common::texts(&a), ["TAB_CLOSED"]);
    assert_eq!(crate::common::texts(&b), ["CLOSED_0_DIFF_TABS"]);
    drop(first);
    session.wait_clients(1).await;
    assert!(second.request("tools/list", json!({})).await["result"].is_object());
}
