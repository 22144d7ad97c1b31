//! The Streamable-HTTP MCP endpoint, driven by the official npm SDK
//! (`tests/mcp/client.mjs`, `@modelcontextprotocol/sdk` from pi/'s pinned
//! packages) against real headless Neovim: tool list, each tool's answer
//! (unsaved buffer text, 1-based positions, projectPath checked), and the
//! refusals (401 without the token, 403 for a foreign Host or Origin).

use std::process::Command;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{Session, eventually, repo_root};
use crate::pi_extension::require_node_deps;

/// `(url, token)` from the pi lockfile.
pub(crate) async fn endpoint(session: &Session) -> (String, String) {
    let (_, lock) = session.lockfile().await;
    let url = lock["mcpUrl"]
        .as_str()
        .unwrap_or_else(|| panic!("no mcpUrl in {lock}"))
        .to_owned();
    (url, lock["authToken"].as_str().unwrap().to_owned())
}

/// Runs the SDK client with `calls`; its JSON report.
pub(crate) fn sdk_client(url: &str, token: &str, calls: Value) -> Value {
    require_node_deps();
    let script = repo_root().join("tests/mcp/client.mjs");
    let out = Command::new("node")
        .arg(&script)
        .args([url, token, &calls.to_string()])
        .output()
        .expect("run node");
    assert!(
        out.status.success(),
        "client.mjs failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// The status line of a raw `POST /mcp` with these extra header lines.
pub(crate) async fn status_of(url: &str, headers: &str) -> u16 {
    let authority = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\n{headers}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(&authority).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = vec![0; 64];
    let n = stream.read(&mut response).await.unwrap();
    let head = String::from_utf8_lossy(&response[..n]).into_owned();
    head.split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"))
}

pub(crate) fn structured(call: &Value) -> &Value {
    assert_ne!(call["isError"], json!(true), "{call}");
    &call["structuredContent"]
}

#[tokio::test]
async fn the_npm_sdk_lists_and_calls_the_project_tools() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    let root = session.work_dir.canonicalize().unwrap();
    session.write_file("a.py", "x = 1\ny = 2\n");
    session.write_file("b.txt", "one\ntwo\nthree\n");
    // a.py open with an unsaved edit on line 2, and a diagnostic on it.
    session
        .exec(
            "vim.cmd.edit('a.py')
             vim.api.nvim_buf_set_lines(0, 1, 2, false, { 'y = undefined_name' })
             local ns = vim.api.nvim_create_namespace('mcp_http_test')
             vim.diagnostic.set(ns, 0, {
               { lnum = 1, col = 4, end_lnum = 1, end_col = 18,
                 severity = vim.diagnostic.severity.ERROR, message = 'MCP_DIAG', source = 'test' },
               { lnum = 0, col = 0, severity = vim.diagnostic.severity.WARN, message = 'a warning' },
             })",
        )
        .await;
    let elsewhere = format!("{}-elsewhere", root.display());
    let calls = json!([
        {"name": "get_all_open_file_paths", "arguments": {}},
        {"name": "get_file_text_by_path", "arguments": {"pathInProject": "a.py"}},
        {"name": "get_file_text_by_path", "arguments": {"pathInProject": "b.txt", "maxLinesCount": 2}},
        {"name": "get_file_problems", "arguments": {"filePath": "a.py", "projectPath": format!("{}/", root.display())}},
        {"name": "get_file_problems", "arguments": {"filePath": "a.py", "errorsOnly": false}},
        {"name": "get_project_problems", "arguments": {}},
        {"name": "get_all_open_file_paths", "arguments": {"projectPath": elsewhere}},
        {"name": "get_file_text_by_path", "arguments": {"pathInProject": "../outside.txt"}},
    ]);
    let report = sdk_client(&url, &token, calls);

    assert!(
        report["sessionId"].is_string(),
        "a 2025-11-25 session: {report}"
    );
    let tools = report["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "get_all_open_file_paths",
            "get_file_text_by_path",
            "get_file_problems",
            "get_project_problems",
            "lint_files",
            "find_files_by_glob",
            "find_files_by_name_keyword",
            "search_in_files_by_text",
            "search_in_files_by_regex",
            "list_directory_tree",
            "open_file_in_editor",
            "get_symbol_info",
            "find_definition",
            "find_references",
            "find_implementations",
            "find_type_definition",
            "find_declaration",
            "get_call_hierarchy",
            "get_type_hierarchy",
            "get_document_symbols",
            "replace_text_in_file",
            "create_new_file",
            "reformat_file",
            "rename_refactoring",
            "get_code_actions",
            "apply_code_action",
            "apply_patch",
            "search_symbol",
            "get_project_vcs_status",
            "get_file_diff",
            "get_run_configurations",
            "execute_run_configuration",
            "execute_terminal_command",
        ]
    );
    for tool in tools {
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], "object", "{tool}");
        for required in schema["required"].as_array().into_iter().flatten() {
            assert!(
                schema["properties"][required.as_str().unwrap()].is_object(),
                "{tool}"
            );
        }
        assert!(schema["properties"]["projectPath"].is_object(), "{tool}");
    }

    let calls = report["calls"].as_array().unwrap();
    let open = structured(&calls[0]);
    assert_eq!(open["activeFilePath"], "a.py", "{open}");
    assert_eq!(open["openFiles"], json!(["a.py"]));

    let text = structured(&calls[1]);
    assert_eq!(
        text["text"], "x = 1\ny = undefined_name",
        "unsaved text: {text}"
    );
    assert_eq!(text["fromBuffer"], true);
    assert_eq!(calls[1]["content"][0]["text"], "x = 1\ny = undefined_name");

    let disk = structured(&calls[2]);
    assert_eq!(disk["fromBuffer"], false);
    assert_eq!(disk["truncated"], true);
    assert_eq!(disk["lineCount"], 3);
    assert!(
        disk["text"].as_str().unwrap().starts_with("one\ntwo\n"),
        "{disk}"
    );

    let errors = structured(&calls[3]);
    assert_eq!(errors["filePath"], "a.py");
    assert_eq!(
        errors["errors"],
        json!([{"severity": "ERROR", "description": "MCP_DIAG", "source": "test",
                "line": 2, "column": 5, "endLine": 2, "endColumn": 19}]),
        "1-based, errors only"
    );
    assert_eq!(structured(&calls[4])["errors"].as_array().unwrap().len(), 2);
    let project = structured(&calls[5]);
    let problems = project["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 2, "{project}");
    assert!(
        problems.iter().all(|p| p["filePath"] == "a.py"),
        "{project}"
    );

    let mismatch = &calls[6];
    assert_eq!(mismatch["isError"], true, "{mismatch}");
    let message = mismatch["content"][0]["text"].as_str().unwrap();
    assert!(
        message.contains("not this Neovim's project") && message.contains(&*root.to_string_lossy()),
        "{message}"
    );
    assert_eq!(
        calls[7]["isError"], true,
        "confined to the root: {}",
        calls[7]
    );
}

