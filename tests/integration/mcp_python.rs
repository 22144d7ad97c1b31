//! The Streamable-HTTP MCP endpoint driven by the official Python SDK
//! (`tests/mcp/client.py`, `mcp` pinned in tests/python/requirements.txt)
//! against real headless Neovim: the stateless 2026-07-28 protocol and the
//! 2025-11-25 handshake, the buffer's unsaved text, 1-based positions,
//! `projectPath` (symlinks, trailing slashes, language servers' workspace
//! folders, a mismatch naming the roots), and the refusals.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::Session;
use crate::common::python_tools::python_tools;
use crate::common::repo_root;
use crate::mcp_http::endpoint;

/// Runs the Python SDK client with `options` (`headers`, `mode`, `calls`);
/// its JSON report.
pub fn python_client(url: &str, options: Value) -> Value {
    let python = python_tools().join("python");
    let script = repo_root().join("tests/mcp/client.py");
    let out = Command::new(&python)
        .arg(&script)
        .args([url, &options.to_string()])
        .output()
        .expect("run the Python MCP client");
    assert!(
        out.status.success(),
        "client.py failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn bearer(token: &str) -> Value {
    json!({"Authorization": format!("Bearer {token}")})
}

fn structured(call: &Value) -> &Value {
    assert_ne!(call["isError"], json!(true), "{call}");
    &call["structuredContent"]
}

/// The text of an `isError` result.
fn failure(call: &Value) -> String {
    assert_eq!(call["isError"], true, "{call}");
    call["content"][0]["text"].as_str().unwrap().to_owned()
}

fn path_str(path: &Path) -> String {
    path.to_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_python_sdk_speaks_the_stateless_protocol_and_reads_unsaved_text() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    let root = session.work_dir.canonicalize().unwrap();
    session.write_file("a.py", "x = 1\ny = 2\n");
    session
        .exec(
            "vim.cmd.edit('a.py')
             vim.api.nvim_buf_set_lines(0, 1, 2, false, { 'y = undefined_name' })
             local ns = vim.api.nvim_create_namespace('mcp_python_test')
             vim.diagnostic.set(ns, 0, {
               { lnum = 1, col = 4, end_lnum = 1, end_col = 18,
                 severity = vim.diagnostic.severity.ERROR, message = 'PY_DIAG', source = 'test' },
             })
             vim.cmd.new()",
        )
        .await;
    let elsewhere = format!("{}-elsewhere", root.display());
    let report = python_client(
        &url,
        json!({"headers": bearer(&token), "calls": [
            {"name": "get_file_text_by_path", "arguments": {"pathInProject": "a.py"}},
            {"name": "get_file_problems", "arguments": {"filePath": format!("{}/a.py", root.display())}},
            {"name": "open_file_in_editor", "arguments": {"filePath": "a.py", "line": 2, "column": 5}},
            {"name": "get_all_open_file_paths", "arguments": {"projectPath": elsewhere}},
            {"name": "no_such_tool", "arguments": {}},
        ]}),
    );

    assert_eq!(report["protocolVersion"], "2026-07-28", "{report}");
    assert_eq!(report["sessionId"], Value::Null, "stateless: no session");
    let tools = report["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for wanted in [
        "get_file_text_by_path",
        "get_file_problems",
        "open_file_in_editor",
        "get_all_open_file_paths",
    ] {
        assert!(names.contains(&wanted), "{wanted} in {names:?}");
    }
    assert!(
        tools
            .iter()
            .all(|t| t["inputSchema"]["properties"]["projectPath"].is_object()),
        "every tool takes projectPath"
    );

    let calls = report["calls"].as_array().unwrap();
    let text = structured(&calls[0]);
    assert_eq!(text["text"], "x = 1\ny = undefined_name", "unsaved: {text}");
    assert_eq!(text["fromBuffer"], true);
    assert_eq!(calls[0]["resultType"], "complete");

    let problems = structured(&calls[1]);
    assert_eq!(problems["filePath"], "a.py", "an absolute path inside");
    assert_eq!(
        problems["errors"][0],
        json!({"severity": "ERROR", "description": "PY_DIAG", "source": "test",
               "line": 2, "column": 5, "endLine": 2, "endColumn": 19}),
        "1-based"
    );

    assert_eq!(structured(&calls[2])["filePath"], "a.py");
    let cursor = session.lua("return vim.api.nvim_win_get_cursor(0)").await;
    assert_eq!(cursor, json!([2, 4]), "line 2, column 5 (1-based)");

    let mismatch = failure(&calls[3]);
    assert!(
        mismatch.contains("not this Neovim's project") && mismatch.contains(&path_str(&root)),
        "{mismatch}"
    );
    assert!(
        calls[4]["error"]
            .as_str()
            .is_some_and(|e| e.contains("no_such_tool")),
        "an unknown tool is a protocol error: {}",
        calls[4]
    );
}

#[tokio::test]
async fn the_python_sdk_handshake_gets_a_session() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    session.write_file("b.txt", "one\ntwo\n");
    let report = python_client(
        &url,
        json!({"headers": bearer(&token), "mode": "legacy", "calls": [
            {"name": "get_file_text_by_path", "arguments": {"pathInProject": "b.txt"}},
        ]}),
    );
    assert_eq!(report["protocolVersion"], "2025-11-25", "{report}");
    assert!(report["sessionId"].is_string(), "{report}");
    assert_eq!(structured(&report["calls"][0])["text"], "one\ntwo");
    let statuses = report["statuses"].as_array().unwrap();
    assert_eq!(
        statuses.last(),
        Some(&json!(204)),
        "closing the session is answered 204, which the SDK takes without a warning: {statuses:?}"
    );
}

