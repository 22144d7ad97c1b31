//! openDiff / close_tab / closeAllDiffTabs end to end.

use serde_json::{Value, json};

use crate::common::{Session, eventually, open_diff_args, texts};

async fn buffer_lines(session: &Session, buf: &Value) -> Value {
    session
        .lua_with(
            // A diff being replaced may lose its buffer between list() and this call.
            "local ok, lines = pcall(vim.api.nvim_buf_get_lines, ..., 0, -1, false); return ok and lines or nil",
            vec![buf.clone()],
        )
        .await
}

#[tokio::test]
async fn write_in_the_proposal_accepts_without_touching_the_file() {
    let session = Session::start().await;
    let path = session.write_file("a.txt", "one\ntwo\n");
    let mut agent = session.connect().await;
    let id = agent.open_diff(&path, "one\n2\nthree\n", "pi-edit:1").await;
    let list = session.wait_diffs(1).await;
    assert_eq!(list[0]["tab_name"], "pi-edit:1");
    assert_eq!(list[0]["path"], path.to_str().unwrap());
    assert_eq!(
        buffer_lines(&session, &list[0]["original_buf"]).await,
        json!(["one", "two"])
    );
    assert_eq!(
        buffer_lines(&session, &list[0]["proposed_buf"]).await,
        json!(["one", "2", "three"])
    );
    let in_diff_mode = session
        .lua_with("local t = ...; return vim.tbl_map(function(w) return vim.wo[w].diff end, vim.api.nvim_tabpage_list_wins(t))", vec![list[0]["tabpage"].clone()])
        .await;
    assert_eq!(in_diff_mode, json!([true, true]));
    // Neither side shows `[+]`: nothing there is an unsaved edit yet.
    let modified = session
        .lua_with(
            "local d = ...; return { vim.bo[d.original_buf].modified, vim.bo[d.proposed_buf].modified }",
            vec![list[0].clone()],
        )
        .await;
    assert_eq!(modified, json!([false, false]));
    assert_eq!(
        session
            .lua("return require('pi-ide').status().diffs[1].tab_name")
            .await,
        "pi-edit:1"
    );
    session.exec("vim.cmd('write')").await;
    let reply = agent.response(&id).await;
    assert_eq!(texts(&reply), ["FILE_SAVED", "one\n2\nthree\n"]);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "one\ntwo\n",
        "the editor never writes the file"
    );
    session.wait_diffs(0).await;
    eventually("the diff tab to close", || async {
        (session.lua("return #vim.api.nvim_list_tabpages()").await == 1).then_some(())
    })
    .await;
}

#[tokio::test]
async fn accept_sends_the_persons_edits_and_honours_eol() {
    let session = Session::start().await;
    let path = session.write_file("b.txt", "x\n");
    let mut agent = session.connect().await;
    let id = agent.open_diff(&path, "a\nb", "t").await;
    let list = session.wait_diffs(1).await;
    session
        .lua_with(
            "vim.api.nvim_buf_set_lines(..., 1, 2, false, {'B edited', 'c'})",
            vec![list[0]["proposed_buf"].clone()],
        )
        .await;
    session.exec("require('pi-ide.diff').accept('t')").await;
    assert_eq!(
        texts(&agent.response(&id).await),
        ["FILE_SAVED", "a\nB edited\nc"],
        "no newline added: the proposal had none"
    );
}

