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
