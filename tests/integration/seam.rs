//! Both halves of the Lua ⇄ host seam list the same calls and events, agree
//! on the version, and every call the host makes reaches a Lua function.

use serde_json::{Value, json};

use crate::common::Session;
use pi_ide::nvim::seam::{EditorEvent, LuaCall, SEAM_VERSION};

fn sorted(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|n| n.as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

fn sorted_names(names: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    names.sort();
    names
}

#[tokio::test]
async fn both_halves_list_the_same_calls_events_and_version() {
    let session = Session::spawn().await;
    let lua = session
        .lua(
            "local seam = require('pi-ide.seam')
             return { version = seam.VERSION, calls = vim.tbl_keys(seam.calls), events = seam.EVENTS }",
        )
        .await;
    assert_eq!(lua["version"], SEAM_VERSION, "seam versions differ");
    assert_eq!(sorted(&lua["calls"]), sorted_names(LuaCall::NAMES));
    assert_eq!(sorted(&lua["events"]), sorted_names(EditorEvent::NAMES));
}

/// Calls every seam function the way the host does, with valid payloads:
/// each must reach an existing Lua function and return without an error.
#[tokio::test]
async fn every_call_the_host_makes_reaches_a_lua_function() {
    let session = Session::spawn().await;
    // The review UI is its own module; a stub records what reaches it.
    session
        .exec(
            "_G.review_calls = {}
             package.loaded['pi-ide.review'] = setmetatable({}, { __index = function(_, name)
               return function(...) table.insert(_G.review_calls, { name, ... }); return true end
             end })",
        )
        .await;
    let path = session.write_file("seam.txt", "one\n");
    let path = path.to_str().unwrap();
    let lines = json!({"lines": ["one"], "eol": true, "crlf": false});
    let calls = [
        json!(["started", {"version": "0", "seam": SEAM_VERSION, "port": 1, "lockfile": "/nowhere/1.lock", "pid": 1, "languages": ["rust"]}]),
        json!(["client", "connected", {"id": 1, "kind": "pi", "name": null}]),
        json!(["client", "initialized", {"id": 1, "kind": "pi", "name": "pi"}]),
        json!(["client", "updated", {"id": 1, "kind": "pi", "name": "pi", "pid": 4242}]),
        json!(["open_diff", {"id": 1, "tab_name": "t", "path": path, "original_path": path, "client": "pi",
            "original_exists": true, "original": lines, "proposed": lines, "hunks": null}]),
        json!(["diff_text", 1]),
        json!(["close_diff", 1, "the agent disconnected"]),
        json!(["open_diff", {"id": 2, "tab_name": "large", "path": path, "original_path": path, "client": "pi",
            "original_exists": true, "original": {"lines": [], "eol": true, "crlf": false},
            "proposed": {"lines": [], "eol": true, "crlf": false}, "hunks": [], "words": [], "parts": true}]),
        json!([
            "diff_part",
            2,
            "hunks",
            0,
            [[0, 1, 0, 1]],
            [0, 0, 0, 0, 3, 0, 1, 0, 0, 3]
        ]),
        json!(["diff_part", 2, "done"]),
        json!(["close_diff", 2, null]),
        json!(["positions"]),
        json!(["suggestions", 1, ["x"], null]),
        json!(["models", {"models": [], "current": null}, null]),
        json!(["diff_hunks", 1, 1, [[0, 1, 0, 1]], [0, 1, 0, 0, 1]]),
        json!(["workspace"]),
        json!(["project_roots"]),
        json!(["current_positions"]),
        json!(["open_file", {"path": path, "start_text": "one", "select_to_end_of_line": true, "frontmost": true}]),
        json!(["open_file", {"path": path, "select_to_end_of_line": false, "frontmost": false}]),
        json!(["open_editors"]),
        json!(["document_state", path]),
        json!(["save_document", path, path]),
        json!(["buffer_text", path]),
        json!(["buffer_text", "/nowhere/not-loaded.txt"]),
        json!(["lsp_request", {"id": 1, "kind": "hover", "path": path, "line": 0, "character": 1, "timeout_ms": 200}]),
        json!(["modified_buffers"]),
        json!(["buffer_lines", [{"buf": 1, "rows": [0, 3]}, {"buf": 9999, "rows": [0]}]]),
        json!(["selected_rows", 1, 0, 3, 100]),
        json!(["selected_rows", 9999, 0, 3, 100]),
        json!(["lsp_edit", {"id": 2, "kind": "format", "path": path, "timeout_ms": 200}]),
        json!(["lsp_edit", {"id": 3, "kind": "apply_action", "path": "", "action_id": "9", "timeout_ms": 200}]),
        json!(["apply_edit", {"path": path, "real": path, "lines": ["two"], "eol": true, "crlf": false,
            "expected": {"lines": ["one"], "eol": true, "crlf": false, "exists": true}, "write": false}]),
        json!(["edit_notice", {"path": path, "why": "changed while you reviewed the edit", "kept": lines}]),
        json!(["edit_notice", {"path": path, "why": "changed: it is shown again"}]),
        json!(["socket", "/w/.pi/ide/nvim.sock", null]),
        json!([
            "socket",
            null,
            "cannot create pi's context socket in /w/.pi/ide: denied"
        ]),
        json!(["review_open", {"id": 1, "root": "/w", "files": ["seam.txt"]}]),
        json!([
            "review_close",
            1,
            "the agent that asked for it disconnected"
        ]),
        json!(["review_refused", "review refused: /etc/passwd is absolute"]),
        json!(["refused", "the agent's diff t was refused: outside"]),
        json!(["sessions", "MCP", 3]),
        json!([
            "files_changed",
            [path, "/nowhere/not-loaded.txt"],
            ["/nowhere/gone.txt"]
        ]),
        json!(["user_tool", {"id": 7, "name": "not_registered", "arguments": {}}]),
        json!(["edit_decided", 8, {"ok": true, "text": "applied"}]),
        json!(["run_configurations", 9]),
        json!(["changes_listed", 99, {"since": 0, "root": "/w", "files": [], "more": false}]),
        json!(["changes_done", 99, {"ok": true, "since": 0, "files": []}]),
        json!(["run_command", {"id": 10, "name": "no such configuration", "cwd": "/w", "timeout_ms": 100, "max_lines": 5}]),
        json!(["client", "disconnected", {"id": 1, "kind": "pi", "name": "pi"}]),
        json!(["chat_update", 77, [{"kind": "text", "text": "no such chat"}]]),
        json!(["chat_permission", {"id": 78, "chat": 77, "tool_call": {"title": "x"}, "options": []}]),
        json!(["chat_terminal", {"id": 79, "chat": 77, "argv": ["true"], "env": {}, "cwd": "/", "limit": 100}]),
        json!(["chat_terminal_output", 79]),
        json!(["chat_terminal_kill", 79, true]),
    ];
    let mut called = vec![];
    for call in calls {
        let args = call.as_array().unwrap().clone();
        let name = args[0].as_str().unwrap().to_owned();
        let outcome = session
            .lua_with(
                "local ok, err = pcall(require('pi-ide.seam').call, ...)
                 return { ok = ok, err = not ok and tostring(err) or nil }",
                args,
            )
            .await;
        assert_eq!(outcome["ok"], true, "{name}: {}", outcome["err"]);
        called.push(name);
    }
    called.sort();
    called.dedup();
    assert_eq!(called, sorted_names(LuaCall::NAMES), "every call was tried");
    assert_eq!(
        session.lua("return _G.review_calls").await,
        json!([
            ["open", {"id": 1, "root": "/w", "files": ["seam.txt"]}],
            ["close", 1, "the agent that asked for it disconnected"],
            ["refused", "review refused: /etc/passwd is absolute"],
        ]),
        "the review calls reach pi-ide.review with their arguments"
    );
    let unknown = session
        .lua("return (pcall(require('pi-ide.seam').call, 'no_such_call'))")
        .await;
    assert_eq!(unknown, false, "an unknown call is an error");
}
