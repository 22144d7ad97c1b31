//! getDiagnostics from vim.diagnostic, shaped per client.

use serde_json::{Value, json};

use crate::common::{Session, texts};

async fn with_diagnostics(session: &Session) -> String {
    let path = session.write_file("diag.rs", "fn main() {\n    let x = 1;\n}\n");
    session
        .exec(&format!(
            "vim.cmd.edit('{}')
             local ns = vim.api.nvim_create_namespace('test')
             vim.diagnostic.set(ns, 0, {{
               {{ lnum = 1, col = 8, end_lnum = 1, end_col = 9, severity = vim.diagnostic.severity.ERROR, message = 'E2E_DIAG', source = 'rustc' }},
               {{ lnum = 0, col = 0, severity = vim.diagnostic.severity.HINT, message = 'a hint' }},
             }})",
            path.display()
        ))
        .await;
    format!("file://{}", path.display())
}

fn parse(reply: &Value) -> Value {
    serde_json::from_str(&texts(reply)[0]).unwrap()
}

#[tokio::test]
async fn pi_gets_diagnostics_keyed_by_uri() {
    let session = Session::start().await;
    let uri = with_diagnostics(&session).await;
    let mut agent = session.connect().await;
    let all = parse(&agent.call_tool("getDiagnostics", json!({})).await);
    let list = all[&uri].as_array().unwrap_or_else(|| panic!("{all}"));
    let error = list.iter().find(|d| d["message"] == "E2E_DIAG").unwrap();
    assert_eq!(error["severity"], "Error");
    assert_eq!(error["source"], "rustc");
    assert_eq!(
        error["range"],
        json!({"start": {"line": 1, "character": 8}, "end": {"line": 1, "character": 9}})
    );
    assert!(list.iter().any(|d| d["severity"] == "Hint"));
    let one = parse(&agent.call_tool("getDiagnostics", json!({"uri": uri})).await);
    assert_eq!(one.as_object().unwrap().len(), 1);
    let unknown = parse(
        &agent
            .call_tool("getDiagnostics", json!({"uri": "file:///nowhere/x.rs"}))
            .await,
    );
    assert_eq!(unknown, json!({"file:///nowhere/x.rs": []}));
}

#[tokio::test]
async fn claude_gets_an_array() {
    let session = Session::start().await;
    let uri = with_diagnostics(&session).await;
    let mut agent = session.connect_claude().await;
    let all = parse(&agent.call_tool("getDiagnostics", json!({})).await);
    assert_eq!(all[0]["uri"], uri);
    assert_eq!(all[0]["diagnostics"].as_array().unwrap().len(), 2);
}
