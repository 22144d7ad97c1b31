//! The MCP edit tools backed by real language servers Neovim starts:
//! multi-file renames with pyright (accept-all, mixed decisions), and
//! formatting and code-action fixes with clangd, each through the diff
//! review the person decides in.

use serde_json::json;

use crate::common::Session;
use crate::language_servers::{start_clangd, start_pyright};
use crate::mcp_edits::{call_now, command, ok, read, refused, start_client, write_elsewhere};
use crate::mcp_http::endpoint;
use crate::pi_extension::require_node_deps;

async fn with_pyright() -> (Session, (String, String)) {
    require_node_deps();
    let session = Session::start().await;
    let endpoint = endpoint(&session).await;
    session.write_file(
        "lib.py",
        "def add(a: int, b: int) -> int:\n    return a + b\n",
    );
    session.write_file("main.py", "from lib import add\n\ntotal = add(1, 2)\n");
    start_pyright(&session).await;
    (session, endpoint)
}

/// Puts the cursor in the proposal of the diff of `file`.
async fn go_to_diff_of(session: &Session, file: &str) {
    session
        .exec(&format!(
            "for _, d in ipairs(require('pi-ide.diff').list()) do
               if vim.endswith(d.path, '/{file}') then vim.cmd('PiIde diff ' .. d.tab_name) end
             end"
        ))
        .await;
}

#[tokio::test]
async fn a_rename_across_files_shows_every_file_and_accept_all_applies_them() {
    let (session, endpoint) = with_pyright().await;
    let calls = json!([{"name": "rename_refactoring",
        "arguments": {"pathInProject": "lib.py", "symbolName": "add", "newName": "plus"}}]);
    let mut client = start_client(&endpoint, calls, false);
    let diffs = client.diffs(&session, 2).await;
    assert_eq!(diffs[0]["group"], diffs[1]["group"], "{diffs:?}");
    go_to_diff_of(&session, "main.py").await;
    let bar = session.lua("return vim.wo.winbar").await;
    let bar = bar.as_str().unwrap();
    assert!(bar.contains("accept all"), "{bar}");
    assert!(bar.contains("rename_refactoring (file 2 of 2)"), "{bar}");
    assert_eq!(
        read(&session, "main.py"),
        "from lib import add\n\ntotal = add(1, 2)\n"
    );

    command(&session, "PiIde accept all").await;
    let result = client.result().await;
    let text = ok(&result);
    assert!(
        text.contains("lib.py") && text.contains("main.py"),
        "{text}"
    );
    assert_eq!(
        read(&session, "lib.py"),
        "def plus(a: int, b: int) -> int:\n    return a + b\n"
    );
    assert_eq!(
        read(&session, "main.py"),
        "from lib import plus\n\ntotal = plus(1, 2)\n"
    );
}

#[tokio::test]
async fn a_rename_sees_files_changed_on_disk_behind_buffers_no_window_shows() {
    let (session, endpoint) = with_pyright().await;
    // main.py opened by the person and left hidden, lib.py asked about by a
    // tool; then an agent's own tool writes main.py on disk.
    session.exec("vim.cmd.edit('main.py') vim.cmd.enew()").await;
    let problems =
        |file: &str| json!({"name": "get_file_problems", "arguments": {"filePath": file}});
    call_now(&endpoint, json!([problems("lib.py")])).await;
    write_elsewhere(
        &session,
        "main.py",
        "from lib import add\n\n\ntotal = add(1, 2)  # written by the agent\n",
    );
    let calls = json!([{"name": "rename_refactoring",
        "arguments": {"pathInProject": "lib.py", "symbolName": "add", "newName": "plus"}}]);
    let mut client = start_client(&endpoint, calls, false);
    client.diffs(&session, 2).await;
    command(&session, "PiIde diff").await;
    command(&session, "PiIde accept all").await;
    ok(&client.result().await);
    assert_eq!(
        read(&session, "main.py"),
        "from lib import plus\n\n\ntotal = plus(1, 2)  # written by the agent\n",
        "the rename is made on the file as it is, and keeps the agent's write"
    );
}

#[tokio::test]
async fn a_rename_with_mixed_decisions_applies_the_accepted_file_and_says_so() {
    let (session, endpoint) = with_pyright().await;
    // By position this time: `add` on line 3 of main.py, column 9.
    let calls = json!([{"name": "rename_refactoring",
        "arguments": {"pathInProject": "main.py", "line": 3, "column": 9, "newName": "plus"}}]);
    let mut client = start_client(&endpoint, calls, false);
    client.diffs(&session, 2).await;
    go_to_diff_of(&session, "main.py").await;
    command(&session, "PiIde reject").await;
    go_to_diff_of(&session, "lib.py").await;
    command(&session, "PiIde accept").await;
    let text = refused(&client.result().await);
    assert!(text.contains("applied and saved: lib.py"), "{text}");
    assert!(text.contains("declined the edit of main.py"), "{text}");
    assert!(read(&session, "lib.py").starts_with("def plus("));
    assert_eq!(
        read(&session, "main.py"),
        "from lib import add\n\ntotal = add(1, 2)\n"
    );
}

#[tokio::test]
async fn clangd_formats_and_fixes_through_approval() {
    let session = Session::start().await;
    let endpoint = endpoint(&session).await;
    start_clangd(&session, "c").await;
    session.write_file("fmt.c", "int  f( int a ){return a;}\n");
    // A missing semicolon: clangd offers its fix-it only with the diagnostic.
    session.write_file("fix.c", "int g(int a) {\n  return a\n}\n");

    let mut client = start_client(
        &endpoint,
        json!([{"name": "reformat_file", "arguments": {"path": "fmt.c"}}]),
        false,
    );
    client.diffs(&session, 1).await;
    command(&session, "PiIde accept").await;
    ok(&client.result().await);
    assert_eq!(read(&session, "fmt.c"), "int f(int a) { return a; }\n");

    let listed = call_now(
        &endpoint,
        // Where clangd puts the diagnostic: the `}` after the statement.
        json!([{"name": "get_code_actions", "arguments": {"filePath": "fix.c", "line": 3, "column": 1}}]),
    )
    .await;
    let actions = listed[0]["structuredContent"]["actions"]
        .as_array()
        .unwrap_or_else(|| panic!("no actions in {}", listed[0]))
        .clone();
    let fix = actions
        .iter()
        .find(|a| {
            a["title"]
                .as_str()
                .unwrap_or_default()
                .contains("insert ';'")
        })
        .unwrap_or_else(|| panic!("no semicolon fix in {actions:?}"));
    assert_eq!(fix["kind"], "quickfix", "{fix}");

    let mut client = start_client(
        &endpoint,
        json!([{"name": "apply_code_action", "arguments": {"id": fix["id"]}}]),
        false,
    );
    client.diffs(&session, 1).await;
    assert_eq!(read(&session, "fix.c"), "int g(int a) {\n  return a\n}\n");
    command(&session, "PiIde accept").await;
    ok(&client.result().await);
    assert_eq!(read(&session, "fix.c"), "int g(int a) {\n  return a;\n}\n");
    let stale = call_now(
        &endpoint,
        json!([{"name": "apply_code_action", "arguments": {"id": "no-such-id"}}]),
    )
    .await;
    assert!(refused(&stale[0]).contains("get_code_actions"));
    session.wait_diffs(0).await;
}
