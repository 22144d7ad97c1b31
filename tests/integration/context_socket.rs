//! pi's context/review socket: `<project root>/.pi/ide/<name>.sock`,
//! NDJSON. A real headless Neovim and host; the test plays pi's `ide`
//! extension with a plain Unix socket client.

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use crate::common::{DEADLINE, Session, eventually, host_binary, scratch_dir};

/// A pi-like client: one JSON object per line each way.
pub(crate) struct Client {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
}

impl Client {
    pub(crate) async fn connect(path: &Path) -> Client {
        let stream = UnixStream::connect(path)
            .await
            .unwrap_or_else(|e| panic!("connect {}: {e}", path.display()));
        let (reader, writer) = stream.into_split();
        Client {
            reader: BufReader::new(reader),
            writer,
        }
    }

    /// Connects and reads `hello` and the first context; returns that context.
    pub(crate) async fn greeted(path: &Path) -> (Client, Value) {
        let mut client = Client::connect(path).await;
        let hello = client.next().await;
        assert_eq!(hello["type"], "hello", "hello comes first: {hello}");
        let context = client.next().await;
        assert_eq!(context["type"], "context", "then the context: {context}");
        (client, context)
    }

    async fn try_next(&mut self, within: Duration) -> Option<Value> {
        let mut line = String::new();
        match tokio::time::timeout(within, self.reader.read_line(&mut line)).await {
            Ok(Ok(0)) => panic!("the socket closed"),
            Ok(Ok(_)) => {
                assert!(line.ends_with('\n'), "one line per message: {line:?}");
                Some(serde_json::from_str(&line).expect("a JSON line"))
            }
            Ok(Err(error)) => panic!("read failed: {error}"),
            Err(_) => None,
        }
    }

    pub(crate) async fn next(&mut self) -> Value {
        self.try_next(DEADLINE)
            .await
            .expect("timed out waiting for a message")
    }

    /// Nothing arrives for a while.
    async fn quiet(&mut self) {
        if let Some(message) = self.try_next(Duration::from_millis(300)).await {
            panic!("expected nothing, got {message}");
        }
    }

    pub(crate) async fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.unwrap();
    }
}

