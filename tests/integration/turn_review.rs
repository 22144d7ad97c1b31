//! `:PiIde changes`: every file changed since the baseline, whoever changed
//! it, reviewed in the two-pane diff and written back as decided. An agent
//! terminal's own shell makes the changes here; the host takes the
//! baseline as the agent starts.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{Scratch, Session, eventually, fresh_dir, git, scratch_dir};

const CHANGED: &str =
    "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n";

/// A stand-in agent whose shell, once `go` appears in `control`, edits
/// three files of the project it runs in: one new, one deleted, one
/// changed in two places; then writes `done`.
fn shell_agent(control: &Path) -> PathBuf {
    let script = control.join("agent.sh");
    std::fs::write(
        &script,
        format!(
            r#"#!/bin/sh
control='{}'
until [ -e "$control/go" ]; do sleep 0.05; done
printf 'made by the agent\n' > new.txt
rm gone.txt
sed -i -e 's/^line 2$/LINE 2 (agent)/' -e 's/^line 9$/LINE 9 (agent)/' changed.txt
touch "$control/done"
exec sleep 60
"#,
            control.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// What the person's repository shows of itself: its index, HEAD, refs
/// and stash.
fn repository_state(dir: &Path) -> (Vec<u8>, String, String, String) {
    (
        std::fs::read(dir.join(".git/index")).unwrap(),
        git(dir, &["rev-parse", "HEAD"]),
        git(dir, &["for-each-ref"]),
        git(dir, &["stash", "list"]),
    )
}

/// A git project with three files committed, a stash and a staged file.
fn repository() -> PathBuf {
    let dir = fresh_dir("turn-git");
    std::fs::write(dir.join("changed.txt"), CHANGED).unwrap();
    std::fs::write(dir.join("gone.txt"), "to be deleted\n").unwrap();
    std::fs::write(dir.join("mine.txt"), "the person's file\n").unwrap();
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-qm", "start"]);
    std::fs::write(dir.join("stashed.txt"), "stashed\n").unwrap();
    git(&dir, &["stash", "push", "-u", "-q"]);
    std::fs::write(dir.join("staged.txt"), "staged\n").unwrap();
    git(&dir, &["add", "staged.txt"]);
    dir
}

/// The open diffs of the review, by tab name, once `n` are open.
async fn review_diffs(session: &Session, n: usize) -> Vec<Value> {
    let list = session.wait_diffs(n).await;
    assert!(
        list.iter()
            .all(|diff| diff["tab_name"].as_str().unwrap().starts_with("changes:")),
        "{list:?}"
    );
    list
}

/// Goes to the diff `tab_name`, the cursor on `row` of the right side.
async fn at(session: &Session, tab_name: &str, row: u64) {
    session
        .lua_with(
            "require('pi-ide.diff').show(...)
             vim.api.nvim_win_set_cursor(0, { select(2, ...), 0 })",
            vec![json!(tab_name), json!(row)],
        )
        .await;
}

/// Types `keys` and waits until Neovim ran them.
async fn keys(session: &Session, keys: &str) {
    session.input(keys).await;
    session.lua("return 1").await;
}

async fn read(path: PathBuf) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

async fn review_done(session: &Session) -> String {
    eventually("the review's report", || async {
        session
            .notifications()
            .await
            .into_iter()
            .find(|message| message.contains("reviewed:"))
    })
    .await
}

#[tokio::test]
async fn an_agents_shell_edits_are_listed_reviewed_and_written_as_decided() {
    let control: Scratch = scratch_dir("turn-agent");
    let script = shell_agent(&control);
    let work = repository();
    let before = repository_state(&work);
    let session = Session::start_in(
        work,
        &[],
        &format!(
            "{{ agent = {{ claude = {{ cmd = {{ '{}' }} }} }} }}",
            script.display()
        ),
    )
    .await;
    let dir = session.work_dir.clone();
    session.lockfile().await;
    // The person's unsaved edits, in a buffer of a file the agent changes.
    session
        .lua_with(
            "vim.cmd.edit(...)
             vim.api.nvim_buf_set_lines(0, 0, 1, false, { 'my unsaved line 1' })",
            vec![json!(dir.join("changed.txt"))],
        )
        .await;
    session.exec("vim.cmd('PiIde agent claude')").await;
    eventually("the baseline", || async {
        let status = session
            .lua("return require('pi-ide.changes').status()")
            .await;
        status["since"].is_u64().then_some(())
    })
    .await;
    std::fs::write(control.join("go"), "").unwrap();
    eventually("the agent's shell to edit", || async {
        control.join("done").exists().then_some(())
    })
    .await;

    session.exec("vim.cmd('PiIde changes')").await;
    let diffs = review_diffs(&session, 3).await;
    let tabs: Vec<&str> = diffs
        .iter()
        .map(|d| d["tab_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tabs,
        ["changes:changed.txt", "changes:gone.txt", "changes:new.txt"]
    );
    let listed = session
        .lua("return vim.tbl_map(function(i) return i.text end, vim.fn.getqflist())")
        .await;
    assert_eq!(listed, json!(["modified", "deleted", "new"]));
    let told = session.notifications().await;
    assert!(
        told.iter()
            .any(|m| m.contains("3 file(s) changed since")
                && m.contains("1 new, 1 deleted, 1 modified")),
        "{told:?}"
    );
    let bars = session
        .lua(
            "require('pi-ide.diff').show('changes:changed.txt')
             return { vim.wo[vim.fn.win_getid(1)].winbar, vim.wo[vim.fn.win_getid(2)].winbar }",
        )
        .await;
    assert!(bars[0].as_str().unwrap().starts_with("before ("), "{bars}");
    let right = bars[1].as_str().unwrap();
    assert!(
        right.contains("modified · ") && right.contains("revert") && right.contains("changed.txt"),
        "{right}"
    );
    assert!(
        right.contains("your unsaved edits stay in their buffer"),
        "{right}"
    );

    // changed.txt: the hunk at line 2 reverted, the one at line 9 kept.
    at(&session, "changes:changed.txt", 2).await;
    keys(&session, "gr").await;
    at(&session, "changes:changed.txt", 9).await;
    keys(&session, "ga").await;
    // The new file kept, the deletion kept.
    at(&session, "changes:new.txt", 1).await;
    session.exec("vim.cmd('write')").await;
    at(&session, "changes:gone.txt", 1).await;
    session.exec("vim.cmd('write')").await;

    let report = review_done(&session).await;
    assert!(report.contains("changed.txt: kept as decided"), "{report}");
    assert!(
        report.contains("your unsaved edits in its buffer are untouched"),
        "{report}"
    );
    assert_eq!(
        read(dir.join("changed.txt")).await.unwrap(),
        CHANGED.replace("line 9\n", "LINE 9 (agent)\n")
    );
    assert_eq!(
        read(dir.join("new.txt")).await.unwrap(),
        "made by the agent\n"
    );
    assert!(!dir.join("gone.txt").exists());
    let buffer = session
        .lua_with(
            "local buf = vim.fn.bufnr(...)
             return { lines = vim.api.nvim_buf_get_lines(buf, 0, 2, false), modified = vim.bo[buf].modified }",
            vec![json!(dir.join("changed.txt"))],
        )
        .await;
    assert_eq!(
        buffer,
        json!({"lines": ["my unsaved line 1", "line 2"], "modified": true}),
        "the person's unsaved buffer is untouched"
    );
    assert!(
        repository_state(&dir) == before,
        "the person's index, HEAD, refs or stash changed: {}",
        git(&dir, &["status", "--short"])
    );

    // Decided files are settled: nothing is listed again.
    session.exec("vim.cmd('PiIde changes')").await;
    eventually("nothing changed since", || async {
        session
            .notifications()
            .await
            .iter()
            .any(|m| m.contains("no file changed since"))
            .then_some(())
    })
    .await;
}

#[tokio::test]
async fn outside_git_a_deleted_file_is_restored_a_new_one_removed_and_a_change_reverted() {
    let session = Session::start().await;
    let dir = session.work_dir.clone();
    assert!(!dir.join(".git").exists());
    std::fs::write(dir.join("changed.txt"), CHANGED).unwrap();
    std::fs::write(dir.join("gone.sh"), "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(dir.join("gone.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    session.lockfile().await;
    session
        .exec("_G.started = nil; require('pi-ide.changes').start({ on_ready = function(r) _G.started = r end })")
        .await;
    let started = eventually("the baseline", || async {
        let started = session.lua("return _G.started").await;
        started.is_object().then_some(started)
    })
    .await;
    assert_eq!(started["ok"], true, "{started}");
    assert_eq!(started["git"], false);
    // Whoever changes them: here, the test itself.
    std::fs::write(
        dir.join("changed.txt"),
        CHANGED.replace("line 5\n", "FIVE\n"),
    )
    .unwrap();
    std::fs::remove_file(dir.join("gone.sh")).unwrap();
    std::fs::create_dir_all(dir.join("made")).unwrap();
    std::fs::write(dir.join("made/new.txt"), "new\n").unwrap();

    session.exec("vim.cmd('PiIde changes')").await;
    review_diffs(&session, 3).await;
    for tab in [
        "changes:changed.txt",
        "changes:gone.sh",
        "changes:made/new.txt",
    ] {
        session
            .lua_with(
                "return require('pi-ide.diff').reject(...)",
                vec![json!(tab)],
            )
            .await;
    }
    let report = review_done(&session).await;
    assert!(report.contains("gone.sh: restored"), "{report}");
    assert!(report.contains("made/new.txt: removed"), "{report}");
    assert!(report.contains("changed.txt: reverted"), "{report}");
    assert_eq!(read(dir.join("changed.txt")).await.unwrap(), CHANGED);
    assert_eq!(
        read(dir.join("gone.sh")).await.unwrap(),
        "#!/bin/sh\necho hi\n"
    );
    let mode = std::fs::metadata(dir.join("gone.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o100, 0o100, "restored executable");
    assert!(!dir.join("made/new.txt").exists());
    assert!(
        !dir.join(".git").exists(),
        "no repository made in the project"
    );
}

#[tokio::test]
async fn without_a_baseline_the_review_says_how_to_take_one() {
    let session = Session::start_with("{ agent = { baseline = false } }").await;
    session.lockfile().await;
    session.exec("vim.cmd('PiIde changes')").await;
    eventually("the advice", || async {
        session
            .notifications()
            .await
            .iter()
            .any(|m| m.contains("no baseline of this project yet: :PiIde changes start"))
            .then_some(())
    })
    .await;
}
