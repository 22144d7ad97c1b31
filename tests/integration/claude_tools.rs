//! Claude Code's side of the wire: its exact connect sequence and the editor
//! tools the VS Code extension serves (openFile, getCurrentSelection, …),
//! each with its result shape for the normal and the failure case.

use serde_json::{Value, json};

use crate::common::{Agent, Session, eventually, texts};

/// The one text item of a tool result, parsed as JSON.
fn result_json(reply: &Value) -> Value {
    let texts = texts(reply);
    assert_eq!(texts.len(), 1, "{reply}");
    serde_json::from_str(&texts[0]).unwrap_or_else(|e| panic!("not JSON ({e}): {reply}"))
}

/// Checks what Claude rejects a whole tool list for.
fn assert_valid_schema(tool: &Value) {
    let schema = &tool["inputSchema"];
    assert_eq!(schema["type"], "object", "{tool}");
    let properties = schema["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("{tool}"));
    for required in schema["required"].as_array().into_iter().flatten() {
        assert!(
            properties.contains_key(required.as_str().unwrap()),
            "{tool}"
        );
    }
    for (name, property) in properties {
        assert!(property["type"].is_string(), "{name} of {tool}");
    }
    assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()));
}

#[tokio::test]
async fn claudes_connect_sequence_gets_the_right_answers() {
    let session = Session::start().await;
    let (port, lock) = session.lockfile().await;
    let mut agent = Agent::connect(
        port,
        "x-claude-code-ide-authorization",
        lock["authToken"].as_str().unwrap(),
        Some("mcp"),
    )
    .await
    .expect("connect with the mcp subprotocol");
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"roots": {"listChanged": true}, "elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}}},
        "clientInfo": {"name": "claude-code", "version": "2.1.332"},
    }});
    agent.send_raw(&initialize.to_string()).await;
    let reply = agent.response(&json!(0)).await;
    assert!(reply["result"]["protocolVersion"].is_string(), "{reply}");
    assert!(
        reply["result"]["capabilities"]["tools"].is_object(),
        "{reply}"
    );
    assert_eq!(reply["result"]["serverInfo"]["name"], "pi-ide.nvim");
    agent
        .send_raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    agent
        .send_raw(r#"{"jsonrpc":"2.0","method":"ide_connected","params":{"pid":4242}}"#)
        .await;
    eventually("the agent's pid in status()", || async {
        let status = session.lua("return require('pi-ide').status()").await;
        (status["clients"][0]["pid"] == 4242).then_some(())
    })
    .await;
    let status = session.lua("return require('pi-ide').status()").await;
    assert_eq!(status["clients"][0]["kind"], "claude");
    assert_eq!(status["clients"][0]["name"], "claude-code");

    agent
        .send_raw(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#)
        .await;
    let tools = agent.response(&json!(1)).await;
    let tools = tools["result"]["tools"].as_array().expect("a tool list");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for wanted in [
        "openDiff",
        "close_tab",
        "closeAllDiffTabs",
        "getDiagnostics",
        "openFile",
        "getCurrentSelection",
        "getLatestSelection",
        "getOpenEditors",
        "getWorkspaceFolders",
        "checkDocumentDirty",
        "saveDocument",
    ] {
        assert!(names.contains(&wanted), "{wanted} missing from {names:?}");
    }
    tools.iter().for_each(assert_valid_schema);

    agent
        .send_raw(r#"{"jsonrpc":"2.0","id":2,"method":"prompts/list","params":{}}"#)
        .await;
    let prompts = agent.response(&json!(2)).await;
    assert_eq!(prompts["result"], json!({"prompts": []}));
}

#[tokio::test]
async fn an_unknown_tool_is_method_not_found_and_the_connection_stays() {
    let session = Session::start().await;
    let mut agent = session.connect_claude().await;
    let reply = agent.call_tool("executeCode", json!({"code": "1"})).await;
    assert_eq!(reply["error"]["code"], -32601, "{reply}");
    let reply = agent.request("ping", json!({})).await;
    assert_eq!(reply["result"], json!({}));
}

/// Opens `name` (written with `contents`) in the current window.
async fn edit(session: &Session, name: &str, contents: &str) -> String {
    let path = session.write_file(name, contents);
    session
        .exec(&format!("vim.cmd.edit('{}')", path.display()))
        .await;
    path.to_str().unwrap().to_owned()
}

const PROGRAM: &str = "fn main() {\n    let answer = 42;\n    println!(\"{answer}\");\n}\n";

#[tokio::test]
async fn open_file_selects_from_start_text_to_end_text() {
    let session = Session::start().await;
    let path = session.write_file("program.rs", PROGRAM);
    let path = path.to_str().unwrap();
    let mut agent = session.connect_claude().await;

    let reply = agent
        .call_tool(
            "openFile",
            json!({"filePath": path, "startText": "let answer", "endText": "42;"}),
        )
        .await;
    assert_eq!(texts(&reply), [format!("Opened file: {path}")]);
    let now = session
        .lua(
            "return { name = vim.api.nvim_buf_get_name(0), mode = vim.api.nvim_get_mode().mode,
                       v = vim.fn.getpos('v'), dot = vim.fn.getpos('.') }",
        )
        .await;
    assert_eq!(now["name"], path);
    assert_eq!(now["mode"], "v");
    assert_eq!(now["v"], json!([0, 2, 5, 0]));
    assert_eq!(now["dot"], json!([0, 2, 20, 0]));
    let selection = result_json(&agent.call_tool("getCurrentSelection", json!({})).await);
    assert_eq!(
        selection,
        json!({"success": true, "text": "let answer = 42;", "filePath": path,
               "selection": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 20}}})
    );

    // Across lines, and to the end of the last line.
    agent
        .call_tool(
            "openFile",
            json!({"filePath": path, "startText": "answer = ", "endText": "println", "selectToEndOfLine": true}),
        )
        .await;
    let selection = result_json(&agent.call_tool("getCurrentSelection", json!({})).await);
    assert_eq!(
        selection["text"],
        "answer = 42;\n    println!(\"{answer}\");"
    );

    // startText alone puts the cursor there, in Normal mode.
    agent
        .call_tool("openFile", json!({"filePath": path, "startText": "main"}))
        .await;
    let now = session
        .lua("return { mode = vim.api.nvim_get_mode().mode, cursor = vim.api.nvim_win_get_cursor(0) }")
        .await;
    assert_eq!(now, json!({"mode": "n", "cursor": [1, 3]}));
}

