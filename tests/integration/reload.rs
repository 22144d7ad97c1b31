//! After the agent writes an accepted file, buffers reload without losing
//! the person's unsaved edits.

use serde_json::json;

use crate::common::{Session, eventually, texts};

async fn accept_and_write(session: &Session, path: &std::path::Path, new_text: &str) {
    let mut agent = session.connect().await;
    let id = agent.open_diff(path, new_text, "w").await;
    session.wait_diffs(1).await;
    session.exec("require('pi-ide.diff').accept('w')").await;
    let reply = agent.response(&id).await;
    assert_eq!(texts(&reply)[0], "FILE_SAVED");
    // The agent writes the file, as pi does after FILE_SAVED.
    std::fs::write(path, &texts(&reply)[1]).unwrap();
}

/// Opens `name` in a buffer, accepts `text` for it and waits for the
/// agent's write to reach the buffer; returns the file's path.
async fn edit_and_see_reloaded(session: &Session, name: &str, text: &str) -> std::path::PathBuf {
    let path = session.write_file(name, "old line\n");
    session
        .exec(&format!("vim.cmd.edit('{}')", path.display()))
        .await;
    accept_and_write(session, &path, text).await;
    let expected: Vec<&str> = text.lines().collect();
    eventually("the buffer to reload", || async {
        let lines = session
            .lua(&format!(
                "return vim.api.nvim_buf_get_lines(vim.fn.bufnr('{}'), 0, -1, false)",
                path.display()
            ))
            .await;
        (lines == json!(expected)).then_some(())
    })
    .await;
    path
}

#[tokio::test]
async fn a_clean_buffer_reloads_without_a_prompt() {
    let session = Session::start().await;
    let path = edit_and_see_reloaded(&session, "clean.txt", "new line\nsecond\n").await;
    assert_eq!(
        session
            .lua(&format!(
                "return vim.bo[vim.fn.bufnr('{}')].modified",
                path.display()
            ))
            .await,
        false
    );
}

/// Without `watch_files` the host's watch still covers the one file an
/// agent writes after an accept.
#[tokio::test]
async fn without_watch_files_an_accepted_file_reloads_when_the_agent_writes_it() {
    let session = Session::start_with("{ watch_files = false }").await;
    edit_and_see_reloaded(&session, "unwatched.txt", "new line\n").await;
}

#[tokio::test]
async fn unsaved_edits_are_kept_and_the_person_is_told() {
    let session = Session::start().await;
    let path = session.write_file("dirty.txt", "old line\n");
    session
        .exec(&format!(
            "vim.cmd.edit('{}'); vim.api.nvim_buf_set_lines(0, 0, -1, false, {{'my edit'}})",
            path.display()
        ))
        .await;
    accept_and_write(&session, &path, "agent text\n").await;
    eventually("the person to be told", || async {
        session
            .notifications()
            .await
            .iter()
            .any(|m| m.contains("unsaved changes are kept"))
            .then_some(())
    })
    .await;
    let buffer = session.lua(&format!("local b = vim.fn.bufnr('{}'); return {{ vim.api.nvim_buf_get_lines(b, 0, -1, false), vim.bo[b].modified }}", path.display())).await;
    assert_eq!(buffer, json!([["my edit"], true]));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "agent text\n");
}