#[tokio::test]
async fn the_python_sdk_is_refused_without_the_token_or_from_elsewhere() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    let refused = |headers: Value, status: u64, what: &str| {
        let report = python_client(&url, json!({"headers": headers}));
        assert!(report["connectError"].is_string(), "{what}: {report}");
        let statuses = report["statuses"].as_array().unwrap();
        assert!(
            !statuses.is_empty() && statuses.iter().all(|s| *s == json!(status)),
            "{what}: {report}"
        );
    };
    refused(json!({}), 401, "no token");
    refused(bearer(&format!("{token}0")), 401, "a wrong token");
    refused(
        json!({"Authorization": format!("Basic {token}")}),
        401,
        "another scheme",
    );
    let mut foreign_host = bearer(&token);
    foreign_host["Host"] = json!("evil.example");
    refused(foreign_host, 403, "a foreign Host (DNS rebinding)");
    let mut foreign_origin = bearer(&token);
    foreign_origin["Origin"] = json!("https://evil.example");
    refused(foreign_origin, 403, "a browser page's Origin");

    let lower = python_client(
        &url,
        json!({"headers": {"authorization": format!("bearer {token}"), "Origin": "http://localhost:5173"}}),
    );
    assert_eq!(
        lower["protocolVersion"], "2026-07-28",
        "lowercase bearer and a loopback Origin: {lower}"
    );
}

/// A language server in Neovim's own process (`cmd` as a Lua function):
/// enough for a real LSP client with a workspace folder.
fn start_server_in(folder: &Path) -> String {
    format!(
        "vim.lsp.start({{
           name = 'roots-test',
           cmd = function()
             return {{
               request = function(method, _, callback)
                 if method == 'initialize' then callback(nil, {{ capabilities = {{}} }}) end
                 return true, 1
               end,
               notify = function() return true end,
               is_closing = function() return false end,
               terminate = function() end,
             }}
           end,
           root_dir = {folder:?},
           workspace_folders = {{ {{ uri = vim.uri_from_fname({folder:?}), name = 'lib' }} }},
         }})",
        folder = path_str(folder),
    )
}

#[tokio::test]
async fn project_path_names_the_cwd_or_a_workspace_folder() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    let root = session.work_dir.canonicalize().unwrap();
    let lib = session.state_dir.canonicalize().unwrap().join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(lib.join("x.txt"), "in lib\n").unwrap();
    session.write_file("x.txt", "in the cwd\n");
    let linked = session.state_dir.join("cwd-link");
    std::os::unix::fs::symlink(&root, &linked).unwrap();
    let text = |project: Value| json!({"name": "get_file_text_by_path", "arguments": {"pathInProject": "x.txt", "projectPath": project}});
    // The host keeps the roots between calls; a language server attaching
    // (and, below, a :cd) must make it read them again.
    let before = python_client(
        &url,
        json!({"headers": bearer(&token), "calls": [text(json!(path_str(&lib)))]}),
    );
    assert!(failure(&before["calls"][0]).contains("not this Neovim's project"));
    session
        .exec(&format!(
            "vim.cmd.edit({:?}) {}",
            path_str(&lib.join("x.txt")),
            start_server_in(&lib)
        ))
        .await;

    let report = python_client(
        &url,
        json!({"headers": bearer(&token), "calls": [
            text(json!(format!("{}/", linked.display()))),
            text(json!(path_str(&lib))),
            text(json!(format!("{}/", lib.display()))),
            {"name": "get_file_text_by_path", "arguments": {"pathInProject": format!("{}/x.txt", lib.display())}},
            text(json!(path_str(&lib.join("..")))),
            {"name": "get_file_text_by_path", "arguments": {"pathInProject": "../x.txt", "projectPath": path_str(&root.join(".."))}},
        ]}),
    );
    let calls = report["calls"].as_array().unwrap();
    assert_eq!(
        structured(&calls[0])["text"],
        "in the cwd",
        "a symlink to the cwd with a trailing slash"
    );
    assert_eq!(
        structured(&calls[1])["text"],
        "in lib",
        "relative to the workspace folder named"
    );
    assert_eq!(structured(&calls[2])["text"], "in lib");
    assert_eq!(
        structured(&calls[3])["text"],
        "in lib",
        "an absolute path inside another root"
    );
    for call in &calls[4..] {
        let message = failure(call);
        assert!(
            message.contains("not this Neovim's project")
                && message.contains(&path_str(&root))
                && message.contains(&path_str(&lib)),
            "names every root: {message}"
        );
    }

    std::fs::create_dir_all(root.join("sub")).unwrap();
    session.write_file("sub/x.txt", "in sub\n");
    session.exec("vim.cmd.cd('sub')").await;
    let after_cd = python_client(
        &url,
        json!({"headers": bearer(&token), "calls": [text(json!(path_str(&root.join("sub"))))]}),
    );
    assert_eq!(
        structured(&after_cd["calls"][0])["text"],
        "in sub",
        "the new cwd is a root"
    );
}
