//! Start, lockfile, stop, exit, stale cleanup, several editors side by side.

use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};

use crate::common::{Session, eventually};

#[tokio::test]
async fn lockfile_has_the_contract_fields_and_private_permissions() {
    let session = Session::start().await;
    let (port, lock) = session.lockfile().await;
    let nvim_pid = session.lua("return vim.fn.getpid()").await;
    assert_eq!(lock["pid"], nvim_pid, "pid is Neovim's, a JSON number");
    assert!(lock["pid"].is_u64());
    assert_eq!(
        lock["workspaceFolders"],
        json!([session.work_dir.canonicalize().unwrap()])
    );
    assert_eq!(lock["ideName"], "Neovim");
    assert_eq!(lock["transport"], "ws");
    let token = lock["authToken"].as_str().unwrap();
    assert!(token.len() >= 32 && token.bytes().all(|b| b.is_ascii_hexdigit()));
    let file = session.lock_dir.join(format!("{port}.lock"));
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(&session.lock_dir)
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o700
    );
    session.wait_clients(0).await;
    let status = session.lua("return require('pi-ide').status()").await;
    assert_eq!(status["port"], port);
    assert_eq!(status["lockfile"], file.to_str().unwrap());
    let log = session.host_log().await;
    assert!(!log.contains(token), "the token never reaches the log");
}

#[tokio::test]
async fn workspace_folder_follows_cd() {
    let session = Session::start().await;
    session.lockfile().await;
    let scratch = crate::common::scratch_dir("cd");
    let elsewhere = scratch.canonicalize().unwrap();
    session
        .exec(&format!("vim.cmd.cd('{}')", elsewhere.display()))
        .await;
    eventually("the lockfile to follow :cd", || async {
        let (_, lock) = session.lockfile().await;
        (lock["workspaceFolders"] == json!([elsewhere])).then_some(())
    })
    .await;
}

#[tokio::test]
async fn stop_removes_the_lockfile_and_start_writes_a_new_one() {
    let session = Session::start().await;
    let (port, _) = session.lockfile().await;
    session.wait_clients(0).await;
    session.exec("vim.cmd('PiIde stop')").await;
    eventually("the lockfile to go", || async {
        (!session.lock_dir.join(format!("{port}.lock")).exists()).then_some(())
    })
    .await;
    session.wait_stopped().await;
    session.exec("vim.cmd('PiIde start')").await;
    let (new_port, _) = session.lockfile().await;
    assert_ne!(new_port, 0);
    assert!(
        session.notifications().await.is_empty(),
        "a clean stop says nothing: {:?}",
        session.notifications().await
    );
}

#[tokio::test]
async fn quitting_neovim_removes_the_lockfile() {
    for quit in ["qa!", "SIGTERM", "SIGHUP"] {
        let mut session = Session::start().await;
        let (port, _) = session.lockfile().await;
        session.wait_clients(0).await;
        let file = session.lock_dir.join(format!("{port}.lock"));
        if quit == "qa!" {
            let _ = session.nvim.command("qa!").await;
        } else {
            let signal = if quit == "SIGTERM" {
                libc::SIGTERM
            } else {
                libc::SIGHUP
            };
            let pid = session.child.id().unwrap() as i32;
            // SAFETY: sending a signal to the Neovim child we spawned.
            unsafe { libc::kill(pid, signal) };
        }
        let _ = session.child.wait().await;
        eventually(&format!("the lockfile to go after {quit}"), || async {
            (!file.exists()).then_some(())
        })
        .await;
    }
}

#[tokio::test]
async fn stale_lockfiles_of_dead_editors_are_removed_on_start() {
    let session = Session::spawn().await;
    let stale = session.lock_dir.join("1.lock");
    let foreign = session.lock_dir.join("2.lock");
    let garbage = session.lock_dir.join("3.lock");
    let dead = json!({"pid": 999_999_999u32, "workspaceFolders": ["/x"], "ideName": "Neovim", "transport": "ws", "authToken": "t"});
    std::fs::write(&stale, dead.to_string()).unwrap();
    std::fs::write(
        &foreign,
        json!({"pid": 999_999_999u32, "ideName": "Other", "authToken": "t"}).to_string(),
    )
    .unwrap();
    std::fs::write(&garbage, "{{{").unwrap();
    session
        .exec(&format!(
            "require('pi-ide').setup({{ bin = '{}' }})",
            env!("CARGO_BIN_EXE_pi-ide")
        ))
        .await;
    session.wait_clients(0).await;
    assert!(!stale.exists(), "dead Neovim's lockfile removed");
    assert!(
        foreign.exists() && garbage.exists(),
        "other files untouched"
    );
}

#[tokio::test]
async fn two_editors_run_side_by_side() {
    let a = Session::start().await;
    let b = Session::start().await;
    let (port_a, lock_a) = a.lockfile().await;
    let (port_b, lock_b) = b.lockfile().await;
    assert_ne!(port_a, port_b);
    assert_ne!(lock_a["authToken"], lock_b["authToken"]);
    let mut agent = a.connect().await;
    assert!(agent.request("tools/list", json!({})).await["result"]["tools"].is_array());
}