/// `files` of a find result, as strings.
fn files(call: &Value) -> Vec<&str> {
    structured(call)["files"]
        .as_array()
        .unwrap_or_else(|| panic!("no files in {call}"))
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect()
}

/// `(filePath, line, lineText)` of a search result.
fn usages(call: &Value) -> Vec<(String, u64, String)> {
    structured(call)["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("no entries in {call}"))
        .iter()
        .map(|e| {
            (
                e["filePath"].as_str().unwrap().to_owned(),
                e["line"].as_u64().unwrap(),
                e["lineText"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn refused(call: &Value, what: &str) {
    assert_eq!(call["isError"], true, "{what}: {call}");
}

#[tokio::test]
async fn the_npm_sdk_finds_searches_lists_and_opens_project_files() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    let tree = session.work_dir.join("tree");
    std::fs::create_dir_all(tree.join("nested/deep")).unwrap();
    std::fs::write(tree.join(".gitignore"), "secret.txt\n").unwrap();
    std::fs::write(tree.join("secret.txt"), "needle hidden\n").unwrap();
    std::fs::write(tree.join("keep.txt"), "first\nneedle one\nNEEDLE two\n").unwrap();
    std::fs::write(tree.join("latin1.txt"), b"needle \xe9t\xe9\n").unwrap();
    std::fs::write(
        tree.join("nested/deep/found.rs"),
        "fn needle_fn() {}\n// needle\n",
    )
    .unwrap();
    let calls = json!([
        {"name": "find_files_by_glob", "arguments": {"globPattern": "tree/**/*.txt"}},
        {"name": "find_files_by_glob", "arguments": {"globPattern": "*.txt", "subDirectoryRelativePath": "tree", "addExcluded": true}},
        {"name": "find_files_by_glob", "arguments": {"globPattern": "*", "subDirectoryRelativePath": "tree", "fileCountLimit": 1}},
        {"name": "find_files_by_glob", "arguments": {"globPattern": "*", "subDirectoryRelativePath": "../"}},
        {"name": "find_files_by_name_keyword", "arguments": {"nameKeyword": "FOUND"}},
        {"name": "find_files_by_name_keyword", "arguments": {"nameKeyword": "secret"}},
        {"name": "search_in_files_by_text", "arguments": {"searchText": "needle", "directoryToSearch": "tree"}},
        {"name": "search_in_files_by_text", "arguments": {"searchText": "needle", "directoryToSearch": "tree", "caseSensitive": false, "fileMask": "*.txt"}},
        {"name": "search_in_files_by_regex", "arguments": {"regexPattern": "(?i)^needle \\w+$", "directoryToSearch": "tree", "maxUsageCount": 1}},
        {"name": "search_in_files_by_text", "arguments": {"searchText": "root", "directoryToSearch": "/etc"}},
        {"name": "search_in_files_by_regex", "arguments": {"regexPattern": "("}},
        {"name": "list_directory_tree", "arguments": {"directoryPath": "tree"}},
        {"name": "list_directory_tree", "arguments": {"directoryPath": "tree", "maxDepth": 1}},
        {"name": "list_directory_tree", "arguments": {"directoryPath": ".."}},
        {"name": "open_file_in_editor", "arguments": {"filePath": "tree/keep.txt", "line": 3, "column": 2}},
        {"name": "open_file_in_editor", "arguments": {"filePath": "../outside.txt"}},
    ]);
    let report = sdk_client(&url, &token, calls);
    let calls = report["calls"].as_array().unwrap();

    assert_eq!(
        files(&calls[0]),
        ["tree/keep.txt", "tree/latin1.txt"],
        ".gitignore honoured"
    );
    assert!(files(&calls[1]).contains(&"tree/secret.txt"), "addExcluded");
    assert_eq!(files(&calls[2]).len(), 1);
    assert_eq!(structured(&calls[2])["limitReached"], true);
    let cut = calls[2]["content"][0]["text"].as_str().unwrap();
    assert!(cut.contains("limit of 1"), "says it was cut: {cut}");
    refused(&calls[3], "a directory outside the root");
    assert_eq!(files(&calls[4]), ["tree/nested/deep/found.rs"]);
    assert!(files(&calls[5]).is_empty(), "ignored: {}", calls[5]);

    let own = |entries: &[(&str, u64, &str)]| -> Vec<(String, u64, String)> {
        entries
            .iter()
            .map(|(p, l, t)| ((*p).to_owned(), *l, (*t).to_owned()))
            .collect()
    };
    assert_eq!(
        usages(&calls[6]),
        own(&[
            ("tree/keep.txt", 2, "needle one"),
            ("tree/nested/deep/found.rs", 1, "fn needle_fn() {}"),
            ("tree/nested/deep/found.rs", 2, "// needle"),
        ]),
        "1-based lines; ignored and non-UTF-8 files skipped"
    );
    assert_eq!(
        usages(&calls[7]),
        own(&[
            ("tree/keep.txt", 2, "needle one"),
            ("tree/keep.txt", 3, "NEEDLE two"),
        ])
    );
    assert_eq!(
        usages(&calls[8]),
        own(&[("tree/keep.txt", 2, "needle one")])
    );
    assert_eq!(structured(&calls[8])["limitReached"], true);
    refused(&calls[9], "a search outside the root");
    refused(&calls[10], "a bad regex");

    let listed = structured(&calls[11]);
    let entries = listed["entries"].as_array().unwrap();
    let paths: Vec<&str> = entries
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "tree/keep.txt",
            "tree/latin1.txt",
            "tree/nested",
            "tree/nested/deep",
            "tree/nested/deep/found.rs"
        ],
        "{listed}"
    );
    assert_eq!(entries[2]["type"], "directory");
    assert_eq!(entries[4]["depth"], 3);
    let text = calls[11]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("      found.rs"), "{text}");
    let shallow = structured(&calls[12])["entries"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(shallow.len(), 3, "maxDepth 1: {shallow:?}");
    refused(&calls[13], "a tree outside the root");

    assert_eq!(structured(&calls[14])["filePath"], "tree/keep.txt");
    let shown = session
        .lua("return { vim.fn.expand('%:t'), vim.api.nvim_win_get_cursor(0) }")
        .await;
    assert_eq!(shown, json!(["keep.txt", [3, 1]]), "line 3, column 2");
    refused(&calls[15], "a file outside the root");
}

#[tokio::test]
async fn requests_without_the_token_or_from_elsewhere_are_refused() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let host = format!("Host: {authority}\r\n");
    let bearer = format!("Authorization: Bearer {token}\r\n");
    assert_eq!(status_of(&url, &host).await, 401, "no token");
    let wrong = format!("{host}Authorization: Bearer {}x\r\n", &token[1..]);
    assert_eq!(status_of(&url, &wrong).await, 401, "wrong token");
    let basic = format!("{host}Authorization: Basic {token}\r\n");
    assert_eq!(status_of(&url, &basic).await, 401, "wrong scheme");
    let foreign_host = format!("Host: evil.example:{}\r\n{bearer}", &authority[10..]);
    assert_eq!(status_of(&url, &foreign_host).await, 403, "DNS rebinding");
    let foreign_origin = format!("{host}{bearer}Origin: https://evil.example\r\n");
    assert_eq!(
        status_of(&url, &foreign_origin).await,
        403,
        "a browser page"
    );
    // With the token (scheme in any case) the request reaches MCP.
    let lower = format!("{host}authorization: bearer {token}\r\nOrigin: http://localhost:3000\r\n");
    let status = status_of(&url, &lower).await;
    assert!(status != 401 && status != 403, "{status}");
}

#[tokio::test]
async fn mcp_can_be_turned_off_and_the_command_shows_the_url() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    let shown = &session;
    eventually("the host reported its MCP url", || async move {
        let status = shown.lua("return require('pi-ide').status().mcp_url").await;
        status.as_str().map(str::to_owned)
    })
    .await;
    session.exec("vim.cmd('PiIde mcp')").await;
    let told = session.notifications().await.join("\n");
    assert!(told.contains(&url), "{told}");
    assert!(told.contains(&format!("/nvim connect {url}")), "{told}");
    let lockfile = session
        .lua("return require('pi-ide').status().lockfile")
        .await;
    let claude = format!(
        "claude mcp add --transport http nvim {url} --header \"Authorization: Bearer $(jq -r .authToken '{}')\"",
        lockfile.as_str().unwrap()
    );
    assert!(told.contains(&claude), "{told}");
    // Codex keeps the name of a variable it reads the token from.
    let codex = format!("codex mcp add nvim --url {url} --bearer-token-env-var PI_IDE_MCP_TOKEN");
    assert!(told.contains(&codex), "{told}");
    let run = format!(
        "PI_IDE_MCP_TOKEN=\"$(jq -r .authToken '{}')\" codex",
        lockfile.as_str().unwrap()
    );
    assert!(told.contains(&run), "{told}");
    assert!(!told.contains(&token), "{told}");
    session.exec("vim.cmd('PiIde mcp copy')").await;
    let copied = session.lua("return vim.fn.getreg('\"')").await;
    assert_eq!(copied.as_str().unwrap(), claude);
    session.exec("vim.cmd('PiIde mcp copy codex')").await;
    let copied = session.lua("return vim.fn.getreg('\"')").await;
    assert_eq!(copied.as_str().unwrap(), codex);
    let completed = session
        .lua("return vim.fn.getcompletion('PiIde mcp ', 'cmdline')")
        .await;
    assert_eq!(completed, serde_json::json!(["copy"]));
    let off = Session::start_with("{ mcp = { enabled = false } }").await;
    let (_, lock) = off.lockfile().await;
    assert!(lock.get("mcpUrl").is_none(), "{lock}");
}

#[tokio::test]
async fn a_taken_port_costs_only_the_mcp_endpoint() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let session = Session::start_with(&format!("{{ mcp = {{ port = {port} }} }}")).await;
    let (_, lock) = session.lockfile().await;
    assert!(lock.get("mcpUrl").is_none(), "{lock}");
    let shown = &session;
    let told = eventually("a warning about the port", || async move {
        let told = shown.notifications().await.join("\n");
        told.contains(&format!("127.0.0.1:{port}")).then_some(told)
    })
    .await;
    assert!(told.contains("mcp.port"), "{told}");
    session.exec("vim.cmd('PiIde mcp')").await;
    let told = session.notifications().await.join("\n");
    assert!(told.contains("MCP endpoint: cannot listen"), "{told}");
}

