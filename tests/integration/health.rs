//! `:checkhealth pi-ide` tells what start-up will really do: whether the lock
//! directory can be used, why the host stopped, which binary runs.

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, SystemTime};

use crate::common::{Session, eventually, host_binary, plugin_copy, scratch_dir};

pub async fn health_report(session: &Session) -> String {
    session.exec("vim.cmd('checkhealth pi-ide')").await;
    session
        .lua("return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n')")
        .await
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn checkhealth_reports_a_lock_dir_the_host_cannot_create_and_the_fix() {
    let scratch = scratch_dir("health-lock");
    // Below a regular file: no one can create it, root included.
    std::fs::write(scratch.join("afile"), "").unwrap();
    let lock_dir = scratch.join("afile/locks");
    let session = Session::start_with(&format!("{{ lock_dir = '{}' }}", lock_dir.display())).await;
    let told = eventually("the host to fail", || async {
        let told = session.notifications().await;
        told.iter().find(|m| m.contains("the host exited")).cloned()
    })
    .await;
    assert!(told.contains("Not a directory"), "{told}");
    let report = health_report(&session).await;
    let error = report
        .lines()
        .find(|line| line.contains("ERROR") && line.contains(&lock_dir.display().to_string()))
        .unwrap_or_else(|| panic!("no error naming {}:\n{report}", lock_dir.display()));
    assert!(error.contains("afile"), "{error}");
    for wanted in ["PI_IDE_LOCK_DIR", "lock_dir", "Not a directory"] {
        assert!(report.contains(wanted), "missing {wanted:?} in:\n{report}");
    }
    for unwanted in ["will be created", "auto_start", "OK lock directory"] {
        assert!(!report.contains(unwanted), "{unwanted:?} in:\n{report}");
    }
}

#[tokio::test]
async fn checkhealth_tries_a_missing_lock_dir_in_its_parent_and_leaves_nothing() {
    let scratch = scratch_dir("health-missing");
    let lock_dir = scratch.join("a/b/locks");
    let session = Session::spawn().await;
    session
        .exec(&format!(
            "require('pi-ide').setup({{ auto_start = false, lock_dir = '{}' }})",
            lock_dir.display()
        ))
        .await;
    let report = health_report(&session).await;
    let line = report
        .lines()
        .find(|line| line.contains(&lock_dir.display().to_string()))
        .unwrap_or_else(|| panic!("lock dir not named:\n{report}"));
    assert!(line.contains("OK") && line.contains("writable"), "{line}");
    assert!(
        line.contains(&scratch.display().to_string()),
        "names the parent: {line}"
    );
    assert!(
        !scratch.join("a").exists(),
        "health left directories behind"
    );
}

/// A stand-in release binary answering `--version` like the real one.
fn fake_release(path: &std::path::Path, modified: SystemTime) {
    let version = std::process::Command::new(host_binary())
        .arg("--version")
        .output()
        .unwrap();
    let version = String::from_utf8(version.stdout).unwrap();
    std::fs::write(path, format!("#!/bin/sh\necho '{}'\n", version.trim())).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(modified)
        .unwrap();
}

#[tokio::test]
async fn checkhealth_says_when_the_debug_build_will_run() {
    let copy = plugin_copy("health-bin");
    let debug = copy.join("target/debug/pi-ide");
    let release = copy.join("target/release/pi-ide");
    std::fs::create_dir_all(debug.parent().unwrap()).unwrap();
    std::fs::create_dir_all(release.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(host_binary(), &debug).unwrap();
    let report_for = |copy: std::path::PathBuf| async move {
        let session = Session::spawn_plugin(&copy).await;
        session
            .exec("require('pi-ide').setup({ auto_start = false })")
            .await;
        health_report(&session).await
    };

    // Only a debug build.
    let report = report_for(copy.to_path_buf()).await;
    let warning = report
        .lines()
        .find(|line| line.contains("WARNING") && line.contains("debug"))
        .unwrap_or_else(|| panic!("no debug warning:\n{report}"));
    assert!(warning.contains(&debug.display().to_string()), "{warning}");
    assert!(
        report.contains("cargo build --release --locked"),
        "{report}"
    );

    // A release build older than the debug one (as after `cargo test`).
    fake_release(
        &release,
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000),
    );
    let report = report_for(copy.to_path_buf()).await;
    let warning = report
        .lines()
        .find(|line| line.contains("WARNING") && line.contains("debug"))
        .unwrap_or_else(|| panic!("no debug warning:\n{report}"));
    assert!(warning.contains(&debug.display().to_string()), "{warning}");
    assert!(
        warning.contains(&release.display().to_string()),
        "{warning}"
    );
    assert!(
        report.contains(&format!("bin = \"{}\"", release.display())),
        "{report}"
    );

    // A newer release build runs: nothing to warn about.
    fake_release(&release, SystemTime::now() + Duration::from_secs(3600));
    let report = report_for(copy.to_path_buf()).await;
    assert!(
        report.contains(&format!("OK host binary {}", release.display())),
        "{report}"
    );
    assert!(
        !report
            .lines()
            .any(|l| l.contains("WARNING") && l.contains("debug")),
        "{report}"
    );
}

#[tokio::test]
async fn checkhealth_warns_when_claudecode_nvim_announces_this_neovim_too() {
    let session = Session::start().await;
    eventually("the host to report its Claude lockfile", || async {
        let path = session
            .lua("return require('pi-ide').status().claude_lockfile")
            .await;
        (!path.is_null()).then_some(())
    })
    .await;
    let alone = health_report(&session).await;
    assert!(
        alone.contains("Claude Code finds Neovim through"),
        "{alone}"
    );
    assert!(!alone.contains("claudecode.nvim is loaded too"), "{alone}");
    // What loading coder/claudecode.nvim leaves behind.
    session
        .exec("package.loaded['claudecode'] = {}; vim.api.nvim_create_user_command('ClaudeCode', '', {})")
        .await;
    let both = health_report(&session).await;
    assert!(both.contains("claudecode.nvim is loaded too"), "{both}");
    assert!(both.contains("claude_code = false"), "{both}");
}
