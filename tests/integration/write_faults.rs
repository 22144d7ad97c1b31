//! Writes under faults, through the real host and Neovim: an accepted MCP
//! edit that meets a file-size limit (as a full disk or a quota would
//! refuse it) keeps the old file and the accepted text; a host killed at
//! any step of a write (a `fault-injection` build stops itself there)
//! leaves the old text or the new, a 50 MB file too.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{DEADLINE, Session, eventually, eventually_within, fresh_dir, host_binary};
use crate::mcp_edits::command;
use crate::mcp_http::endpoint;
use crate::mcp_raw::{message, open_session, read_answer, send_post, tool_call};

/// A host binary that runs with files limited to `bytes` (`ulimit -f`).
fn limited_host(bytes: u64) -> PathBuf {
    let dir = fresh_dir("limited-host");
    let wrapper = dir.join("pi-ide");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec prlimit --fsize={bytes}:{bytes} '{}' \"$@\"\n",
            host_binary().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    wrapper
}

/// Asks for `replace_text_in_file` of `name` and waits (up to `patience`)
/// for its diff; the connection the answer comes on.
async fn propose(
    session: &Session,
    name: &str,
    old: &str,
    new: &str,
    patience: Duration,
) -> tokio::net::TcpStream {
    let (url, token) = endpoint(session).await;
    let id = open_session(&url, &token).await;
    let call = tool_call(
        2,
        "replace_text_in_file",
        json!({"pathInProject": name, "oldText": old, "newText": new}),
    );
    let stream = send_post(&url, &token, Some(&id), &call.to_string()).await;
    eventually_within("the diff to open", patience, || async {
        let list = session.lua("return require('pi-ide.diff').list()").await;
        let list = list.as_array()?.clone();
        (list.len() == 1 && list[0]["loading"] == false).then_some(())
    })
    .await;
    stream
}

#[tokio::test]
async fn an_accepted_edit_past_a_file_size_limit_keeps_the_file_and_the_text() {
    let limit = 64 * 1024;
    let bin = limited_host(limit);
    let session = Session::start_with(&format!("{{ bin = '{}' }}", bin.display())).await;
    let host = session.running_host(0).await;
    let large = "x".repeat(limit as usize * 2);
    // Replaced by a rename, and (two names) rewritten in place.
    for (name, linked) in [("big.txt", false), ("linked.txt", true)] {
        let path = session.write_file(name, "small\n");
        if linked {
            std::fs::hard_link(&path, session.work_dir.join("other-name.txt")).unwrap();
        }
        let mut answer = propose(&session, name, "small", &large, DEADLINE).await;
        command(&session, "PiIde accept").await;

        let text = read_answer(&mut answer).await.expect("the call answered");
        let reply: Value = message(&text).unwrap_or_else(|| panic!("no answer in {text}"));
        let result = &reply["result"];
        assert_eq!(result["isError"], true, "{reply}");
        let said = result["content"][0]["text"].as_str().unwrap();
        assert!(
            said.contains(name)
                && said.contains("keeps its old content")
                && said.contains("kept in a Neovim buffer"),
            "the agent hears which file, why, and that nothing was lost: {said}"
        );
        let now = std::fs::read(&path).unwrap();
        assert!(
            now == b"small\n",
            "{name} keeps its old content: it holds {} bytes",
            now.len()
        );
        let told = eventually("the person to be told", || async {
            let all = session.notifications().await;
            all.into_iter().find(|m| m.contains(name))
        })
        .await;
        assert!(
            told.contains("could not be written")
                && told.contains("size this system allows")
                && told.contains("kept in buffer"),
            "{told}"
        );
        let kept = session
            .lua_with(
                "for _, b in ipairs(vim.api.nvim_list_bufs()) do
                   if vim.api.nvim_buf_get_name(b):find(... .. ' (accepted edit, not applied)', 1, true) then
                     return vim.api.nvim_buf_get_lines(b, 0, -1, false)
                   end
                 end",
                vec![json!(name)],
            )
            .await;
        assert!(kept == json!([large]), "{name}: the accepted text is kept");
    }
    assert_eq!(
        session.running_host(0).await,
        host,
        "the host lives on (no SIGXFSZ)"
    );
    let left: Vec<_> = std::fs::read_dir(&session.work_dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".pi-ide-"))
        .collect();
    assert!(left.is_empty(), "no temporary file left: {left:?}");
}

/// The state of process `pid` (`R`, `S`, `T` stopped, ...).
fn process_state(pid: i64) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// What a crash at `step` of the write must leave.
struct Crash {
    step: &'static str,
    /// The file has a second name (rewritten in place, a copy kept).
    linked: bool,
    lines: usize,
    /// Each line padded to this many bytes.
    width: usize,
    /// How long the diff may take to open, and the write to reach the step.
    patience: Duration,
}

