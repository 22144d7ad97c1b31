//! Claude Code finds Neovim in its own lock directory: the same server
//! announced there, with the same hygiene as pi's lockfile.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{Session, eventually};

/// `$CLAUDE_CONFIG_DIR/ide` of the session's Neovim.
fn claude_dir(session: &Session) -> PathBuf {
    session.state_dir.join("claude/ide")
}

/// The single lockfile in `dir`, once it is there.
async fn single_lockfile(dir: &Path) -> (PathBuf, Value) {
    eventually("a lockfile in Claude's directory", || async {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|x| x == "lock"))
            .collect();
        (files.len() == 1).then(|| {
            let path = files.remove(0);
            let body = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            (path, body)
        })
    })
    .await
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

async fn is_gone(path: &Path) {
    eventually(&format!("{} removed", path.display()), || async {
        (!path.exists()).then_some(())
    })
    .await;
}

#[tokio::test]
async fn the_server_is_announced_in_claudes_directory_too() {
    let session = Session::start().await;
    let (port, pi_lock) = session.lockfile().await;
    let (path, claude_lock) = single_lockfile(&claude_dir(&session)).await;
    assert_eq!(path, claude_dir(&session).join(format!("{port}.lock")));
    assert_eq!(claude_lock, pi_lock, "same server, same token");
    let nvim_pid = session.lua("return vim.fn.getpid()").await;
    assert_eq!(claude_lock["pid"], nvim_pid);
    assert_eq!(claude_lock["ideName"], "Neovim");
    assert_eq!(claude_lock["transport"], "ws");
    assert_eq!(
        claude_lock["workspaceFolders"],
        json!([session.work_dir.canonicalize().unwrap()])
    );
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&claude_dir(&session)), 0o700);
    // The lockfiles exist before Lua hears that the host started.
    session.wait_clients(0).await;
    assert_eq!(
        session
            .lua("return require('pi-ide').status().claude_lockfile")
            .await,
        path.to_str().unwrap()
    );

    let elsewhere = crate::common::scratch_dir("claude-cd");
    let elsewhere_path = elsewhere.canonicalize().unwrap();
    session
        .exec(&format!("vim.cmd.cd('{}')", elsewhere_path.display()))
        .await;
    eventually("Claude's lockfile to follow :cd", || async {
        let (_, lock) = single_lockfile(&claude_dir(&session)).await;
        (lock["workspaceFolders"] == json!([elsewhere_path])).then_some(())
    })
    .await;

    session.exec("require('pi-ide').stop()").await;
    is_gone(&path).await;
}

#[tokio::test]
async fn a_killed_host_leaves_no_lockfile_for_claude() {
    let session = Session::start().await;
    let (path, _) = single_lockfile(&claude_dir(&session)).await;
    session.wait_clients(0).await;
    session.kill_host_for_good().await;
    is_gone(&path).await;
}

#[tokio::test]
async fn without_claude_config_dir_the_home_directory_is_used() {
    let session = Session::spawn().await;
    let home = crate::common::scratch_dir("home");
    session
        .exec(&format!(
            "vim.env.CLAUDE_CONFIG_DIR = nil; vim.env.HOME = '{}'; require('pi-ide').setup({{ bin = '{}' }})",
            home.display(),
            crate::common::host_binary().display()
        ))
        .await;
    let (path, _) = single_lockfile(&home.join(".claude/ide")).await;
    assert_eq!(mode(&home.join(".claude/ide")), 0o700);
    session.exec("require('pi-ide').stop()").await;
    is_gone(&path).await;
}

#[tokio::test]
async fn claude_code_false_writes_nothing_there() {
    let session = Session::start_with("{ claude_code = false }").await;
    session.lockfile().await;
    eventually("the host to report in", || async {
        (session
            .lua("return require('pi-ide').status().running")
            .await
            == true)
            .then_some(())
    })
    .await;
    assert!(
        session
            .lua("return require('pi-ide').status().claude_lockfile")
            .await
            .is_null()
    );
    assert!(!claude_dir(&session).exists());
}

#[tokio::test]
async fn only_our_own_dead_lockfiles_are_cleaned_from_claudes_directory() {
    let session = Session::spawn().await;
    let dir = claude_dir(&session);
    std::fs::create_dir_all(&dir).unwrap();
    let lock = |pid: u32, ide: &str| {
        json!({"pid": pid, "workspaceFolders": ["/w"], "ideName": ide, "transport": "ws", "authToken": "t"})
            .to_string()
    };
    std::fs::write(dir.join("1.lock"), lock(999_999_999, "Neovim")).unwrap();
    std::fs::write(dir.join("2.lock"), lock(999_999_999, "Visual Studio Code")).unwrap();
    std::fs::write(dir.join("3.lock"), "/some/workspace\n").unwrap();
    std::fs::write(dir.join("4.lock"), lock(std::process::id(), "Neovim")).unwrap();
    session
        .exec(&format!(
            "require('pi-ide').setup({{ bin = '{}' }})",
            crate::common::host_binary().display()
        ))
        .await;
    let (port, _) = session.lockfile().await;
    eventually("our lockfile in Claude's directory", || async {
        dir.join(format!("{port}.lock")).exists().then_some(())
    })
    .await;
    assert!(!dir.join("1.lock").exists(), "ours, dead: removed");
    for kept in ["2.lock", "3.lock", "4.lock"] {
        assert!(
            dir.join(kept).exists(),
            "{kept} belongs to someone else or is alive"
        );
    }
}