#[tokio::test]
async fn open_file_in_the_background_leaves_the_person_where_they_are() {
    let session = Session::start().await;
    let here = edit(&session, "here.txt", "one\ntwo\nthree\n").await;
    session.place_cursor(2, 1).await;
    session.write_file("other.lua", "local a = 1\nreturn a\n");
    let mut agent = session.connect_claude().await;
    let where_ = "return { win = vim.api.nvim_get_current_win(), buf = vim.api.nvim_buf_get_name(0),
                          cursor = vim.api.nvim_win_get_cursor(0), tab = vim.api.nvim_get_current_tabpage(),
                          wins = #vim.api.nvim_list_wins() }";
    let before = session.lua(where_).await;
    assert_eq!(before["buf"], here);

    let reply = agent
        .call_tool(
            "openFile",
            json!({"filePath": "other.lua", "makeFrontmost": false, "startText": "return"}),
        )
        .await;
    let other = session.work_dir.join("other.lua");
    let other = other.to_str().unwrap();
    assert_eq!(
        result_json(&reply),
        json!({"success": true, "filePath": other, "languageId": "lua", "lineCount": 2})
    );
    assert_eq!(session.lua(where_).await, before);
    let loaded = session
        .lua_with(
            "local b = vim.fn.bufnr(...) return { vim.api.nvim_buf_is_loaded(b), vim.bo[b].buflisted }",
            vec![json!(other)],
        )
        .await;
    assert_eq!(loaded, json!([true, true]));
}