pub(crate) fn socket_in(root: &Path) -> PathBuf {
    root.join(".pi/ide/nvim.sock")
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

pub(crate) async fn socket_there(path: &Path) {
    eventually(&format!("the socket {}", path.display()), || async {
        std::fs::symlink_metadata(path)
            .is_ok_and(|meta| meta.file_type().is_socket())
            .then_some(())
    })
    .await
}

async fn gone(path: &Path) {
    eventually(&format!("{} removed", path.display()), || async {
        (!path.exists()).then_some(())
    })
    .await
}

/// `setup(opts)` in a Neovim that was spawned without it.
async fn setup(session: &Session, opts: &str) {
    session
        .exec(&format!(
            "local opts = {opts}; opts.bin = '{}'; require('pi-ide').setup(opts)",
            host_binary().display()
        ))
        .await;
}

async fn edit(session: &Session, path: &Path) {
    session
        .exec(&format!("vim.cmd.edit('{}')", path.display()))
        .await;
}

const QUICK: &str = "{ selection = { debounce_ms = 20 } }";

#[tokio::test]
async fn the_socket_is_private_recreated_when_deleted_and_removed_on_stop() {
    let session = Session::start_with(QUICK).await;
    let path = socket_in(&session.work_dir);
    socket_there(&path).await;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    let status = eventually("status() to show the socket", || async {
        let status = session.lua("return require('pi-ide').status()").await;
        status["socket"].is_string().then_some(status)
    })
    .await;
    assert_eq!(status["socket"], path.to_str().unwrap());
    let described = session
        .lua("require('pi-ide.commands').run({'status'}); return _G.notified[#_G.notified].msg")
        .await;
    assert!(
        described
            .as_str()
            .unwrap()
            .contains(&format!("pi context socket: {}", path.display())),
        "{described}"
    );
    let health = crate::health::health_report(&session).await;
    assert!(
        health.contains(&format!(
            "pi context socket {}: start pi in {}",
            path.display(),
            session.work_dir.display()
        )),
        "{health}"
    );

    let mut client = Client::connect(&path).await;
    assert_eq!(
        client.next().await,
        json!({"type": "hello", "ide": "nvim", "version": "1.0.0"})
    );
    assert_eq!(
        client.next().await,
        json!({"type": "context", "file": null}),
        "an empty buffer is no file"
    );
    session.wait_clients(1).await;

    // pi deletes sockets that do not accept: it comes back within a second.
    std::fs::remove_file(&path).unwrap();
    let deleted = tokio::time::Instant::now();
    socket_there(&path).await;
    assert!(
        deleted.elapsed() < Duration::from_millis(1500),
        "re-created after {:?}",
        deleted.elapsed()
    );
    assert_eq!(mode(&path), 0o600);
    let (_second, _) = Client::greeted(&path).await;
    session.wait_clients(2).await;
    let file = session.write_file("kept.txt", "one\n");
    edit(&session, &file).await;
    assert_eq!(
        client.next().await,
        json!({"type": "context", "file": "kept.txt"}),
        "the first client is still served"
    );

    session.exec("require('pi-ide').stop()").await;
    session.wait_stopped().await;
    gone(&path).await;
}

#[tokio::test]
async fn a_live_socket_of_that_name_is_left_alone() {
    let session = Session::spawn().await;
    let dir = session.work_dir.join(".pi/ide");
    std::fs::create_dir_all(&dir).unwrap();
    let other = tokio::net::UnixListener::bind(dir.join("nvim.sock")).unwrap();
    setup(&session, "{}").await;
    let pid = session.lua("return vim.fn.getpid()").await;
    let own = dir.join(format!("nvim-{pid}.sock"));
    socket_there(&own).await;
    let mut client = Client::connect(&own).await;
    let hello = client.next().await;
    assert_eq!(hello["ide"], format!("nvim-{pid}"));
    assert!(dir.join("nvim.sock").exists(), "the other one is kept");
    drop(other);
    session.exec("require('pi-ide').stop()").await;
    gone(&own).await;
}

#[tokio::test]
async fn a_killed_host_leaves_no_socket() {
    let session = Session::start().await;
    let path = socket_in(&session.work_dir);
    socket_there(&path).await;
    eventually("status() to show the socket", || async {
        let status = session.lua("return require('pi-ide').status()").await;
        status["socket"].is_string().then_some(())
    })
    .await;
    session.kill_host_for_good().await;
    gone(&path).await;
}

#[tokio::test]
async fn context_follows_files_and_visual_selections() {
    let session = Session::start_with(QUICK).await;
    let path = socket_in(&session.work_dir);
    socket_there(&path).await;
    std::fs::create_dir(session.work_dir.join("src")).unwrap();
    let file = session.work_dir.join("src/main.rs");
    std::fs::write(&file, "fn main() {\n    one();\n    two();\n}\n").unwrap();
    edit(&session, &file).await;
    session.exec("vim.api.nvim_win_set_cursor(0, {2, 4})").await;
    let (mut client, context) = Client::greeted(&path).await;
    assert_eq!(context, json!({"type": "context", "file": "src/main.rs"}));

    session.input("Vj").await;
    assert_eq!(
        client.next().await,
        json!({"type": "context", "file": "src/main.rs", "startLine": 2, "endLine": 3})
    );
    session.input("<Esc>").await;
    assert_eq!(
        client.next().await,
        json!({"type": "context", "file": "src/main.rs"})
    );
    // The same context again is not resent.
    session.input("jk").await;
    client.quiet().await;
    session.input("gg0vl").await;
    assert_eq!(
        client.next().await,
        json!({"type": "context", "file": "src/main.rs", "startLine": 1, "endLine": 1})
    );
    session.input("<Esc>").await;
    client.next().await;

    // The agent's terminal keeps the file the person came from.
    session.exec("vim.cmd('split'); vim.cmd('terminal')").await;
    // Neovim runs the debounced report while the terminal is current.
    session.lua("vim.wait(100); return true").await;
    session.exec("vim.cmd('wincmd p')").await;
    session.input("gg0Vj").await;
    assert_eq!(
        client.next().await,
        json!({"type": "context", "file": "src/main.rs", "startLine": 1, "endLine": 2}),
        "no `file: null` while in a terminal"
    );
    session.input("<Esc>").await;
    client.next().await;

    session.exec("vim.cmd('help')").await;
    assert_eq!(
        client.next().await,
        json!({"type": "context", "file": null}),
        "a help buffer is no file"
    );
    session.exec("vim.cmd('helpclose')").await;
    assert_eq!(
        client.next().await,
        json!({"type": "context", "file": "src/main.rs"})
    );
    let outside = scratch_dir("outside");
    let elsewhere = outside.join("x.txt");
    std::fs::write(&elsewhere, "x\n").unwrap();
    edit(&session, &elsewhere).await;
    assert_eq!(
        client.next().await,
        json!({"type": "context", "file": null}),
        "a file outside the project"
    );
    let (_, current) = Client::greeted(&path).await;
    assert_eq!(current, json!({"type": "context", "file": null}));
}

#[tokio::test]
async fn the_socket_lives_at_the_git_root_and_follows_cd() {
    let session = Session::spawn().await;
    let root = session.work_dir.clone();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(git.success());
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/x.txt"), "x\n").unwrap();
    session
        .exec(&format!("vim.cmd.cd('{}')", root.join("sub").display()))
        .await;
    setup(&session, QUICK).await;
    let path = socket_in(&root);
    socket_there(&path).await;
    assert!(!root.join("sub/.pi").exists(), "the git root, not the cwd");
    edit(&session, &root.join("sub/x.txt")).await;
    let (mut client, context) = Client::greeted(&path).await;
    assert_eq!(context, json!({"type": "context", "file": "sub/x.txt"}));

    let other = scratch_dir("socket-cd");
    session
        .exec(&format!("vim.cmd.cd('{}')", other.display()))
        .await;
    let moved = socket_in(&other);
    socket_there(&moved).await;
    gone(&path).await;
    eventually("status() to show the new socket", || async {
        let status = session.lua("return require('pi-ide').status()").await;
        (status["socket"] == moved.to_str().unwrap()).then_some(())
    })
    .await;
    // The file is outside the new root now.
    session.input("j").await;
    assert_eq!(
        client.next().await,
        json!({"type": "context", "file": null})
    );
    let (_, context) = Client::greeted(&moved).await;
    assert_eq!(context, json!({"type": "context", "file": null}));
}

#[tokio::test]
async fn bad_lines_and_probes_break_nothing() {
    let session = Session::start_with(QUICK).await;
    let path = socket_in(&session.work_dir);
    socket_there(&path).await;
    // pi's probe: connect and close at once, many times.
    for _ in 0..20 {
        drop(UnixStream::connect(&path).await.unwrap());
    }
    let (mut first, _) = Client::greeted(&path).await;
    let (mut second, _) = Client::greeted(&path).await;
    first
        .send(b"not json\n[1,2]\n{\"type\":\"bogus\"}\n\n")
        .await;
    first.send(&[0xff, 0xfe, b'\n']).await;
    let mut huge = vec![b'x'; 2 << 20];
    huge.push(b'\n');
    first.send(&huge).await;
    let mut megabyte = b"{\"type\":\"context\",\"pad\":\"".to_vec();
    megabyte.extend(std::iter::repeat_n(b'y', 1_000_000));
    megabyte.extend(b"\"}\n");
    first.send(&megabyte).await;
    first.send(b"{\"files\":[\"missing.txt\"]}\n").await;
    // The connection still reads after the bad lines.
    assert_refused(&first.next().await, "missing.txt does not exist");
    let file = session.write_file("both.txt", "a\nb\n");
    edit(&session, &file).await;
    for client in [&mut first, &mut second] {
        assert_eq!(
            client.next().await,
            json!({"type": "context", "file": "both.txt"}),
            "every client gets the context"
        );
    }
    let (_, _) = Client::greeted(&path).await;
    assert_eq!(
        session
            .lua("return require('pi-ide').status().running")
            .await,
        true
    );
}

/// Replaces the review UI with a recorder; `open` fails when asked to.
async fn stub_review_ui(session: &Session, open_fails: bool) {
    session
        .exec(&format!(
            "_G.review_calls = {{}}
             package.loaded['pi-ide.review'] = {{
               open = function(review)
                 table.insert(_G.review_calls, {{ 'open', review }})
                 if {open_fails} then error('no tab for you') end
                 return true
               end,
               close = function(id, reason) table.insert(_G.review_calls, {{ 'close', id, reason }}) end,
               refused = function(message)
                 table.insert(_G.review_calls, {{ 'refused', message }})
                 require('pi-ide.util').notify(message, vim.log.levels.WARN)
               end,
             }}"
        ))
        .await;
}

async fn review_calls(session: &Session, n: usize) -> Vec<Value> {
    eventually(&format!("{n} calls into the review UI"), || async {
        let calls = session.lua("return _G.review_calls").await;
        let calls = calls.as_array().cloned().unwrap_or_default();
        (calls.len() >= n).then_some(calls)
    })
    .await
}

const CANCELLED: &str = r#"{"type":"reviewResult","status":"cancelled","comments":[]}"#;

/// A refusal: cancelled, with `error` saying `why`.
fn assert_refused(message: &Value, why: &str) {
    assert_eq!(
        (&message["type"], &message["status"], &message["comments"]),
        (&json!("reviewResult"), &json!("cancelled"), &json!([])),
        "{message}"
    );
    let error = message["error"].as_str().unwrap_or_default();
    assert!(error.contains(why), "{why} in {message}");
}

#[tokio::test]
async fn review_requests_are_checked_one_at_a_time_and_answered_once() {
    let session = Session::start().await;
    stub_review_ui(&session, false).await;
    session.write_file("a.txt", "a\nb\nc\n");
    let root = session.work_dir.to_str().unwrap().to_owned();
    let path = socket_in(&session.work_dir);
    socket_there(&path).await;
    let (mut asking, _) = Client::greeted(&path).await;
    let (mut other, _) = Client::greeted(&path).await;
    let cancelled: Value = serde_json::from_str(CANCELLED).unwrap();

    for (request, why) in [
        (
            r#"{"files":["../x.txt"]}"#,
            "../x.txt leaves the project root",
        ),
        (r#"{"files":["/etc/passwd"]}"#, "/etc/passwd is absolute"),
        (
            r#"{"files":["a.txt","nope.txt"]}"#,
            "nope.txt does not exist",
        ),
    ] {
        asking.send(format!("{request}\n").as_bytes()).await;
        assert_refused(&asking.next().await, why);
        let notified = eventually("the reason in Neovim", || async {
            let list = session.notifications().await;
            list.into_iter().find(|message| message.contains(why))
        })
        .await;
        assert!(
            notified.starts_with("pi-ide: review refused: "),
            "{notified}"
        );
    }
    let calls = review_calls(&session, 3).await;
    assert!(calls.iter().all(|call| call[0] == "refused"), "{calls:?}");

    asking.send(b"{\"files\":[\"./a.txt\",\"a.txt\"]}\n").await;
    let calls = review_calls(&session, 4).await;
    let open = &calls[3];
    assert_eq!(open[0], "open");
    assert_eq!(open[1]["root"], root);
    assert_eq!(open[1]["files"], json!(["a.txt"]));
    let id = open[1]["id"].as_u64().unwrap();

    other.send(b"{\"files\":[\"a.txt\"]}\n").await;
    assert_refused(&other.next().await, "already open");
    let calls = review_calls(&session, 5).await;
    assert_eq!(calls[4][0], "refused");
    assert!(
        calls[4][1].as_str().unwrap().contains("already open"),
        "{calls:?}"
    );

    session
        .lua_with(
            "require('pi-ide.seam').notify('review_done', {
               id = ..., status = 'submitted',
               comments = {
                 { file = 'a.txt', line = 2, text = 'why b?', context = { '1: a', '> 2: b', '3: c' } },
                 { file = 'a.txt', line = 1, endLine = 3, text = 'all of it\\nreally', context = { '> 1: a', '> 2: b', '> 3: c' } },
               },
             })",
            vec![json!(id)],
        )
        .await;
    assert_eq!(
        asking.next().await,
        json!({"type": "reviewResult", "status": "submitted", "comments": [
            {"file": "a.txt", "line": 2, "text": "why b?", "context": ["1: a", "> 2: b", "3: c"]},
            {"file": "a.txt", "line": 1, "endLine": 3, "text": "all of it\nreally",
             "context": ["> 1: a", "> 2: b", "> 3: c"]},
        ]})
    );
    // Once: a second report of the same review goes nowhere.
    session
        .lua_with(
            "require('pi-ide.seam').notify('review_done', { id = ..., status = 'cancelled', comments = {} })",
            vec![json!(id)],
        )
        .await;
    asking.quiet().await;
    other.quiet().await;

    // The review is over: a new one may open, and a cancel has no comments.
    other.send(b"{\"files\":[\"a.txt\"]}\n").await;
    let calls = review_calls(&session, 6).await;
    let next = calls[5][1]["id"].as_u64().unwrap();
    assert_ne!(next, id);
    session
        .lua_with(
            "require('pi-ide.seam').notify('review_done', { id = ..., status = 'cancelled', comments = {} })",
            vec![json!(next)],
        )
        .await;
    assert_eq!(other.next().await, cancelled);
    asking.quiet().await;
}