/// What `vim.notify` was called with: message, level and title.
async fn notices(session: &Session) -> Vec<Value> {
    session
        .lua("return _G.notified")
        .await
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn a_killed_host_is_reported_with_its_log_and_restarted_once_on_the_same_port() {
    let session = Session::start().await;
    let (port, first_lock) = session.lockfile().await;
    session.wait_clients(0).await;
    let first = session.running_host(0).await;
    let log = session.state_dir.join("nvim/pi-ide.log");
    // SAFETY: killing the host process this test's Neovim started.
    unsafe { libc::kill(first as i32, libc::SIGKILL) };
    let second = session.running_host(first).await;
    let status = session.lua("return require('pi-ide').status()").await;
    assert_eq!(status["port"], port, "the port agents know: {status}");
    let (again, lock) = session.lockfile().await;
    assert_eq!(again, port);
    assert_ne!(
        lock["authToken"], first_lock["authToken"],
        "a new host wrote the lockfile"
    );
    let told = notices(&session).await;
    assert_eq!(told.len(), 1, "{told:?}");
    let message = told[0]["msg"].as_str().unwrap();
    for wanted in [
        "exited unexpectedly",
        "killed by signal 9",
        log.to_str().unwrap(),
        "starting it again",
    ] {
        assert!(message.contains(wanted), "{wanted:?} in {message}");
    }
    assert_eq!(told[0]["level"], 4, "an ERROR");
    assert_eq!(told[0]["title"], "pi-ide");
    let mut agent = session.connect().await;
    assert!(agent.request("tools/list", json!({})).await["result"]["tools"].is_array());
    drop(agent);

    // SAFETY: as above, the restarted host.
    unsafe { libc::kill(second as i32, libc::SIGKILL) };
    session.wait_stopped().await;
    let told = eventually("the second exit to be reported", || async {
        let told = notices(&session).await;
        (told.len() == 2).then_some(told)
    })
    .await;
    let message = told[1]["msg"].as_str().unwrap();
    assert!(
        message.contains("killed by signal 9") && message.contains(":PiIde start"),
        "{message}"
    );
    assert_eq!(
        session.lua("return require('pi-ide.host').channel()").await,
        Value::Null,
        "not restarted twice"
    );
    assert!(!session.lock_dir.join(format!("{port}.lock")).exists());
    session.exec("vim.cmd('PiIde start')").await;
    session.running_host(second).await;
}

#[tokio::test]
async fn a_missing_binary_is_reported_with_the_fix() {
    let session = Session::spawn().await;
    session
        .exec("require('pi-ide').setup({ bin = '/nonexistent/pi-ide' })")
        .await;
    eventually("the missing binary to be reported", || async {
        let told = session.notifications().await;
        told.iter()
            .any(|m| m.contains("not executable") && m.contains("bin"))
            .then_some(())
    })
    .await;
    session.wait_stopped().await;
}

#[tokio::test]
async fn a_host_that_does_not_match_the_lua_seam_is_refused_with_the_fix() {
    let session = Session::start().await;
    session.wait_clients(0).await;
    session
        .exec("require('pi-ide.seam').call('started', { seam = 0, port = 1, lockfile = '/x' })")
        .await;
    let told = session.notifications().await;
    assert!(
        told.iter()
            .any(|m| m.contains("does not match") && m.contains("cargo build --release --locked")),
        "{told:?}"
    );
    session.wait_stopped().await;
}

#[tokio::test]
async fn checkhealth_reports_binary_lock_dir_and_host() {
    let session = Session::start().await;
    session.wait_clients(0).await;
    session.exec("vim.cmd('checkhealth pi-ide')").await;
    let report = session
        .lua("return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n')")
        .await;
    let report = report.as_str().unwrap();
    for wanted in [
        "OK Neovim",
        "OK host binary",
        "OK lock directory",
        "OK host running",
    ] {
        assert!(report.contains(wanted), "missing {wanted:?} in:\n{report}");
    }
    assert!(!report.contains("ERROR"), "{report}");
}

#[tokio::test]
async fn user_events_follow_clients_and_diffs() {
    let session = Session::start().await;
    session.wait_clients(0).await;
    session
        .exec(
            "_G.events = {}
             vim.api.nvim_create_autocmd('User', { pattern = 'PiIde*', callback = function(ev)
               table.insert(_G.events, ev.match)
             end })",
        )
        .await;
    let path = session.write_file("ev.txt", "x\n");
    let mut agent = session.connect().await;
    let id = agent
        .open_diff(
            &path, "y
", "ev",
        )
        .await;
    session.wait_diffs(1).await;
    session.exec("require('pi-ide.diff').reject()").await;
    agent.response(&id).await;
    drop(agent);
    session.wait_clients(0).await;
    session.exec("require('pi-ide').stop()").await;
    let expected = json!([
        "PiIdeClientConnected",
        "PiIdeDiffOpened",
        "PiIdeDiffClosed",
        "PiIdeClientDisconnected",
        "PiIdeStopped"
    ]);
    eventually("the events", || async {
        let events = session.lua("return _G.events").await;
        (events == expected).then_some(())
    })
    .await;
}

#[tokio::test]
async fn the_log_rolls_daily_and_piide_log_opens_the_current_file() {
    let session = Session::start().await;
    let mut agent = session.connect().await;
    agent.request("ping", serde_json::json!({})).await;
    let link = session.state_dir.join("nvim/pi-ide.log");
    let current = crate::common::eventually("the log to name its client", || {
        let link = link.clone();
        async move {
            let text = std::fs::read_to_string(&link).ok()?;
            text.contains("connected (pi)")
                .then(|| std::fs::read_link(&link).ok())
                .flatten()
        }
    })
    .await;
    let name = current.file_name().unwrap().to_str().unwrap().to_owned();
    let today = session.lua("return os.date('!%Y-%m-%d')").await;
    assert_eq!(name, format!("pi-ide.{}.log", today.as_str().unwrap()));
    session.exec("vim.cmd('PiIde log')").await;
    let opened = session.lua("return vim.api.nvim_buf_get_name(0)").await;
    assert_eq!(
        std::path::Path::new(opened.as_str().unwrap())
            .file_name()
            .unwrap(),
        name.as_str()
    );
}
