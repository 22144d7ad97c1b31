//! Reviewing a diff as a person does: typing while it arrives, hiding and
//! closing its windows, `:wa`, an agent that leaves, two agents with one
//! tab name.

use serde_json::{Value, json};

use crate::common::{Agent, Session, eventually, texts};

/// Neovim editing `notes.txt`, a pi agent connected, and a second file the
/// agent will propose changes to.
async fn reviewing(opts: &str) -> (Session, Agent, std::path::PathBuf) {
    let session = Session::start_with(opts).await;
    let notes = session.write_file("notes.txt", "notes\n");
    session
        .exec(&format!("vim.cmd.edit('{}')", notes.display()))
        .await;
    let target = session.write_file("target.txt", "one\ntwo\n");
    let agent = session.connect().await;
    session.wait_clients(1).await;
    (session, agent, target)
}

async fn proposal_lines(session: &Session) -> Value {
    session
        .lua("return vim.api.nvim_buf_get_lines(require('pi-ide.diff').list()[1].proposed_buf, 0, -1, false)")
        .await
}

async fn current_buffer_name(session: &Session) -> String {
    session
        .lua("return vim.api.nvim_buf_get_name(0)")
        .await
        .as_str()
        .unwrap()
        .to_owned()
}

/// Waits until Neovim has handled everything queued so far.
async fn settle(session: &Session) {
    session.lua("vim.wait(50); return true").await;
}

#[tokio::test]
async fn keys_typed_in_insert_mode_stay_in_the_file_being_edited() {
    let (session, mut agent, target) = reviewing("{}").await;
    session.input("Abefore ").await;
    eventually("insert mode", || async {
        (session.lua("return vim.api.nvim_get_mode().mode").await == "i").then_some(())
    })
    .await;
    let id = agent.open_diff(&target, "one\n2\n", "typing").await;
    session.wait_diffs(1).await;
    session.input("after").await;
    // "-- INSERT --" would cover a message now: it waits for <Esc>.
    let told = session.notifications().await;
    assert!(
        !told.iter().any(|m| m.contains(":PiIde diff")),
        "told while typing: {told:?}"
    );
    session.input("<Esc>").await;
    settle(&session).await;
    assert_eq!(
        session.lua("return vim.api.nvim_get_current_line()").await,
        "notesbefore after"
    );
    assert!(current_buffer_name(&session).await.ends_with("notes.txt"));
    assert_eq!(proposal_lines(&session).await, json!(["one", "2"]));
    let told = session.notifications().await;
    assert!(
        told.iter().any(|m| m.contains(":PiIde diff")),
        "the person is told a diff waits: {told:?}"
    );
    session.exec("vim.cmd('PiIde diff')").await;
    assert!(current_buffer_name(&session).await.contains("(proposed"));
    assert_eq!(
        session.lua("return vim.api.nvim_get_mode().mode").await,
        "n"
    );
    session.exec("vim.cmd('write')").await;
    assert_eq!(
        texts(&agent.response(&id).await),
        ["FILE_SAVED", "one\n2\n"]
    );
}

#[tokio::test]
async fn keys_typed_in_a_terminal_stay_in_the_terminal() {
    let (session, mut agent, target) = reviewing("{}").await;
    session
        .exec("vim.cmd('terminal cat'); vim.cmd('startinsert')")
        .await;
    eventually("terminal mode", || async {
        (session.lua("return vim.api.nvim_get_mode().mode").await == "t").then_some(())
    })
    .await;
    let id = agent.open_diff(&target, "one\n2\n", "terminal").await;
    session.wait_diffs(1).await;
    session.input("sx").await;
    settle(&session).await;
    assert_eq!(session.lua("return vim.bo.buftype").await, "terminal");
    assert_eq!(
        session.lua("return vim.api.nvim_get_mode().mode").await,
        "t"
    );
    assert_eq!(proposal_lines(&session).await, json!(["one", "2"]));
    session
        .exec("require('pi-ide.diff').reject('terminal')")
        .await;
    assert_eq!(texts(&agent.response(&id).await)[0], "DIFF_REJECTED");
}

#[tokio::test]
async fn an_idle_person_gets_the_diff_focused_unless_told_never() {
    let (session, mut agent, target) = reviewing("{}").await;
    agent.open_diff(&target, "one\n2\n", "idle").await;
    session.wait_diffs(1).await;
    assert!(current_buffer_name(&session).await.contains("(proposed"));

    let (session, mut agent, target) = reviewing("{ diff = { focus = 'never' } }").await;
    agent.open_diff(&target, "one\n2\n", "never").await;
    session.wait_diffs(1).await;
    assert!(current_buffer_name(&session).await.ends_with("notes.txt"));
}

#[tokio::test]
async fn showing_another_buffer_in_the_proposal_window_decides_nothing() {
    let (session, mut agent, target) = reviewing("{}").await;
    let id = agent.open_diff(&target, "one\n2\n", "hidden").await;
    session.wait_diffs(1).await;
    session.exec("vim.cmd('normal! Gox')").await;
    session.exec("vim.cmd.edit('notes.txt')").await;
    settle(&session).await;
    assert_eq!(session.wait_diffs(1).await[0]["tab_name"], "hidden");
    session.exec("vim.cmd('PiIde diff hidden')").await;
    assert!(current_buffer_name(&session).await.contains("(proposed"));
    session.exec("vim.cmd('write')").await;
    assert_eq!(
        texts(&agent.response(&id).await),
        ["FILE_SAVED", "one\n2\nx\n"],
        "the first and only answer carries the person's edit"
    );
}

