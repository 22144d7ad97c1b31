//! The tools that change files or run things, driven by the official npm
//! SDK against real Neovim, with the person deciding as they would:
//! `apply_patch` across two files with one accepted and one rejected (and
//! a patch that does not apply, refused by its hunk); a run configuration
//! (a 'makeprg' that fails and fills the quickfix list) approved and
//! declined, and a terminal command, each asked in Neovim first and run in
//! a terminal window; a tool registered in Lua that proposes an edit
//! through the same review, and the tool list change announced to a
//! connected client.

use serde_json::{Value, json};

use crate::common::{Session, eventually};
use crate::mcp_edits::{call_now, command, ok, read, refused, start_client, start_client_with};
use crate::mcp_http::endpoint;

const A_PY: &str = "def one():\n    return 1\n\n\ndef two():\n    return 2\n";
const B_PY: &str = "from a import one\n\nprint(one())\n";
const PATCH: &str = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -4,3 +4,3 @@\n \n def two():\n-    return 2\n+    return 22\n--- a/b.py\n+++ b/b.py\n@@ -1,3 +1,3 @@\n from a import one\n \n-print(one())\n+print(one() + 1)\n";

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
async fn a_patch_over_two_files_is_reviewed_file_by_file() {
    let session = Session::start().await;
    let endpoint = endpoint(&session).await;
    session.write_file("a.py", A_PY);
    session.write_file("b.py", B_PY);
    let stale = PATCH.replace("-    return 2\n", "-    return 3\n");
    let refusals = call_now(
        &endpoint,
        json!([
            {"name": "apply_patch", "arguments": {"patch": stale}},
            {"name": "apply_patch", "arguments": {"patch": "--- a/../x.py\n+++ b/../x.py\n@@ -1 +1 @@\n-a\n+b\n"}},
        ]),
    )
    .await;
    let why = refused(&refusals[0]);
    assert!(
        why.contains("hunk 1 of 1 of a.py (`@@ -4,3 +4,3 @@`) does not apply"),
        "{why}"
    );
    assert!(
        why.contains(
            "at line 6 the file has `    return 2` where the patch expects `    return 3`"
        ),
        "{why}"
    );
    assert!(
        session.lua("return #require('pi-ide.diff').list()").await == 0,
        "nothing shown"
    );
    assert!(refused(&refusals[1]).contains("outside"), "{}", refusals[1]);

    let mut client = start_client(
        &endpoint,
        json!([{"name": "apply_patch", "arguments": {"patch": PATCH}}]),
        false,
    );
    let diffs = client.diffs(&session, 2).await;
    assert_eq!(diffs[0]["group"], diffs[1]["group"], "one edit: {diffs:?}");
    go_to_diff_of(&session, "b.py").await;
    let bar = session.lua("return vim.wo.winbar").await;
    assert!(
        bar.as_str().unwrap().contains("apply_patch (file 2 of 2)"),
        "{bar}"
    );
    command(&session, "PiIde reject").await;
    go_to_diff_of(&session, "a.py").await;
    command(&session, "PiIde accept").await;
    let text = refused(&client.result().await);
    assert!(text.contains("applied and saved: a.py"), "{text}");
    assert!(text.contains("declined the edit of b.py"), "{text}");
    assert_eq!(
        read(&session, "a.py"),
        A_PY.replace("return 2", "return 22")
    );
    assert_eq!(read(&session, "b.py"), B_PY);
}

/// Answers the question Neovim asks the person (vim.ui.select's list,
/// Neovim's own inputlist here) with `choice` once it is up; what it said.
async fn answer_prompt(session: &Session, choice: &str) -> String {
    let asked = eventually("Neovim to ask the person", || async {
        let asking = session.lua("return require('pi-ide.mcp.run').asking").await;
        let mode = session.lua("return vim.api.nvim_get_mode().mode").await;
        (mode == "c").then_some(asking.as_str()?.to_owned())
    })
    .await;
    session.input(&format!("{choice}<CR>")).await;
    asked
}

/// The runs' terminal buffers: `{title, shown}`.
async fn run_terminals(session: &Session) -> Value {
    session
        .lua(
            "local found = {}
             for _, buf in ipairs(vim.api.nvim_list_bufs()) do
               if vim.b[buf].pi_ide_run then
                 found[#found + 1] = { title = vim.b[buf].pi_ide_run, shown = #vim.fn.win_findbuf(buf) > 0,
                                       terminal = vim.bo[buf].buftype == 'terminal' }
               end
             end
             return found",
        )
        .await
}

