//! LSP answers that name many files, from a language server inside the
//! test's Neovim (`tests/fixtures/fake_lsp.lua`) that counts columns in
//! UTF-8: the host converts them to 1-based UTF-16 and reads each line's
//! text itself (from Neovim only for buffers with unsaved edits), so
//! Neovim reads no file for the answer; the buffer the call loaded is let
//! go of afterwards, the person's own buffers stay.

use serde_json::{Value, json};

use crate::common::{Session, repo_root};
use crate::mcp_edits::{call_now, ok};
use crate::mcp_http::{endpoint, structured};

const FILES: usize = 500;

/// Starts the fake server for `*.fake` buffers, counting columns in `encoding`.
pub(crate) async fn with_fake_server(session: &Session, encoding: &str) {
    let fixture = repo_root().join("tests/fixtures/fake_lsp.lua");
    let root = session.work_dir.canonicalize().unwrap();
    session
        .exec(&format!(
            "vim.filetype.add({{ extension = {{ fake = 'fake' }} }})
             dofile({fixture:?})({{ filetype = 'fake', encoding = {encoding:?}, root = {root:?} }})",
            fixture = fixture.to_str().unwrap(),
            root = root.to_str().unwrap(),
        ))
        .await;
}

/// A location the fake server sends: row 1 of `path`, at `needle` in
/// `line` counted in UTF-8 bytes; and what the tool must make of it.
fn location(
    session: &Session,
    relative: &str,
    row: u64,
    line: &str,
    needle: &str,
) -> (Value, Value) {
    let at = line.find(needle).unwrap();
    let path = session.work_dir.canonicalize().unwrap().join(relative);
    let sent = json!({"uri": format!("file://{}", path.display()),
        "range": {"start": {"line": row, "character": at}, "end": {"line": row, "character": at + needle.len()}}});
    let column = line[..at].encode_utf16().count() + 1;
    let expected =
        json!({"filePath": relative, "line": row + 1, "column": column, "lineText": line});
    (sent, expected)
}

#[tokio::test]
async fn references_across_many_files_come_with_utf16_columns_and_text_read_off_the_ui_thread() {
    let session = Session::start().await;
    let endpoint = endpoint(&session).await;
    std::fs::create_dir(session.work_dir.join("pkg")).unwrap();
    let mut sent = vec![];
    let mut expected = vec![];
    for i in 0..FILES {
        let line = format!("let é😀 = target; // {i}");
        let relative = format!("pkg/f{i:03}.fake");
        // One file with DOS line ends: the text comes without its `\r`.
        let newline = if i == 7 { "\r\n" } else { "\n" };
        session.write_file(&relative, &format!("first{newline}{line}{newline}"));
        let (s, e) = location(&session, &relative, 1, &line, "target");
        sent.push(s);
        expected.push(e);
    }
    session.write_file("main.fake", "target();\n");
    let (s, e) = location(&session, "main.fake", 0, "target();", "target");
    sent.push(s);
    expected.push(e);
    // The person's buffers: one with unsaved edits (its text is the
    // buffer's), one hidden without.
    session.write_file("edited.fake", "first\nold target\n");
    session.write_file("hidden.fake", "first\n");
    with_fake_server(&session, "utf-8").await;
    let unsaved = "let ünsaved = 😀 target";
    session
        .exec(&format!(
            "vim.cmd.edit('hidden.fake') vim.cmd.edit('edited.fake')
             vim.api.nvim_buf_set_lines(0, 1, 2, false, {{ {unsaved:?} }})"
        ))
        .await;
    let (s, e) = location(&session, "edited.fake", 1, unsaved, "target");
    sent.push(s);
    expected.push(e);
    expected.sort_by_key(|e| e["filePath"].as_str().unwrap().to_owned());
    session
        .lua_with(
            "_G.fake_lsp.references = ...
             _G.readfile_calls = 0
             local readfile = vim.fn.readfile
             vim.fn.readfile = function(...)
               _G.readfile_calls = _G.readfile_calls + 1
               return readfile(...)
             end",
            vec![json!(sent)],
        )
        .await;

    let calls = call_now(
        &endpoint,
        json!([{"name": "find_references", "arguments": {"filePath": "main.fake", "line": 1, "column": 1}}]),
    )
    .await;
    ok(&calls[0]);
    let found = structured(&calls[0])["locations"].clone();
    assert_eq!(found.as_array().map(Vec::len), Some(FILES + 2), "{found}");
    assert_eq!(
        found,
        json!(expected),
        "1-based UTF-16 columns and each line's text"
    );

    let after = session
        .lua(
            "local function state(name)
               local b = vim.fn.bufnr(name)
               return { b ~= -1 and vim.api.nvim_buf_is_loaded(b), b ~= -1 and vim.bo[b].modified }
             end
             return { _G.readfile_calls, vim.fn.bufnr('main.fake'), state('edited.fake'), state('hidden.fake') }",
        )
        .await;
    assert_eq!(after[0], 0, "no file read on Neovim's side");
    assert_eq!(after[1], -1, "the buffer the call loaded is gone");
    assert_eq!(
        after[2],
        json!([true, true]),
        "the person's edited buffer stays"
    );
    assert_eq!(
        after[3],
        json!([true, false]),
        "the person's hidden buffer stays"
    );
}

#[tokio::test]
async fn buffers_the_tools_load_are_let_go_of_and_the_persons_stay() {
    let session = Session::start().await;
    let endpoint = endpoint(&session).await;
    for name in ["tool.fake", "shown.fake", "edited.fake"] {
        session.write_file(name, "target\n");
    }
    with_fake_server(&session, "utf-32").await;
    session
        .exec(
            "vim.cmd.edit('edited.fake') vim.api.nvim_buf_set_lines(0, 0, 1, false, { 'é target' })
             vim.cmd.split('shown.fake')",
        )
        .await;
    let line = "é target";
    let path = session.work_dir.canonicalize().unwrap().join("edited.fake");
    session
        .lua_with(
            "_G.fake_lsp.symbols = ...",
            vec![json!([{"name": "target", "kind": 12,
                "location": {"uri": format!("file://{}", path.display()),
                    "range": {"start": {"line": 0, "character": 2}, "end": {"line": 0, "character": 8}}}}])],
        )
        .await;
    let references = |file: &str| json!({"name": "find_references", "arguments": {"filePath": file, "line": 1, "column": 1}});
    let calls = call_now(
        &endpoint,
        json!([references("tool.fake"), references("shown.fake"), references("edited.fake"),
            {"name": "search_symbol", "arguments": {"q": "target"}}]),
    )
    .await;
    for call in &calls {
        ok(call);
    }
    assert_eq!(
        structured(&calls[3])["symbols"],
        json!([{"name": "target", "kind": "Function", "filePath": "edited.fake", "line": 1,
            "column": line.find("target").map(|at| line[..at].encode_utf16().count() + 1)}]),
        "a UTF-32 column made UTF-16, on the buffer's text"
    );
    let loaded = session
        .lua(
            "return vim.tbl_map(function(name)
               local b = vim.fn.bufnr(name)
               return b ~= -1 and vim.api.nvim_buf_is_loaded(b)
             end, { 'tool.fake', 'shown.fake', 'edited.fake' })",
        )
        .await;
    assert_eq!(
        loaded,
        json!([false, true, true]),
        "the tool's buffer is gone; the shown and the edited one stay"
    );
}