#[tokio::test]
async fn rejecting_by_command_or_by_closing_the_proposal() {
    let session = Session::start().await;
    let path = session.write_file("c.txt", "old\n");
    let mut agent = session.connect().await;
    for (tab, how) in [
        ("by-command", "vim.cmd('PiIde reject')"),
        ("by-closing", "vim.cmd('quit')"),
    ] {
        let id = agent.open_diff(&path, "new\n", tab).await;
        session.wait_diffs(1).await;
        session.exec(how).await;
        assert_eq!(
            texts(&agent.response(&id).await),
            ["DIFF_REJECTED", tab],
            "{how}"
        );
        session.wait_diffs(0).await;
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
    eventually("no plugin buffers left", || async {
        let left = session.lua("return #vim.tbl_filter(function(b) return vim.api.nvim_buf_get_name(b):find('pi%-ide://') ~= nil end, vim.api.nvim_list_bufs())").await;
        (left == 0).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_new_file_shows_an_empty_left_side_and_is_not_created() {
    let session = Session::start().await;
    let path = session.work_dir.join("sub/dir/new.rs");
    let mut agent = session.connect().await;
    let id = agent.open_diff(&path, "fn main() {}\n", "new").await;
    let list = session.wait_diffs(1).await;
    assert_eq!(
        buffer_lines(&session, &list[0]["original_buf"]).await,
        json!([""])
    );
    assert_eq!(
        session
            .lua_with(
                "return vim.bo[...].filetype",
                vec![list[0]["proposed_buf"].clone()]
            )
            .await,
        "rust"
    );
    session.exec("require('pi-ide.diff').accept()").await;
    assert_eq!(
        texts(&agent.response(&id).await),
        ["FILE_SAVED", "fn main() {}\n"]
    );
    assert!(!path.exists());
}

#[tokio::test]
async fn close_tab_rejects_a_pending_diff_and_ignores_unknown_tabs() {
    let session = Session::start().await;
    let path = session.write_file("d.txt", "d\n");
    let mut agent = session.connect().await;
    assert_eq!(
        texts(
            &agent
                .call_tool("close_tab", json!({"tab_name": "never-opened"}))
                .await
        ),
        ["TAB_CLOSED"]
    );
    let id = agent.open_diff(&path, "e\n", "pending").await;
    session.wait_diffs(1).await;
    let close = agent
        .call_tool("close_tab", json!({"tab_name": "pending"}))
        .await;
    assert_eq!(texts(&close), ["TAB_CLOSED"]);
    assert_eq!(
        texts(&agent.response(&id).await),
        ["DIFF_REJECTED", "pending"]
    );
    session.wait_diffs(0).await;
}

#[tokio::test]
async fn two_diffs_at_once_resolve_independently() {
    let session = Session::start().await;
    let a = session.write_file("a.txt", "a\n");
    let b = session.write_file("b.txt", "b\n");
    let mut agent = session.connect().await;
    let id_a = agent.open_diff(&a, "A\n", "tab-a").await;
    let id_b = agent.open_diff(&b, "B\n", "tab-b").await;
    session.wait_diffs(2).await;
    // getDiagnostics is answered while both diffs wait for the person.
    assert!(agent.call_tool("getDiagnostics", json!({})).await["result"].is_object());
    session.exec("require('pi-ide.diff').reject('tab-b')").await;
    assert_eq!(
        texts(&agent.response(&id_b).await),
        ["DIFF_REJECTED", "tab-b"]
    );
    session.exec("require('pi-ide.diff').accept('tab-a')").await;
    assert_eq!(texts(&agent.response(&id_a).await), ["FILE_SAVED", "A\n"]);
}

#[tokio::test]
async fn the_same_tab_name_replaces_the_older_diff() {
    let session = Session::start().await;
    let path = session.write_file("e.txt", "e\n");
    let mut agent = session.connect().await;
    let first = agent.open_diff(&path, "first\n", "same").await;
    session.wait_diffs(1).await;
    let second = agent.open_diff(&path, "second\n", "same").await;
    assert_eq!(texts(&agent.response(&first).await)[0], "DIFF_REJECTED");
    let list = eventually("the second proposal", || async {
        let list = session.wait_diffs(1).await;
        (buffer_lines(&session, &list[0]["proposed_buf"]).await == json!(["second"]))
            .then_some(list)
    })
    .await;
    assert_eq!(list.len(), 1);
    session.exec("require('pi-ide.diff').accept('same')").await;
    assert_eq!(
        texts(&agent.response(&second).await),
        ["FILE_SAVED", "second\n"]
    );
}

#[tokio::test]
async fn a_disconnecting_client_leaves_nothing_behind() {
    let session = Session::start().await;
    let path = session.write_file("f.txt", "f\n");
    session
        .exec(&format!(
            "vim.cmd.edit('{}')",
            session.write_file("mine.txt", "mine\n").display()
        ))
        .await;
    session
        .exec("vim.api.nvim_buf_set_lines(0, 0, -1, false, {'unsaved work'})")
        .await;
    let mut agent = session.connect().await;
    agent.open_diff(&path, "g\n", "orphan").await;
    session.wait_diffs(1).await;
    drop(agent);
    session.wait_diffs(0).await;
    session.wait_clients(0).await;
    eventually("the diff tab to close", || async {
        (session.lua("return #vim.api.nvim_list_tabpages()").await == 1).then_some(())
    })
    .await;
    let mine = session
        .lua("return { vim.api.nvim_buf_get_lines(0, 0, -1, false), vim.bo.modified }")
        .await;
    assert_eq!(mine, json!([["unsaved work"], true]));
}

#[tokio::test]
async fn close_all_closes_only_this_clients_diffs_and_never_the_persons() {
    let session = Session::start().await;
    let path = session.write_file("h.txt", "h\n");
    session.exec("vim.cmd('tabnew'); vim.cmd('diffthis'); vim.cmd('vnew'); vim.cmd('diffthis'); vim.cmd('tabfirst')").await;
    let mut pi = session.connect().await;
    let mut claude = session.connect_claude().await;
    let pi_id = pi.open_diff(&path, "pi\n", "pi-tab").await;
    session.wait_diffs(1).await;
    let claude_id = claude.open_diff(&path, "claude\n", "claude-tab").await;
    session.wait_diffs(2).await;
    assert_eq!(
        texts(&claude.call_tool("closeAllDiffTabs", json!({})).await),
        ["CLOSED_1_DIFF_TABS"]
    );
    assert_eq!(
        texts(&claude.response(&claude_id).await),
        ["DIFF_REJECTED", "claude-tab"]
    );
    let left = session.wait_diffs(1).await;
    assert_eq!(left[0]["tab_name"], "pi-tab");
    session
        .exec("require('pi-ide.diff').reject('pi-tab')")
        .await;
    assert_eq!(texts(&pi.response(&pi_id).await)[0], "DIFF_REJECTED");
    eventually("the person's diff tab to survive", || async {
        let windows_in_diff = session.lua("return #vim.tbl_filter(function(w) return vim.wo[w].diff end, vim.api.nvim_list_wins())").await;
        let tabs = session.lua("return #vim.api.nvim_list_tabpages()").await;
        (windows_in_diff == 2 && tabs == 2).then_some(())
    })
    .await;
}

#[tokio::test]
async fn what_cannot_be_shown_is_rejected_never_an_error() {
    let session = Session::start().await;
    let mut agent = session.connect().await;
    let binary = session.work_dir.join("bin.dat");
    std::fs::write(&binary, b"\x00\x01\x02").unwrap();
    let cases = [
        json!({"old_file_path": "relative.txt", "new_file_path": "relative.txt", "new_file_contents": "x", "tab_name": "rel"}),
        open_diff_args(&session.work_dir, "x", "dir"),
        open_diff_args(&binary, "x", "bin"),
        json!({"new_file_contents": "x", "tab_name": "missing-paths"}),
        json!({"old_file_path": 3, "tab_name": "wrong-type"}),
    ];
    for arguments in cases {
        let reply = agent.call_tool("openDiff", arguments.clone()).await;
        assert!(reply.get("error").is_none(), "{reply}");
        let texts = texts(&reply);
        assert_eq!(texts[0], "DIFF_REJECTED", "{arguments}");
        assert_eq!(texts[1], arguments["tab_name"].as_str().unwrap());
        assert!(
            texts.len() == 3 && !texts[2].is_empty(),
            "a reason is given: {texts:?}"
        );
    }
    assert_eq!(std::fs::read(&binary).unwrap(), b"\x00\x01\x02");
}

#[tokio::test]
async fn unsaved_edits_in_the_target_buffer_are_flagged_in_the_diff() {
    let session = Session::start().await;
    let path = session.write_file("dirty.txt", "disk\n");
    session
        .exec(&format!(
            "vim.cmd.edit('{}'); vim.api.nvim_buf_set_lines(0, 0, -1, false, {{'unsaved'}})",
            path.display()
        ))
        .await;
    let mut agent = session.connect().await;
    let id = agent.open_diff(&path, "agent\n", "dirty").await;
    session.wait_diffs(1).await;
    let winbar = session.lua("return vim.wo.winbar").await;
    assert!(
        winbar
            .as_str()
            .unwrap()
            .starts_with("%#WarningMsg#⚠ your unsaved edits"),
        "{winbar}"
    );
    session.exec("require('pi-ide.diff').reject()").await;
    assert_eq!(texts(&agent.response(&id).await)[0], "DIFF_REJECTED");
}

#[tokio::test]
async fn crlf_files_round_trip_their_line_endings() {
    let session = Session::start().await;
    let path = session.write_file("dos.txt", "a\r\nb\r\n");
    let mut agent = session.connect().await;
    let id = agent.open_diff(&path, "a\r\nc\r\n", "dos").await;
    let list = session.wait_diffs(1).await;
    assert_eq!(
        buffer_lines(&session, &list[0]["proposed_buf"]).await,
        json!(["a", "c"])
    );
    session.exec("require('pi-ide.diff').accept()").await;
    assert_eq!(
        texts(&agent.response(&id).await),
        ["FILE_SAVED", "a\r\nc\r\n"]
    );
}

#[tokio::test]
async fn quitting_neovim_answers_pending_diffs_as_rejected() {
    let session = Session::start().await;
    let path = session.write_file("q.txt", "q\n");
    let mut agent = session.connect().await;
    let id = agent.open_diff(&path, "r\n", "quit").await;
    session.wait_diffs(1).await;
    let _ = session.nvim.command("qa!").await;
    assert_eq!(
        texts(&agent.response(&id).await),
        ["DIFF_REJECTED", "quit", "Neovim is closing"]
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "q\n");
}

#[tokio::test]
async fn large_files_are_diffed_by_the_host_and_drawn_without_diff_mode() {
    let session = Session::start().await;
    let original: String = (0..20_000)
        .map(|i| format!("line {i:05} of a large file\n"))
        .collect();
    let proposal: String = original
        .lines()
        .enumerate()
        .filter(|(i, _)| i % 13 != 5)
        .map(|(i, l)| {
            if i % 7 == 3 {
                format!("{l} changed\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let path = session.write_file("large.txt", &original);
    let mut agent = session.connect().await;
    let id = agent.open_diff(&path, &proposal, "large").await;
    let list = session.wait_diffs(1).await;
    let marks = "local d = require('pi-ide.diff').list()[1]
                 local ns = vim.api.nvim_create_namespace('pi-ide-hunks')
                 return { #vim.api.nvim_buf_get_extmarks(d.original_buf, ns, 0, -1, {}), #vim.api.nvim_buf_get_extmarks(d.proposed_buf, ns, 0, -1, {}) }";
    eventually("every hunk to be drawn", || async {
        let counts = session.lua(marks).await;
        (counts[0].as_u64() > Some(4000) && counts[1].as_u64() > Some(2000)).then_some(())
    })
    .await;
    let diff_mode = session
        .lua_with("return vim.tbl_map(function(w) return vim.wo[w].diff end, vim.api.nvim_tabpage_list_wins(...))", vec![list[0]["tabpage"].clone()])
        .await;
    assert_eq!(diff_mode, json!([false, false]));
    // ]c jumps to the first change; scrolling one side scrolls the other.
    session.input("gg]c").await;
    eventually("]c", || async {
        (session.lua("return vim.fn.line('.')").await == 4).then_some(())
    })
    .await;
    session.input("10001Gzt").await;
    eventually("the other side to follow", || async {
        let tops = session.lua("return vim.tbl_map(function(w) return vim.fn.getwininfo(w)[1].topline end, vim.api.nvim_tabpage_list_wins(0))").await;
        let (left, right) = (tops[0].as_i64().unwrap(), tops[1].as_i64().unwrap());
        // Proposal line 10001 is original line 10834 (every 13th line was deleted).
        (right == 10001 && left == 10834).then_some(())
    })
    .await;
    session.exec("require('pi-ide.diff').accept()").await;
    assert!(texts(&agent.response(&id).await)[1] == proposal);
}