#[tokio::test]
async fn closing_the_on_disk_side_rejects_or_restores_and_w_there_accepts() {
    let (session, mut agent, target) = reviewing("{}").await;
    let id = agent.open_diff(&target, "one\n2\n", "left").await;
    session.wait_diffs(1).await;
    session.exec("vim.cmd('wincmd h'); vim.cmd('quit')").await;
    assert_eq!(texts(&agent.response(&id).await)[0], "DIFF_REJECTED");
    session.wait_diffs(0).await;

    // An edited proposal asks first; keeping it brings the left side back.
    let id = agent.open_diff(&target, "one\n2\n", "left-edited").await;
    session.wait_diffs(1).await;
    session
        .exec("vim.cmd('normal! Gox'); vim.fn.confirm = function() _G.asked = true; return 2 end")
        .await;
    session.exec("vim.cmd('wincmd h'); vim.cmd('quit')").await;
    eventually("the question and the restored layout", || async {
        let state = session
            .lua("return { asked = _G.asked, wins = #vim.api.nvim_tabpage_list_wins(0) }")
            .await;
        (state == json!({"asked": true, "wins": 2})).then_some(())
    })
    .await;
    session.exec("vim.cmd('wincmd h'); vim.cmd('write')").await;
    assert_eq!(
        texts(&agent.response(&id).await),
        ["FILE_SAVED", "one\n2\nx\n"],
        ":w in the on-disk window accepts the proposal"
    );
}

#[tokio::test]
async fn write_all_leaves_the_diff_pending() {
    let (session, mut agent, target) = reviewing("{}").await;
    let id = agent.open_diff(&target, "one\n2\n", "wall").await;
    let list = session.wait_diffs(1).await;
    let marks = session
        .lua_with(
            "local d = ...; return { vim.b[d.proposed_buf].pi_ide_diff, vim.b[d.original_buf].pi_ide_diff }",
            vec![list[0].clone()],
        )
        .await;
    assert_eq!(marks, json!(["wall", "wall"]));
    session
        .exec("vim.cmd('normal! Gox'); vim.cmd('tabfirst')")
        .await;
    session.exec("vim.cmd('silent! wall')").await;
    settle(&session).await;
    assert_eq!(session.wait_diffs(1).await[0]["tab_name"], "wall");
    session.exec("require('pi-ide.diff').accept('wall')").await;
    assert_eq!(
        texts(&agent.response(&id).await),
        ["FILE_SAVED", "one\n2\nx\n"]
    );
}

#[tokio::test]
async fn an_agent_leaving_keeps_the_persons_edits() {
    let (session, mut agent, target) = reviewing("{}").await;
    agent.open_diff(&target, "one\n2\n", "gone").await;
    session.wait_diffs(1).await;
    session.exec("vim.cmd('normal! Gomine')").await;
    drop(agent);
    session.wait_diffs(0).await;
    let kept = eventually("a buffer with the person's edits", || async {
        let found = session
            .lua(
                "for _, b in ipairs(vim.api.nvim_list_bufs()) do
                   if vim.api.nvim_buf_get_name(b):find('your edits', 1, true) then
                     return vim.api.nvim_buf_get_lines(b, 0, -1, false)
                   end
                 end",
            )
            .await;
        (!found.is_null()).then_some(found)
    })
    .await;
    assert_eq!(kept, json!(["one", "2", "mine"]));
    let told = session.notifications().await;
    assert!(
        told.iter()
            .any(|m| m.contains("disconnected") && m.contains("your edits")),
        "{told:?}"
    );
}

#[tokio::test]
async fn one_tab_name_names_one_diff_across_agents() {
    let (session, mut first, target) = reviewing("{}").await;
    let mut second = session.connect().await;
    let older = first.open_diff(&target, "one\nfirst\n", "shared").await;
    session.wait_diffs(1).await;
    let newer = second.open_diff(&target, "one\nsecond\n", "shared").await;
    let reply = first.response(&older).await;
    assert_eq!(texts(&reply)[0], "DIFF_REJECTED");
    assert!(texts(&reply)[2].contains("replaced"), "{reply}");
    eventually("the newer diff alone", || async {
        let list = session.lua("return require('pi-ide.diff').list()").await;
        let one = list.as_array().is_some_and(|l| l.len() == 1);
        (one && proposal_lines(&session).await == json!(["one", "second"])).then_some(())
    })
    .await;
    session
        .exec("require('pi-ide.diff').accept('shared')")
        .await;
    assert_eq!(
        texts(&second.response(&newer).await),
        ["FILE_SAVED", "one\nsecond\n"]
    );
}

#[tokio::test]
async fn the_winbar_leads_with_the_keys_as_typed_and_names_the_tab() {
    let session = Session::spawn().await;
    session
        .exec(&format!(
            "vim.g.mapleader = ' '; require('pi-ide').setup({{ bin = '{}' }})",
            crate::common::host_binary().display()
        ))
        .await;
    let target = session.write_file("bar.txt", "one\n");
    let mut agent = session.connect().await;
    agent.open_diff(&target, "two\n", "edit-bar").await;
    session.wait_diffs(1).await;
    let winbar = session.lua("return vim.wo.winbar").await;
    let winbar = winbar.as_str().unwrap();
    assert!(
        winbar.starts_with("<Space>aa/:w accept · <Space>ad/:q reject"),
        "{winbar}"
    );
    assert!(winbar.contains("edit-bar"), "{winbar}");
}