#[tokio::test]
async fn open_file_never_lands_in_a_terminal_a_diff_tab_or_outside_the_workspace() {
    let session = Session::start().await;
    let first = edit(&session, "first.txt", "first\n").await;
    let second = session.write_file("second.txt", "second\n");
    let second = second.to_str().unwrap();
    let mut agent = session.connect_claude().await;

    // The person is in a terminal beside the file window.
    let windows = session
        .lua(
            "local file_win = vim.api.nvim_get_current_win()
              vim.cmd('vnew')
              vim.api.nvim_open_term(0, {})
              return { file = file_win, term = vim.api.nvim_get_current_win() }",
        )
        .await;
    let reply = agent
        .call_tool("openFile", json!({"filePath": second}))
        .await;
    assert_eq!(texts(&reply), [format!("Opened file: {second}")]);
    let now = session
        .lua_with(
            "local term = ...
             return { win = vim.api.nvim_get_current_win(), buf = vim.api.nvim_buf_get_name(0),
                      term = vim.bo[vim.api.nvim_win_get_buf(term)].buftype }",
            vec![windows["term"].clone()],
        )
        .await;
    assert_eq!(
        now["win"], windows["file"],
        "the file window, not a new one"
    );
    assert_eq!(now["buf"], second);
    assert_eq!(now["term"], "terminal");

    // In a diff tab it goes to the person's own tab.
    agent
        .open_diff(std::path::Path::new(&first), "changed\n", "t1")
        .await;
    let diff = session.wait_diffs(1).await.remove(0);
    session.exec("require('pi-ide.diff').show()").await;
    assert_eq!(
        session
            .lua("return vim.api.nvim_get_current_tabpage()")
            .await,
        diff["tabpage"]
    );
    let reply = agent
        .call_tool("openFile", json!({"filePath": first}))
        .await;
    assert_eq!(texts(&reply), [format!("Opened file: {first}")]);
    let now = session
        .lua("return { tab = vim.api.nvim_get_current_tabpage(), buf = vim.api.nvim_buf_get_name(0) }")
        .await;
    assert_ne!(now["tab"], diff["tabpage"]);
    assert_eq!(now["buf"], first);
    assert_eq!(session.wait_diffs(1).await.len(), 1, "the diff stays open");

    let outside = crate::common::scratch_dir("outside");
    let outside_file = outside.join("secret.txt");
    std::fs::write(&outside_file, "x\n").unwrap();
    for (path, why) in [
        (
            outside_file.to_str().unwrap().to_owned(),
            "outside the workspace",
        ),
        ("../escape.txt".to_owned(), "outside the workspace"),
        ("missing.txt".to_owned(), "cannot open"),
    ] {
        let reply = result_json(&agent.call_tool("openFile", json!({"filePath": path})).await);
        assert_eq!(reply["success"], false, "{path}: {reply}");
        assert!(
            reply["message"].as_str().unwrap().contains(why),
            "{path}: {reply}"
        );
    }
    assert_eq!(
        session.lua("return vim.api.nvim_buf_get_name(0)").await,
        first,
        "a refused openFile changes nothing"
    );
}

#[tokio::test]
async fn current_and_latest_selection_follow_the_person() {
    let session = Session::start_with("{ selection = { debounce_ms = 20 } }").await;
    let mut agent = session.connect_claude().await;
    let none = result_json(&agent.call_tool("getLatestSelection", json!({})).await);
    assert_eq!(
        none,
        json!({"success": false, "message": "No selection available"})
    );

    let path = edit(&session, "words.txt", "añb alpha\nbeta\n").await;
    session.place_cursor(1, 5).await;
    let cursor = result_json(&agent.call_tool("getCurrentSelection", json!({})).await);
    assert_eq!(
        cursor,
        json!({"success": true, "text": "", "filePath": path,
               "selection": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 4}}})
    );
    session.input("vj").await;
    agent
        .notification("selection_changed", |p| p["text"] == "alpha\nbeta")
        .await;
    let selected = result_json(&agent.call_tool("getCurrentSelection", json!({})).await);
    assert_eq!(selected["text"], "alpha\nbeta");

    // In a terminal: no current editor, but the latest selection stays.
    session
        .exec("vim.cmd('botright new'); vim.api.nvim_open_term(0, {})")
        .await;
    let current = result_json(&agent.call_tool("getCurrentSelection", json!({})).await);
    assert_eq!(
        current,
        json!({"success": false, "message": "No active editor found"})
    );
    let latest = result_json(&agent.call_tool("getLatestSelection", json!({})).await);
    assert_eq!(
        latest,
        json!({"success": true, "text": "alpha\nbeta", "filePath": path,
               "selection": {"start": {"line": 0, "character": 4}, "end": {"line": 1, "character": 4}}})
    );
}