#[tokio::test]
async fn runs_are_asked_first_and_run_in_a_terminal_the_person_sees() {
    let session = Session::start().await;
    let endpoint = endpoint(&session).await;
    session.write_file("main.c", "int main(void) {\n  return 0\n}\n");
    session.write_file(
        "build.sh",
        "echo 'compiling main.c'\necho 'main.c:2:11: error: expected semicolon'\nexit 2\n",
    );
    session.exec("vim.o.makeprg = 'sh build.sh'").await;

    let listed = call_now(
        &endpoint,
        json!([{"name": "get_run_configurations", "arguments": {}}]),
    )
    .await;
    let configurations = listed[0]["structuredContent"]["configurations"].clone();
    assert_eq!(configurations[0]["name"], "make", "{configurations}");
    assert_eq!(configurations[0]["command"], "sh build.sh");

    let run = json!([{"name": "execute_run_configuration", "arguments": {"name": "make"}}]);
    let client = start_client(&endpoint, run.clone(), false);
    let asked = answer_prompt(&session, "1").await;
    assert!(asked.contains("sh build.sh"), "the exact command: {asked}");
    let result = client.result().await;
    let text = ok(&result);
    assert!(
        text.contains("`sh build.sh`") && text.contains("exited with code 2"),
        "{text}"
    );
    let structured = &result["structuredContent"];
    assert_eq!(structured["exitCode"], 2);
    assert!(
        structured["output"]
            .as_array()
            .unwrap()
            .contains(&json!("main.c:2:11: error: expected semicolon")),
        "{structured}"
    );
    assert_eq!(
        structured["quickfix"],
        json!([{"filePath": "main.c", "line": 2, "column": 11, "text": "error: expected semicolon", "type": ""}]),
        "{structured}"
    );
    let quickfix = session
        .lua("return vim.tbl_map(function(e) return { vim.fn.bufname(e.bufnr), e.lnum, e.col } end, vim.tbl_filter(function(e) return e.valid == 1 end, vim.fn.getqflist()))")
        .await;
    assert_eq!(
        quickfix,
        json!([["main.c", 2, 11]]),
        "Neovim's own quickfix list"
    );
    assert_eq!(
        run_terminals(&session).await,
        json!([{"title": "'makeprg' (:make)", "shown": true, "terminal": true}])
    );

    let client = start_client(&endpoint, run, false);
    answer_prompt(&session, "2").await;
    let text = refused(&client.result().await);
    assert!(text.contains("declined to run `sh build.sh`"), "{text}");
    assert_eq!(
        run_terminals(&session).await.as_array().unwrap().len(),
        1,
        "nothing ran"
    );

    let shell = json!([{"name": "execute_terminal_command", "arguments": {"command": "printf 'é\\n' && exit 0"}}]);
    let client = start_client(&endpoint, shell, false);
    answer_prompt(&session, "1").await;
    let result = client.result().await;
    assert_eq!(result["structuredContent"]["exitCode"], 0, "{result}");
    assert_eq!(result["structuredContent"]["output"], json!(["é"]));
}

#[tokio::test]
async fn terminal_commands_can_be_turned_off() {
    let session = Session::start_with("{ mcp = { terminal_commands = false } }").await;
    let endpoint = endpoint(&session).await;
    let report = start_client(
        &endpoint,
        json!([{"name": "execute_terminal_command", "arguments": {"command": "true"}}]),
        false,
    )
    .report()
    .await;
    let names: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"execute_terminal_command"), "{names:?}");
    assert!(names.contains(&"execute_run_configuration"), "{names:?}");
    let call = &report["calls"][0];
    assert!(
        call["isError"] == true || call["error"].is_string(),
        "refused: {call}"
    );
}

#[tokio::test]
async fn a_lua_tool_proposes_edits_through_the_review_and_new_tools_are_announced() {
    let session = Session::start().await;
    let endpoint = endpoint(&session).await;
    session.write_file("notes.txt", "draft\n");
    let mut listening = start_client_with(
        &endpoint,
        json!([]),
        json!({"waitForToolListChanged": true}),
    );
    listening.said("listening").await;
    session
        .exec(
            "require('pi-ide.mcp').register_tool({
               name = 'finish_notes',
               description = 'Marks notes.txt final, after the person agrees',
               handler = function(_, done)
                 require('pi-ide.mcp').propose_edit({ path = 'notes.txt', text = 'final\\n', title = 'finish_notes' }, function(result)
                   if result.ok then done({ applied = result.applied }) else done(nil, result.message) end
                 end)
               end,
             })",
        )
        .await;
    let report = listening.report().await;
    let after: Vec<&str> = report["toolsAfterChange"]
        .as_array()
        .unwrap_or_else(|| {
            panic!(
                "no tools/list_changed heard: {}",
                report["toolsAfterChange"]
            )
        })
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(after.contains(&"finish_notes"), "{after:?}");

    let mut client = start_client(
        &endpoint,
        json!([{"name": "finish_notes", "arguments": {}}]),
        false,
    );
    let diffs = client.diffs(&session, 1).await;
    assert!(
        diffs[0]["path"].as_str().unwrap().ends_with("/notes.txt"),
        "{diffs:?}"
    );
    assert_eq!(
        read(&session, "notes.txt"),
        "draft\n",
        "nothing before the person decides"
    );
    command(&session, "PiIde diff").await;
    command(&session, "PiIde accept").await;
    let result = client.result().await;
    assert_eq!(
        result["structuredContent"],
        json!({"applied": ["notes.txt"]}),
        "{result}"
    );
    assert_eq!(read(&session, "notes.txt"), "final\n");

    let mut client = start_client(
        &endpoint,
        json!([{"name": "finish_notes", "arguments": {}}]),
        false,
    );
    session.write_file("notes.txt", "draft again\n");
    client.diffs(&session, 1).await;
    command(&session, "PiIde diff").await;
    command(&session, "PiIde reject").await;
    let text = refused(&client.result().await);
    assert!(text.contains("declined"), "{text}");
    assert_eq!(read(&session, "notes.txt"), "draft again\n");
}