/// Accepts an edit with the host set to stop at `crash.step`, kills it
/// there and checks what is on disk.
async fn crash_at(crash: &Crash) {
    let step = crash.step;
    let work = fresh_dir("crash");
    let session = Session::start_in(
        work.clone(),
        &[("PI_IDE_FAULT_STOP", Path::new(step))],
        "{}",
    )
    .await;
    let line = |n: usize| format!("{:<1$}\n", format!("old line {n}."), crash.width - 1);
    let old: String = (0..crash.lines).map(line).collect();
    let marker = format!("old line {}.", crash.lines / 2);
    let new = old.replacen(&marker, "the new line", 1);
    let path = session.write_file("f.txt", &old);
    if crash.linked {
        std::fs::hard_link(&path, work.join("g.txt")).unwrap();
    }
    let host = session.running_host(0).await;
    let _answer = propose(&session, "f.txt", &marker, "the new line", crash.patience).await;
    command(&session, "PiIde accept").await;
    eventually_within(
        &format!("the host to stop at {step}"),
        crash.patience,
        || async { (process_state(host) == Some('T')).then_some(()) },
    )
    .await;
    // SAFETY: killing the host this session's Neovim started.
    unsafe { libc::kill(host as i32, libc::SIGKILL) };
    eventually("the killed host to be gone", || async {
        (process_state(host).is_none_or(|state| state == 'Z')).then_some(())
    })
    .await;

    let now = std::fs::read(&path).unwrap();
    let whole = now == old.as_bytes() || now == new.as_bytes();
    if crash.linked {
        let other = std::fs::metadata(work.join("g.txt")).unwrap();
        assert_eq!(
            other.ino(),
            std::fs::metadata(&path).unwrap().ino(),
            "{step}: both names are still one file"
        );
        if !whole {
            // Rewritten in place: the copy of the old text is beside it.
            let copies: Vec<Vec<u8>> = std::fs::read_dir(&work)
                .unwrap()
                .flatten()
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(".f.txt.pi-ide-old-")
                })
                .map(|e| std::fs::read(e.path()).unwrap())
                .collect();
            assert_eq!(
                copies,
                vec![old.as_bytes().to_vec()],
                "{step}: cut short in place, so its old text must be beside it"
            );
        }
    } else {
        assert!(
            whole,
            "{step}: the file holds neither the old text nor the new ({} bytes of {} or {})",
            now.len(),
            old.len(),
            new.len()
        );
    }
}

const STEPS: [&str; 6] = [
    "new-opened",
    "new-half-written",
    "new-written",
    "new-synced",
    "renamed",
    "dir-synced",
];

#[tokio::test]
async fn a_host_killed_at_any_step_of_a_write_leaves_the_old_text_or_the_new() {
    for step in STEPS {
        crash_at(&Crash {
            step,
            linked: false,
            lines: 200,
            width: 20,
            patience: DEADLINE,
        })
        .await;
    }
}

#[tokio::test]
async fn a_file_with_two_names_killed_mid_write_keeps_them_and_its_old_text() {
    for step in [
        "old-half-written",
        "backup-kept",
        "truncated",
        "half-rewritten",
        "rewritten",
        "rewrite-synced",
        "backup-removed",
    ] {
        crash_at(&Crash {
            step,
            linked: true,
            lines: 200,
            width: 20,
            patience: DEADLINE,
        })
        .await;
    }
}

#[tokio::test]
async fn a_50_mb_file_killed_mid_write_holds_the_old_text_or_the_new() {
    for step in ["new-half-written"] {
        crash_at(&Crash {
            step,
            linked: false,
            // 50 MB in lines of 1,000 bytes.
            lines: 50_000,
            width: 1_000,
            patience: Duration::from_secs(120),
        })
        .await;
    }
}

#[tokio::test]
async fn a_buffer_written_for_an_accepted_edit_is_synced_whatever_fsync_says() {
    let session = Session::start().await;
    session.write_file("a.txt", "one\n");
    session
        .exec(
            "vim.cmd.edit('a.txt'); vim.o.fsync = false; _G.synced = {}
             vim.api.nvim_create_autocmd('BufWritePost', { callback = function()
               table.insert(_G.synced, vim.o.fsync) end })",
        )
        .await;
    let mut answer = propose(&session, "a.txt", "one", "two", DEADLINE).await;
    command(&session, "PiIde accept").await;
    let text = read_answer(&mut answer).await.expect("the call answered");
    let reply = message(&text).unwrap_or_else(|| panic!("no answer in {text}"));
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert_eq!(
        session.lua("return { _G.synced, vim.o.fsync }").await,
        json!([[true], false]),
        "written with 'fsync' on, the person's setting back after"
    );
}