#[tokio::test]
async fn a_review_ends_with_its_client_or_its_ui() {
    let session = Session::start().await;
    stub_review_ui(&session, false).await;
    session.write_file("a.txt", "a\n");
    let path = socket_in(&session.work_dir);
    socket_there(&path).await;
    let (mut asking, _) = Client::greeted(&path).await;
    asking.send(b"{\"files\":[\"a.txt\"]}\n").await;
    let calls = review_calls(&session, 1).await;
    let id = calls[0][1]["id"].clone();
    drop(asking);
    let calls = review_calls(&session, 2).await;
    assert_eq!(calls[1][0], "close");
    assert_eq!(calls[1][1], id);
    assert!(calls[1][2].as_str().unwrap().contains("disconnected"));

    // A UI that cannot open the review: cancelled, and the person is told.
    stub_review_ui(&session, true).await;
    let (mut next, _) = Client::greeted(&path).await;
    next.send(b"{\"files\":[\"a.txt\"]}\n").await;
    assert_refused(&next.next().await, "no tab for you");
    let calls = review_calls(&session, 2).await;
    assert_eq!(calls[0][0], "open");
    assert_eq!(calls[1][0], "refused");
    assert!(
        calls[1][1].as_str().unwrap().contains("no tab for you"),
        "{calls:?}"
    );
    // And the failed one is not left open.
    stub_review_ui(&session, false).await;
    next.send(b"{\"files\":[\"a.txt\"]}\n").await;
    let calls = review_calls(&session, 1).await;
    assert_eq!(calls[0][0], "open");

    // Neovim closing answers the open review.
    session.exec("require('pi-ide').stop()").await;
    assert_eq!(
        next.next().await,
        serde_json::from_str::<Value>(CANCELLED).unwrap()
    );
}