#[tokio::test]
async fn open_editors_and_the_workspace_folder() {
    let session = Session::start().await;
    let (_, lock) = session.lockfile().await;
    let mut agent = session.connect_claude().await;
    let empty = result_json(&agent.call_tool("getOpenEditors", json!({})).await);
    assert_eq!(empty, json!({"tabs": []}));

    let root = lock["workspaceFolders"][0].as_str().unwrap();
    let name = std::path::Path::new(root)
        .file_name()
        .unwrap()
        .to_str()
        .unwrap();
    let folders = result_json(&agent.call_tool("getWorkspaceFolders", json!({})).await);
    assert_eq!(
        folders,
        json!({"success": true, "folders": [{"name": name, "uri": format!("file://{root}"), "path": root}],
               "rootPath": root})
    );

    let notes = edit(&session, "notes.txt", "a\n").await;
    session
        .exec("vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'changed' })")
        .await;
    let main = edit(&session, "main.rs", "fn main() {}\n").await;
    let tabs = result_json(&agent.call_tool("getOpenEditors", json!({})).await);
    assert_eq!(
        tabs,
        json!({"tabs": [
            {"uri": format!("file://{notes}"), "isActive": false, "label": "notes.txt",
             "languageId": "plaintext", "isDirty": true},
            {"uri": format!("file://{main}"), "isActive": true, "label": "main.rs",
             "languageId": "rust", "isDirty": false},
        ]})
    );
}

#[tokio::test]
async fn dirty_documents_are_reported_and_saved() {
    let session = Session::start().await;
    let mut agent = session.connect_claude().await;
    let missing = session.work_dir.join("nowhere.txt");
    let missing = missing.to_str().unwrap();
    let reply = result_json(
        &agent
            .call_tool("checkDocumentDirty", json!({"filePath": missing}))
            .await,
    );
    assert_eq!(
        reply,
        json!({"success": false, "filePath": missing, "message": format!("Document not open: {missing}")})
    );

    let path = edit(&session, "draft.txt", "old\n").await;
    session
        .exec("vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'new' })")
        .await;
    let dirty = result_json(
        &agent
            .call_tool("checkDocumentDirty", json!({"filePath": "draft.txt"}))
            .await,
    );
    assert_eq!(
        dirty,
        json!({"success": true, "filePath": path, "isDirty": true, "isUntitled": false})
    );

    let saved = result_json(
        &agent
            .call_tool("saveDocument", json!({"filePath": path}))
            .await,
    );
    assert_eq!(
        saved,
        json!({"success": true, "filePath": path, "saved": true, "message": "Document saved"})
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
    let clean = result_json(
        &agent
            .call_tool("checkDocumentDirty", json!({"filePath": path}))
            .await,
    );
    assert_eq!(clean["isDirty"], false);
    let again = result_json(
        &agent
            .call_tool("saveDocument", json!({"filePath": path}))
            .await,
    );
    assert_eq!(
        (&again["success"], &again["saved"]),
        (&json!(true), &json!(false))
    );

    // Changed on disk since Neovim read it: refused, never a prompt.
    session
        .exec("vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'mine' })")
        .await;
    std::fs::write(&path, "theirs\n").unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(10);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .and_then(|file| file.set_modified(later))
        .unwrap();
    let refused = result_json(
        &agent
            .call_tool("saveDocument", json!({"filePath": path}))
            .await,
    );
    assert_eq!(
        (&refused["success"], &refused["saved"]),
        (&json!(false), &json!(false)),
        "{refused}"
    );
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("changed on disk")
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "theirs\n");
    assert_eq!(
        session.lua("return vim.api.nvim_get_mode().blocking").await,
        false
    );

    let outside = crate::common::scratch_dir("outside-save");
    let outside_file = outside.join("x.txt");
    std::fs::write(&outside_file, "x\n").unwrap();
    session
        .exec(&format!(
            "vim.cmd.edit('{}'); vim.api.nvim_buf_set_lines(0, 0, -1, false, {{ 'y' }})",
            outside_file.display()
        ))
        .await;
    let outside_path = outside_file.to_str().unwrap();
    let refused = result_json(
        &agent
            .call_tool("saveDocument", json!({"filePath": outside_path}))
            .await,
    );
    assert_eq!(refused["success"], false, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("outside the workspace")
    );
    assert_eq!(std::fs::read_to_string(&outside_file).unwrap(), "x\n");
    // Reading state is allowed anywhere.
    let dirty = result_json(
        &agent
            .call_tool("checkDocumentDirty", json!({"filePath": outside_path}))
            .await,
    );
    assert_eq!(dirty["isDirty"], true);
    let not_open = result_json(
        &agent
            .call_tool("saveDocument", json!({"filePath": "never-opened.txt"}))
            .await,
    );
    assert_eq!(not_open["success"], false);
    assert!(
        not_open["message"]
            .as_str()
            .unwrap()
            .starts_with("Document not open")
    );
}
