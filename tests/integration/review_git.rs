//! Reviews (the context/review socket) and git: the host reads each file's HEAD version, a
//! few `git show` at a time, while Neovim stays free (a stand-in `git` on
//! PATH that waits until the test releases it); and a review of more files
//! than a review takes is refused with a reason the agent gets.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use crate::common::{DEADLINE, Session, eventually, host_binary, scratch_dir};

/// pi's side of the context socket, as far as reviews need it.
struct Pi {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
}

impl Pi {
    async fn connect(session: &Session) -> Pi {
        let path = session.work_dir.join(".pi/ide/nvim.sock");
        let stream = eventually("the context socket", || async {
            UnixStream::connect(&path).await.ok()
        })
        .await;
        let (reader, writer) = stream.into_split();
        Pi {
            reader: BufReader::new(reader),
            writer,
        }
    }

    async fn send(&mut self, message: &Value) {
        let line = format!("{message}\n");
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }

    /// The next `reviewResult`, skipping `hello` and context updates.
    async fn review_result(&mut self) -> Value {
        loop {
            let mut line = String::new();
            let read = tokio::time::timeout(DEADLINE, self.reader.read_line(&mut line)).await;
            assert!(
                matches!(read, Ok(Ok(n)) if n > 0),
                "no reviewResult: {read:?}"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["type"] == "reviewResult" {
                return message;
            }
        }
    }
}

/// Neovim with the plugin set up after `PATH` got `bin` first (the host
/// inherits it).
async fn session_with_path(bin: &Path) -> Session {
    let session = Session::spawn().await;
    session
        .exec(&format!(
            "vim.env.PATH = {bin:?} .. ':' .. vim.env.PATH
             require('pi-ide').setup({{ bin = {host:?} }})",
            bin = bin.to_str().unwrap(),
            host = host_binary().to_str().unwrap(),
        ))
        .await;
    session
}

fn real_git() -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join("git"))
        .find(|git| git.is_file())
        .expect("git on PATH")
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new(real_git())
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A `git` that notes its pid in `marks/running.<pid>`, waits until
/// `marks/release` exists, then runs the real git.
fn waiting_git(bin: &Path, marks: &Path) {
    let script = format!(
        "#!/bin/sh\ntouch '{marks}/running.'$$\nwhile [ ! -e '{marks}/release' ]; do sleep 0.02; done\n\
         rm -f '{marks}/running.'$$\nexec '{git}' \"$@\"\n",
        marks = marks.display(),
        git = real_git().display(),
    );
    let path = bin.join("git");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// How many stand-in gits are alive now (not killed, not exited).
fn running(marks: &Path) -> usize {
    std::fs::read_dir(marks)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_prefix("running.")?
                .parse::<u32>()
                .ok()
        })
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                !stat
                    .rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
        })
        .count()
}

#[tokio::test]
async fn git_for_a_review_runs_in_the_host_a_few_at_a_time_while_neovim_answers() {
    let bin = scratch_dir("git-bin");
    let marks = scratch_dir("git-marks");
    waiting_git(&bin, &marks);
    let session = session_with_path(&bin).await;
    let files = ["a.txt", "b.txt", "c.txt"];
    git(&session.work_dir, &["init", "-q"]);
    for file in files {
        session.write_file(file, &format!("{file} at HEAD\n"));
    }
    git(&session.work_dir, &["add", "."]);
    git(&session.work_dir, &["commit", "-q", "-m", "start"]);
    for file in files {
        session.write_file(file, &format!("{file} changed\n"));
    }
    let mut pi = Pi::connect(&session).await;
    pi.send(&serde_json::json!({"files": files})).await;

    eventually("two git runs at once", || async {
        (running(&marks) >= 2).then_some(())
    })
    .await;
    session
        .exec("_G.probe = false; vim.schedule(function() _G.probe = true end)")
        .await;
    eventually(
        "Neovim to run a scheduled callback while git runs",
        || async { (session.lua("return _G.probe").await == true).then_some(()) },
    )
    .await;
    assert!(
        running(&marks) >= 1,
        "git was still running when Neovim answered"
    );
    std::fs::write(marks.join("release"), "").unwrap();

    let heads = eventually("the review with each file's HEAD version", || async {
        let heads = session
            .lua(
                "local found = {}
                 for _, b in ipairs(vim.api.nvim_list_bufs()) do
                   local file = vim.api.nvim_buf_get_name(b):match('/HEAD:(.*)$')
                   if file then found[file] = vim.api.nvim_buf_get_lines(b, 0, -1, false) end
                 end
                 return found",
            )
            .await;
        (heads.as_object().map(|o| o.len()) == Some(files.len())).then_some(heads)
    })
    .await;
    for file in files {
        assert_eq!(
            heads[file],
            serde_json::json!([format!("{file} at HEAD")]),
            "{heads}"
        );
    }
    session.exec("require('pi-ide.review').cancel()").await;
    assert_eq!(pi.review_result().await["status"], "cancelled");
}

#[tokio::test]
async fn a_review_of_more_files_than_it_takes_is_refused_naming_the_cap() {
    let session = Session::start().await;
    let files: Vec<String> = (0..101).map(|i| format!("f{i:03}.txt")).collect();
    for file in &files {
        session.write_file(file, "x\n");
    }
    let mut pi = Pi::connect(&session).await;
    pi.send(&serde_json::json!({"files": files})).await;
    let result = pi.review_result().await;
    assert_eq!(result["status"], "cancelled", "{result}");
    let error = result["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("101 files") && error.contains("at most 100"),
        "the agent hears why: {result}"
    );
    let told = eventually("the person told", || async {
        let list = session.notifications().await;
        list.into_iter().find(|m| m.contains("at most 100"))
    })
    .await;
    assert!(told.starts_with("pi-ide: review refused: "), "{told}");
    assert!(
        session
            .lua("return require('pi-ide.review').status()")
            .await
            .is_null(),
        "no review opened"
    );
}