/// The next `reviewResult`, skipping context updates.
async fn review_result(client: &mut Client) -> Value {
    loop {
        let message = client.next().await;
        if message["type"] == "reviewResult" {
            return message;
        }
    }
}

#[tokio::test]
async fn a_review_from_pi_runs_in_the_review_ui_and_answers_with_the_comments() {
    let session = Session::start_with(QUICK).await;
    let path = socket_in(&session.work_dir);
    socket_there(&path).await;
    std::fs::write(
        session.work_dir.join("a.txt"),
        "one\ntwo\nthree\nfour\nfive\n",
    )
    .unwrap();
    let (mut client, _) = Client::greeted(&path).await;
    client.send(b"{\"files\":[\"a.txt\"]}\n").await;
    eventually("the review to open", || async {
        let status = session
            .lua("return require('pi-ide.review').status()")
            .await;
        (status["files"] == json!(["a.txt"])).then_some(())
    })
    .await;
    session
        .exec(
            "local review = require('pi-ide.review')
             review.comment('a.txt', 2, nil, 'why two?')
             review.comment('a.txt', 4, 5, 'and these')
             review.submit()",
        )
        .await;
    assert_eq!(
        review_result(&mut client).await,
        json!({"type": "reviewResult", "status": "submitted", "comments": [
            {"file": "a.txt", "line": 2, "text": "why two?",
             "context": ["1: one", "> 2: two", "3: three", "4: four", "5: five"]},
            {"file": "a.txt", "line": 4, "endLine": 5, "text": "and these",
             "context": ["1: one", "2: two", "3: three", "> 4: four", "> 5: five"]},
        ]})
    );
    assert!(
        session
            .lua("return require('pi-ide.review').status()")
            .await
            .is_null()
    );

    // Closing the review's tab cancels it.
    client.send(b"{\"files\":[\"a.txt\"]}\n").await;
    eventually("the second review to open", || async {
        let status = session
            .lua("return require('pi-ide.review').status()")
            .await;
        (!status.is_null()).then_some(())
    })
    .await;
    session.exec("vim.cmd('tabclose')").await;
    assert_eq!(
        review_result(&mut client).await,
        json!({"type": "reviewResult", "status": "cancelled", "comments": []})
    );
}