/// The LSP tools against a real pyright started by Neovim: 1-based
/// positions with the lines' text, hover, references across files,
/// document symbols, and the refusals.
#[tokio::test]
async fn the_lsp_tools_answer_from_a_real_language_server() {
    require_node_deps();
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    session.write_file(
        "lib.py",
        "class Greeter:\n    def greet(self, name: str) -> str:\n        return \"hi \" + name\n\n\n\
         def add(a: int, b: int) -> int:\n    \"\"\"Adds two numbers.\"\"\"\n    return a + b\n",
    );
    session.write_file("main.py", "from lib import add\n\ntotal = add(1, 2)\n");
    session.write_file("notes.txt", "nothing to see\n");
    let server = repo_root().join("pi/node_modules/.bin/pyright-langserver");
    let root = session.work_dir.canonicalize().unwrap();
    session
        .exec(&format!(
            "vim.api.nvim_create_autocmd('FileType', {{ pattern = 'python', callback = function(args)
               vim.lsp.start({{ name = 'pyright', cmd = {{ {server:?}, '--stdio' }}, root_dir = {root:?} }},
                 {{ bufnr = args.buf }})
             end }})",
            server = server.to_str().unwrap(),
            root = root.to_str().unwrap(),
        ))
        .await;
    let calls = json!([
        {"name": "find_definition", "arguments": {"filePath": "main.py", "line": 3, "column": 9}},
        {"name": "get_symbol_info", "arguments": {"filePath": "main.py", "line": 3, "column": 9}},
        {"name": "find_references", "arguments": {"filePath": "lib.py", "line": 6, "column": 5}},
        {"name": "get_document_symbols", "arguments": {"filePath": "lib.py"}},
        {"name": "get_symbol_info", "arguments": {"filePath": "notes.txt", "line": 1, "column": 1}},
        {"name": "find_definition", "arguments": {"filePath": "../elsewhere.py", "line": 1, "column": 1}},
    ]);
    let started = std::time::Instant::now();
    let report = sdk_client(&url, &token, calls);
    eprintln!("LSP tool calls took {:?}", started.elapsed());
    let calls = report["calls"].as_array().unwrap();

    assert_eq!(
        structured(&calls[0])["locations"],
        json!([{"filePath": "lib.py", "line": 6, "column": 5, "lineText": "def add(a: int, b: int) -> int:"}])
    );
    let hover = structured(&calls[1])["documentation"]
        .as_str()
        .unwrap()
        .to_owned();
    // pyright puts each parameter on a line of its own.
    for part in ["def add(", "a: int", "b: int", ") -> int"] {
        assert!(hover.contains(part), "{part} in {hover}");
    }
    assert!(hover.contains("Adds two numbers."), "{hover}");

    let references = structured(&calls[2])["locations"]
        .as_array()
        .unwrap()
        .clone();
    for expected in [
        json!({"filePath": "lib.py", "line": 6, "column": 5, "lineText": "def add(a: int, b: int) -> int:"}),
        json!({"filePath": "main.py", "line": 3, "column": 9, "lineText": "total = add(1, 2)"}),
    ] {
        assert!(
            references.contains(&expected),
            "{expected} in {references:?}"
        );
    }

    let symbols = structured(&calls[3])["symbols"].as_array().unwrap().clone();
    for expected in [
        json!({"name": "Greeter", "kind": "Class", "filePath": "lib.py", "line": 1, "column": 7}),
        json!({"name": "add", "kind": "Function", "filePath": "lib.py", "line": 6, "column": 5}),
    ] {
        assert!(symbols.contains(&expected), "{expected} in {symbols:?}");
    }

    assert_eq!(calls[4]["isError"], true, "{}", calls[4]);
    assert_eq!(
        calls[4]["content"][0]["text"], "no language server for notes.txt",
        "{}",
        calls[4]
    );
    assert_eq!(calls[5]["isError"], true, "{}", calls[5]);
    assert!(
        calls[5]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("outside the project root"),
        "{}",
        calls[5]
    );
}
