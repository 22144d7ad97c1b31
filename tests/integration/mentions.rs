//! At-mentions: `:PiIde send` and `<Plug>(PiIdeSend)` put `@file#Lx-y` into
//! Claude Code's input box (`at_mentioned`, 0-based lines).

use serde_json::json;

use crate::common::Session;

/// Neovim editing a ten-line file.
async fn editing() -> (Session, std::path::PathBuf) {
    let session = Session::start().await;
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    let path = session.write_file("mentioned.txt", &text);
    session
        .exec(&format!("vim.cmd.edit('{}')", path.display()))
        .await;
    (session, path)
}

#[tokio::test]
async fn a_visual_range_reaches_claude_with_zero_based_lines() {
    let (session, path) = editing().await;
    let mut claude = session.connect_claude().await;
    session.wait_clients(1).await;
    session.input("2GVjj:PiIde send<CR>").await;
    let mention = claude.notification("at_mentioned", |_| true).await;
    assert_eq!(
        mention,
        json!({"filePath": path.to_str().unwrap(), "lineStart": 1, "lineEnd": 3})
    );
}

#[tokio::test]
async fn the_plug_map_sends_the_current_line() {
    let (session, path) = editing().await;
    let mut claude = session.connect_claude().await;
    session.wait_clients(1).await;
    session
        .exec("vim.keymap.set('n', '<F5>', '<Plug>(PiIdeSend)'); vim.api.nvim_win_set_cursor(0, {5, 0})")
        .await;
    session.input("<F5>").await;
    let mention = claude.notification("at_mentioned", |_| true).await;
    assert_eq!(
        mention,
        json!({"filePath": path.to_str().unwrap(), "lineStart": 4, "lineEnd": 4})
    );
}

#[tokio::test]
async fn a_mention_made_before_claude_connects_waits_for_it() {
    let (session, path) = editing().await;
    session
        .lua_with(
            "return require('pi-ide').mention(..., 3, 3)",
            vec![json!(path.to_str().unwrap())],
        )
        .await;
    session.exec("vim.cmd('PiIde status')").await;
    let told = session.notifications().await;
    assert!(
        told.iter()
            .any(|m| m.contains("mention mentioned.txt#L3 waits for Claude Code")),
        "{told:?}"
    );
    let mut claude = session.connect_claude().await;
    let mention = claude.notification("at_mentioned", |_| true).await;
    assert_eq!(
        mention,
        json!({"filePath": path.to_str().unwrap(), "lineStart": 2, "lineEnd": 2})
    );
}

#[tokio::test]
async fn with_only_pi_connected_the_person_is_told_and_nothing_is_sent() {
    let (session, _) = editing().await;
    let mut pi = session.connect().await;
    session.wait_clients(1).await;
    session.exec("vim.cmd('PiIde send')").await;
    let told = session.notifications().await;
    assert!(
        told.iter().any(|m| m.contains("pi has no at-mentions")),
        "{told:?}"
    );
    // The next thing pi hears is a request we make now, not an at-mention.
    let reply = pi.request("tools/list", json!({})).await;
    assert!(reply["result"]["tools"].is_array());
    assert!(
        !pi.backlog().iter().any(|m| m["method"] == "at_mentioned"),
        "{:?}",
        pi.backlog()
    );
}

#[tokio::test]
async fn send_in_a_file_explorer_mentions_the_file_under_the_cursor() {
    let (session, path) = editing().await;
    let mut claude = session.connect_claude().await;
    session.wait_clients(1).await;
    let dir = path.parent().unwrap().to_str().unwrap().to_owned();
    session
        .exec(&format!(
            "vim.cmd.enew(); vim.api.nvim_buf_set_lines(0, 0, -1, false, {{ '../', 'mentioned.txt' }})
             vim.b.netrw_curdir = '{dir}'; vim.bo.filetype = 'netrw'; vim.api.nvim_win_set_cursor(0, {{2, 3}})"
        ))
        .await;
    session.exec("vim.cmd('PiIde send')").await;
    let mention = claude.notification("at_mentioned", |_| true).await;
    assert_eq!(mention, json!({"filePath": path.to_str().unwrap()}));
}
