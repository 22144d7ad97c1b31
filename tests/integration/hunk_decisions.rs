//! Deciding a diff one hunk at a time with the keys a person uses.

use serde_json::{Value, json};

use crate::common::{Agent, Session, eventually, texts};

const DISK: &str = "a\nb\nc\nd\ne\n";
const PROPOSAL: &str = "a\nB\nc\nD\ne\n";

/// A diff of two hunks (lines 2 and 4), focused, cursor in the proposal.
async fn two_hunks() -> (Session, Agent, Value) {
    let session = Session::start().await;
    let path = session.write_file("hunks.txt", DISK);
    let mut agent = session.connect().await;
    let id = agent.open_diff(&path, PROPOSAL, "hunks").await;
    session.wait_diffs(1).await;
    (session, agent, id)
}

async fn lines(session: &Session, side: &str) -> Value {
    session
        .lua(&format!(
            "return vim.api.nvim_buf_get_lines(require('pi-ide.diff').list()[1].{side}, 0, -1, false)"
        ))
        .await
}

async fn keys_at(session: &Session, row: u64, keys: &str) {
    session
        .exec(&format!("vim.api.nvim_win_set_cursor(0, {{{row}, 0}})"))
        .await;
    session.input(keys).await;
    session.lua("return 1").await;
}

#[tokio::test]
async fn accepting_one_hunk_and_rejecting_the_other_answers_with_the_result() {
    let (session, mut agent, id) = two_hunks().await;
    keys_at(&session, 2, "ga").await;
    eventually("the accepted hunk on the left", || async {
        (lines(&session, "original_buf").await == json!(["a", "B", "c", "d", "e"])).then_some(())
    })
    .await;
    assert_eq!(
        session.wait_diffs(1).await.len(),
        1,
        "one hunk is still open"
    );
    keys_at(&session, 4, "gr").await;
    assert_eq!(
        texts(&agent.response(&id).await),
        ["FILE_SAVED", "a\nB\nc\nd\ne\n"]
    );
}

#[tokio::test]
async fn rejecting_every_hunk_rejects_the_diff() {
    let (session, mut agent, id) = two_hunks().await;
    keys_at(&session, 2, "gr").await;
    keys_at(&session, 4, "gr").await;
    assert_eq!(texts(&agent.response(&id).await)[0], "DIFF_REJECTED");
}

#[tokio::test]
async fn undo_takes_a_hunk_decision_back() {
    let (session, mut agent, id) = two_hunks().await;
    keys_at(&session, 2, "gr").await;
    assert_eq!(
        lines(&session, "proposed_buf").await,
        json!(["a", "b", "c", "D", "e"])
    );
    session.input("u").await;
    eventually("the agent's hunk back", || async {
        (lines(&session, "proposed_buf").await == json!(["a", "B", "c", "D", "e"])).then_some(())
    })
    .await;
    keys_at(&session, 4, "ga").await;
    session.exec("vim.cmd('wincmd h')").await;
    session.input("u").await;
    eventually("the accepted hunk taken back on the left", || async {
        (lines(&session, "original_buf").await == json!(["a", "b", "c", "d", "e"])).then_some(())
    })
    .await;
    session.exec("vim.cmd('wincmd l'); vim.cmd('write')").await;
    assert_eq!(texts(&agent.response(&id).await), ["FILE_SAVED", PROPOSAL]);
}

#[tokio::test]
async fn hunk_keys_work_from_the_on_disk_window_too() {
    let (session, mut agent, id) = two_hunks().await;
    session.exec("vim.cmd('wincmd h')").await;
    keys_at(&session, 2, "ga").await;
    keys_at(&session, 4, "ga").await;
    assert_eq!(texts(&agent.response(&id).await), ["FILE_SAVED", PROPOSAL]);
}

#[tokio::test]
async fn hunks_are_decided_in_the_large_view_too() {
    let session = Session::start().await;
    let disk: String = (0..30_000).map(|i| format!("line {i}\n")).collect();
    let proposal = disk.replacen("line 100\n", "CHANGED 100\n", 1).replacen(
        "line 20000\n",
        "CHANGED 20000\n",
        1,
    );
    let path = session.write_file("large.txt", &disk);
    let mut agent = session.connect().await;
    let id = agent.open_diff(&path, &proposal, "large-hunks").await;
    session.wait_diffs(1).await;
    assert!(
        session
            .lua("return vim.wo[vim.fn.win_getid(1)].winbar")
            .await
            .as_str()
            .unwrap()
            .contains("large-file view")
    );
    keys_at(&session, 101, "ga").await;
    keys_at(&session, 20_001, "gr").await;
    let reply = agent.response(&id).await;
    assert_eq!(texts(&reply)[0], "FILE_SAVED");
    assert_eq!(
        texts(&reply)[1],
        disk.replacen("line 100\n", "CHANGED 100\n", 1)
    );
}

#[tokio::test]
async fn rejecting_every_hunk_of_a_large_view_rejects_the_diff() {
    let session = Session::start().await;
    let disk: String = (0..30_000).map(|i| format!("line {i}\n")).collect();
    let proposal = disk.replacen("line 100\n", "CHANGED 100\n", 1).replacen(
        "line 20000\n",
        "CHANGED 20000\n",
        1,
    );
    let path = session.write_file("large.txt", &disk);
    let mut agent = session.connect().await;
    let id = agent.open_diff(&path, &proposal, "large-rejected").await;
    session.wait_diffs(1).await;
    eventually("the large view", || async {
        let hunks = session
            .lua("return require('pi-ide.diff.hunks').hunks(require('pi-ide.diff').list()[1].proposed_buf)")
            .await;
        (hunks.as_array().map(Vec::len) == Some(2)).then_some(())
    })
    .await;
    // The proposal is back to the file on disk: nothing to save.
    keys_at(&session, 20_001, "gr").await;
    keys_at(&session, 101, "gr").await;
    assert_eq!(texts(&agent.response(&id).await)[0], "DIFF_REJECTED");
}

#[tokio::test]
async fn a_large_view_comes_back_whole_after_its_proposal_was_hidden() {
    let session = Session::start().await;
    let disk: String = (0..30_000).map(|i| format!("line {i}\n")).collect();
    let path = session.write_file("large.txt", &disk);
    let mut agent = session.connect().await;
    let id = agent
        .open_diff(
            &path,
            &disk.replacen("line 5\n", "five\n", 1),
            "hidden-large",
        )
        .await;
    session.wait_diffs(1).await;
    session.exec("vim.cmd.enew()").await;
    session.exec("vim.cmd('PiIde diff hidden-large')").await;
    let windows = session
        .lua("return vim.tbl_map(function(w) return { vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)), vim.wo[w].wrap } end, vim.api.nvim_tabpage_list_wins(0))")
        .await;
    let windows = windows.as_array().unwrap();
    assert_eq!(windows.len(), 2, "{windows:?}");
    assert!(windows[1][0].as_str().unwrap().contains("(proposed"));
    assert_eq!(windows[1][1], false, "the large view's options are back");
    session.exec("vim.cmd('write')").await;
    assert_eq!(texts(&agent.response(&id).await)[0], "FILE_SAVED");
}
