//! An MCP edit the person accepts after its file changed while the diff
//! was open (they typed in the file's buffer, another program wrote it):
//! shown again on the new text when the changes are apart, kept in a
//! buffer of its own when they overlap; the person is told either way and
//! nothing reaches the disk without their approval.

use serde_json::{Value, json};

use crate::common::{Session, eventually};
use crate::mcp_edits::{command, ok, read, refused, start_client, write_elsewhere};
use crate::mcp_http::endpoint;

/// Records every notification with its title (`vim.notify`'s third argument).
async fn record_titles(session: &Session) {
    session
        .exec(
            "_G.titled = {}
             local recorded = vim.notify
             vim.notify = function(msg, level, opts)
               table.insert(_G.titled, { msg = msg, title = opts and opts.title })
               return recorded(msg, level, opts)
             end",
        )
        .await;
}

/// The first notification containing `needle`, as `{msg, title}`.
async fn told(session: &Session, needle: &str) -> Value {
    let needle = needle.to_owned();
    eventually(&format!("a notification with {needle:?}"), || {
        let needle = needle.clone();
        async move {
            let all = session.lua("return _G.titled").await;
            all.as_array()?
                .iter()
                .find(|n| n["msg"].as_str().is_some_and(|m| m.contains(&needle)))
                .cloned()
        }
    })
    .await
}

/// Both sides of the one open diff, once its proposal holds `line`.
async fn diff_with(session: &Session, line: &str) -> Value {
    let code = format!(
        "local d = require('pi-ide.diff').list()
         if #d ~= 1 or d[1].loading then return nil end
         local proposed = vim.api.nvim_buf_get_lines(d[1].proposed_buf, 0, -1, false)
         if not vim.tbl_contains(proposed, {line:?}) then return nil end
         return {{ vim.api.nvim_buf_get_lines(d[1].original_buf, 0, -1, false), proposed }}"
    );
    eventually(&format!("a diff proposing {line:?}"), || async {
        let sides = session.lua(&code).await;
        (!sides.is_null()).then_some(sides)
    })
    .await
}

#[tokio::test]
async fn an_accepted_edit_of_a_file_changed_apart_is_shown_again_on_the_new_text() {
    let session = Session::start().await;
    record_titles(&session).await;
    let endpoint = endpoint(&session).await;
    let original = "one\ntwo\nthree\nfour\nfive\n";
    for typed in [true, false] {
        session.write_file("a.txt", original);
        session.exec("vim.cmd('silent! %bwipeout!')").await;
        if typed {
            session.exec("vim.cmd.edit('a.txt')").await;
        }
        let calls = json!([{"name": "replace_text_in_file",
            "arguments": {"pathInProject": "a.txt", "oldText": "two", "newText": "TWO"}}]);
        let mut client = start_client(&endpoint, calls, false);
        client.diffs(&session, 1).await;
        if typed {
            // The person types in the file's own buffer, away from the edit.
            session
                .exec("vim.api.nvim_buf_set_lines(vim.fn.bufnr('a.txt'), 4, 5, false, { 'FIVE' })")
                .await;
        } else {
            write_elsewhere(&session, "a.txt", "one\ntwo\nthree\nfour\nFIVE\n");
        }
        command(&session, "PiIde accept").await;

        let notice = told(&session, "a.txt changed while you reviewed the edit").await;
        assert_eq!(notice["title"], "pi-ide", "{notice}");
        assert!(
            notice["msg"]
                .as_str()
                .unwrap()
                .contains("shown again on the new text"),
            "{notice}"
        );
        let sides = diff_with(&session, "FIVE").await;
        assert_eq!(
            sides,
            json!([
                ["one", "two", "three", "four", "FIVE"],
                ["one", "TWO", "three", "four", "FIVE"]
            ]),
            "the edit on the new text (typed: {typed})"
        );
        if typed {
            assert_eq!(read(&session, "a.txt"), original, "nothing written yet");
        }

        command(&session, "PiIde accept").await;
        let result = client.result().await;
        let text = ok(&result);
        assert!(text.contains("shown again on the new text"), "{text}");
        assert_eq!(result["structuredContent"]["shownAgain"], json!(["a.txt"]));
        assert_eq!(
            read(&session, "a.txt"),
            "one\nTWO\nthree\nfour\nFIVE\n",
            "both changes, once accepted (typed: {typed})"
        );
        session.wait_diffs(0).await;
        session.exec("_G.titled = {}").await;
    }
}

#[tokio::test]
async fn an_accepted_edit_of_lines_that_changed_meanwhile_is_kept_and_the_person_told() {
    let session = Session::start().await;
    record_titles(&session).await;
    let endpoint = endpoint(&session).await;
    session.write_file("b.txt", "alpha\nbeta\n");
    session.exec("vim.cmd.edit('b.txt')").await;
    let calls = json!([{"name": "replace_text_in_file",
        "arguments": {"pathInProject": "b.txt", "oldText": "beta", "newText": "gamma"}}]);
    let mut client = start_client(&endpoint, calls, false);
    client.diffs(&session, 1).await;
    // The person edits the proposal, and the same line in the file's buffer.
    session
        .exec(
            "local d = require('pi-ide.diff').list()[1]
             vim.api.nvim_buf_set_lines(d.proposed_buf, 0, 1, false, { 'alpha!' })
             vim.api.nvim_buf_set_lines(vim.fn.bufnr('b.txt'), 1, 2, false, { 'BETA' })",
        )
        .await;
    command(&session, "PiIde accept").await;

    let answer = refused(&client.result().await);
    assert!(
        answer.contains("changed while the edit waited")
            && answer.contains("nothing was written")
            && answer.contains("kept in a Neovim buffer"),
        "the agent hears what happened: {answer}"
    );
    let notice = told(&session, "b.txt changed while you reviewed the edit").await;
    assert_eq!(notice["title"], "pi-ide", "{notice}");
    let msg = notice["msg"].as_str().unwrap();
    assert!(
        msg.contains("in the lines it changes") && msg.contains("kept in buffer"),
        "{msg}"
    );
    let kept = session
        .lua(
            "for _, b in ipairs(vim.api.nvim_list_bufs()) do
               if vim.api.nvim_buf_get_name(b):find('b.txt (accepted edit, not applied)', 1, true) then
                 return { b, vim.api.nvim_buf_get_lines(b, 0, -1, false), vim.bo[b].buflisted }
               end
             end",
        )
        .await;
    assert_eq!(
        kept[1],
        json!(["alpha!", "gamma"]),
        "the accepted text, the person's edits to it included: {kept}"
    );
    assert_eq!(kept[2], true, "listed, so :ls shows it");
    assert!(
        msg.contains(&format!("(:b {})", kept[0])),
        "names the buffer: {msg}"
    );
    assert_eq!(read(&session, "b.txt"), "alpha\nbeta\n", "nothing written");
    let buffer = session
        .lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr('b.txt'), 0, -1, false)")
        .await;
    assert_eq!(
        buffer,
        json!(["alpha", "BETA"]),
        "the person's typing stays"
    );
}
