//! Faults: nothing lost, nothing left behind.

use serde_json::json;

use crate::common::{Session, eventually, texts};

/// True once `pid` no longer exists: neither running nor a zombie.
fn process_gone_or_reaped(pid: i32) -> bool {
    !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[tokio::test]
async fn a_file_changed_on_disk_while_its_diff_is_open_is_shown_before_accepting() {
    let session = Session::start().await;
    let path = session.write_file("moving.txt", "first\n");
    let mut agent = session.connect().await;
    let id = agent.open_diff(&path, "agent\n", "moving").await;
    session.wait_diffs(1).await;
    std::fs::write(&path, "someone else wrote this\n").unwrap();
    let left = "local d = require('pi-ide.diff').list()[1]; return vim.api.nvim_buf_get_lines(d.original_buf, 0, -1, false)";
    eventually("the left side to show the new disk contents", || async {
        (session.lua(left).await == json!(["someone else wrote this"])).then_some(())
    })
    .await;
    let winbar = session
        .lua("return vim.wo[vim.fn.win_getid(1)].winbar")
        .await;
    assert!(
        winbar.as_str().unwrap().contains("changed on disk"),
        "{winbar}"
    );
    assert!(
        session
            .notifications()
            .await
            .iter()
            .any(|m| m.contains("changed on disk while its diff is open"))
    );
    session.exec("require('pi-ide.diff').reject()").await;
    assert_eq!(texts(&agent.response(&id).await)[0], "DIFF_REJECTED");
}

/// The host names a file it starts watching once, changed or not: a diff
/// whose file nobody touched must not say it changed.
#[tokio::test]
async fn a_diff_whose_file_stays_as_it_was_does_not_say_it_changed() {
    let session = Session::start().await;
    let path = session.write_file("still.txt", "first\n");
    session
        .exec(
            "local paths = require('pi-ide.follow.paths'); local on_changes = paths.on_changes; \
             _G.named = {}; paths.on_changes = function(names) \
             vim.list_extend(_G.named, names); return on_changes(names) end",
        )
        .await;
    let mut agent = session.connect().await;
    let id = agent.open_diff(&path, "agent\n", "still").await;
    session.wait_diffs(1).await;
    let real = path.canonicalize().unwrap();
    eventually("the host to name the newly watched file", || async {
        let named = session.lua("return _G.named").await;
        let named: Vec<String> = serde_json::from_value(named).unwrap_or_default();
        named
            .iter()
            .any(|name| std::path::Path::new(name).canonicalize().ok() == Some(real.clone()))
            .then_some(())
    })
    .await;
    let winbar = session
        .lua("return vim.wo[vim.fn.win_getid(1)].winbar")
        .await;
    assert!(
        !winbar.as_str().unwrap().contains("changed on disk"),
        "{winbar}"
    );
    assert!(
        !session
            .notifications()
            .await
            .iter()
            .any(|m| m.contains("changed on disk"))
    );
    session.exec("require('pi-ide.diff').reject()").await;
    assert_eq!(texts(&agent.response(&id).await)[0], "DIFF_REJECTED");
}

#[tokio::test]
async fn signals_to_neovim_answer_pending_diffs_and_remove_the_lockfile() {
    for signal in [libc::SIGTERM, libc::SIGHUP] {
        let mut session = Session::start().await;
        let path = session.write_file("s.txt", "s\n");
        let (port, _) = session.lockfile().await;
        let mut agent = session.connect().await;
        let id = agent.open_diff(&path, "t\n", "sig").await;
        session.wait_diffs(1).await;
        // SAFETY: signalling the Neovim child this test spawned.
        unsafe { libc::kill(session.child.id().unwrap() as i32, signal) };
        assert_eq!(
            texts(&agent.response(&id).await)[0],
            "DIFF_REJECTED",
            "signal {signal}"
        );
        let _ = session.child.wait().await;
        let file = session.lock_dir.join(format!("{port}.lock"));
        eventually("the lockfile to go", || async {
            (!file.exists()).then_some(())
        })
        .await;
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "s\n");
    }
}

#[tokio::test]
async fn a_killed_neovim_makes_the_host_clean_up_and_exit() {
    let mut session = Session::start().await;
    let (port, _) = session.lockfile().await;
    session.wait_clients(0).await;
    let host = session
        .lua("return require('pi-ide').status().pid")
        .await
        .as_i64()
        .unwrap() as i32;
    // SAFETY: killing the Neovim child this test spawned.
    unsafe { libc::kill(session.child.id().unwrap() as i32, libc::SIGKILL) };
    let _ = session.child.wait().await;
    let file = session.lock_dir.join(format!("{port}.lock"));
    eventually("the host to remove its lockfile", || async {
        (!file.exists()).then_some(())
    })
    .await;
    // SAFETY: signal 0 only checks whether the host process still exists.
    eventually("the host to exit", || async {
        (unsafe { libc::kill(host, 0) } != 0).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_killed_host_leaves_no_zombie() {
    let session = Session::start().await;
    session.wait_clients(0).await;
    let host = session
        .lua("return require('pi-ide').status().pid")
        .await
        .as_i64()
        .unwrap() as i32;
    // SAFETY: killing the host process this test's Neovim started.
    unsafe { libc::kill(host, libc::SIGKILL) };
    eventually("Neovim to reap the host", || async {
        process_gone_or_reaped(host).then_some(())
    })
    .await;
    assert_eq!(
        session.lua("return 1 + 1").await,
        2,
        "Neovim stays responsive"
    );
}
