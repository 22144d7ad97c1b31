//! Gemini CLI and Qwen Code in IDE mode, played by `tests/mcp/companion.mjs`
//! (the npm MCP SDK, connecting as the CLIs do: discovery file by PID or
//! workspace, bearer token, `initialize`, `tools/list`, notifications)
//! against real headless Neovim: the discovery files and their hygiene,
//! `ide/contextUpdate`, and every way a diff ends.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::common::{DEADLINE, Session, eventually, host_binary, repo_root};
use crate::pi_extension::require_node_deps;

fn gemini_dir(session: &Session) -> PathBuf {
    session.state_dir.join("tmp/gemini/ide")
}

fn qwen_dir(session: &Session) -> PathBuf {
    session.state_dir.join("qwen/ide")
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The file in `dir` whose name `keep` accepts, once there is one (the
/// host's hidden temp files aside).
async fn one_file(dir: &Path, keep: impl Fn(&str) -> bool) -> PathBuf {
    eventually(
        &format!("a discovery file in {}", dir.display()),
        || async {
            let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
                .ok()?
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| {
                    let name = path.file_name().unwrap().to_str().unwrap();
                    !name.starts_with('.') && keep(name)
                })
                .collect();
            (found.len() == 1).then(|| found.remove(0))
        },
    )
    .await
}

async fn nvim_pid(session: &Session) -> u64 {
    session
        .lua("return vim.fn.getpid()")
        .await
        .as_u64()
        .unwrap()
}

/// A CLI in IDE mode, connected.
struct Cli {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    /// Notifications read while waiting for something else.
    backlog: Vec<Value>,
    next_id: u64,
    /// What it found and listed: `{file, port, ideInfo, tools}`.
    connected: Value,
}

impl Cli {
    async fn connect(session: &Session, cli: &str) -> Cli {
        require_node_deps();
        let dir = match cli {
            "gemini" => gemini_dir(session),
            _ => qwen_dir(session),
        };
        let pid = nvim_pid(session).await;
        // Wait for the file: a CLI started before it finds nothing.
        one_file(&dir, |name| {
            name.ends_with(".json") || name.ends_with(".lock")
        })
        .await;
        let mut child = Command::new("node")
            .arg(repo_root().join("tests/mcp/companion.mjs"))
            .args([cli, dir.to_str().unwrap(), &pid.to_string()])
            .current_dir(&session.work_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("run node");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut cli = Cli {
            _child: child,
            stdin,
            lines,
            backlog: vec![],
            next_id: 0,
            connected: Value::Null,
        };
        // Notifications may come before tools/list is answered.
        loop {
            let message = cli.read().await;
            assert!(message.get("error").is_none(), "not connected: {message}");
            if let Some(connected) = message.get("connected") {
                cli.connected = connected.clone();
                return cli;
            }
            cli.backlog.push(message);
        }
    }

    async fn read(&mut self) -> Value {
        let line = tokio::time::timeout(DEADLINE, self.lines.next_line())
            .await
            .expect("the client said nothing in time")
            .unwrap()
            .expect("the client ended");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// The params of the next notification `method` that `wanted` accepts;
    /// others are kept.
    async fn notification(&mut self, method: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let matches = |message: &Value| {
            message["notification"]["method"] == method
                && wanted(&message["notification"]["params"])
        };
        if let Some(at) = self.backlog.iter().position(matches) {
            return self.backlog.remove(at)["notification"]["params"].clone();
        }
        let deadline = tokio::time::Instant::now() + DEADLINE;
        loop {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no {method} as wanted; got {:?}",
                self.backlog
            );
            let message = self.read().await;
            if matches(&message) {
                return message["notification"]["params"].clone();
            }
            self.backlog.push(message);
        }
    }

    /// The next notification of how a diff ended (`ide/diffAccepted`,
    /// `ide/diffRejected` or `ide/diffClosed`).
    async fn decision(&mut self) -> Value {
        let is_decision = |message: &Value| {
            let method = message["notification"]["method"].as_str().unwrap_or("");
            method.starts_with("ide/diff")
        };
        if let Some(at) = self.backlog.iter().position(is_decision) {
            return self.backlog.remove(at)["notification"].clone();
        }
        loop {
            let message = self.read().await;
            if is_decision(&message) {
                return message["notification"].clone();
            }
            self.backlog.push(message);
        }
    }

    async fn send(&mut self, command: Value) {
        let line = format!("{command}\n");
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"id": id, "call": name, "arguments": arguments}))
            .await;
        loop {
            let message = self.read().await;
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{message}");
                return message["result"].clone();
            }
            self.backlog.push(message);
        }
    }

    /// Leaves without closing its session, like a CLI that is killed.
    async fn exit(mut self) {
        self.send(json!({"exit": true})).await;
        let _ = self._child.wait().await;
    }
}

/// The latest context notification whose active file `wanted` accepts.
async fn context(cli: &mut Cli, wanted: impl Fn(&Value) -> bool) -> Value {
    let params = cli
        .notification("ide/contextUpdate", |params| {
            params["workspaceState"]["openFiles"]
                .as_array()
                .and_then(|files| files.first())
                .is_some_and(&wanted)
        })
        .await;
    params["workspaceState"]["openFiles"].clone()
}

#[tokio::test]
async fn both_clis_are_announced_privately_following_cd_and_never_after_exit() {
    let session = Session::spawn().await;
    let me = std::process::id();
    let dead = 999_999_999u32;
    let (gemini, qwen) = (gemini_dir(&session), qwen_dir(&session));
    for dir in [&gemini, &qwen] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let ours = |pid: u32| {
        json!({"port": 1, "workspacePath": "/w", "authToken": "t", "ppid": pid,
               "ideInfo": {"name": "neovim", "displayName": "Neovim"}, "server": "pi-ide.nvim"})
        .to_string()
    };
    let vscode = json!({"port": 2, "workspacePath": "/w", "authToken": "t", "ppid": dead,
                        "ideInfo": {"name": "vscode", "displayName": "VS Code"}})
    .to_string();
    let stale_gemini = gemini.join(format!("gemini-ide-server-{dead}-1.json"));
    let foreign_gemini = gemini.join(format!("gemini-ide-server-{dead}-2.json"));
    let live_gemini = gemini.join(format!("gemini-ide-server-{me}-3.json"));
    std::fs::write(&stale_gemini, ours(dead)).unwrap();
    std::fs::write(&foreign_gemini, &vscode).unwrap();
    std::fs::write(&live_gemini, ours(me)).unwrap();
    std::fs::write(qwen.join("1.lock"), ours(dead)).unwrap();
    std::fs::write(qwen.join("2.lock"), &vscode).unwrap();
    session
        .exec(&format!(
            "require('pi-ide').setup({{ bin = '{}' }})",
            host_binary().display()
        ))
        .await;
    let (_, pi_lock) = session.lockfile().await;
    let pid = nvim_pid(&session).await;
    let gemini_file = one_file(&gemini, |name| {
        name.starts_with(&format!("gemini-ide-server-{pid}-")) && name.ends_with(".json")
    })
    .await;
    let qwen_file = one_file(&qwen, |name| name.ends_with(".lock") && name != "2.lock").await;

    let body = read_json(&gemini_file);
    let port = body["port"].as_u64().unwrap();
    assert_eq!(
        gemini_file.file_name().unwrap().to_str().unwrap(),
        format!("gemini-ide-server-{pid}-{port}.json")
    );
    let work = session.work_dir.canonicalize().unwrap();
    assert_eq!(body["workspacePath"], work.to_str().unwrap());
    assert_eq!(body["authToken"], pi_lock["authToken"]);
    assert_eq!(
        body["ideInfo"],
        json!({"name": "neovim", "displayName": "Neovim"})
    );
    let lock = read_json(&qwen_file);
    assert_eq!(lock["ppid"], pid, "Qwen deletes locks of a dead ppid");
    assert_eq!(
        qwen_file.file_name().unwrap().to_str().unwrap(),
        format!("{}.lock", lock["port"])
    );
    assert_ne!(lock["port"], body["port"], "each CLI its own listener");
    for path in [&gemini_file, &qwen_file] {
        assert_eq!(mode(path), 0o600, "{}", path.display());
    }
    for dir in [&gemini, &qwen] {
        assert_eq!(mode(dir), 0o700, "{}", dir.display());
    }
    assert!(
        !stale_gemini.exists() && !qwen.join("1.lock").exists(),
        "stale ones of ours cleaned"
    );
    assert!(
        foreign_gemini.exists() && qwen.join("2.lock").exists(),
        "foreign ones untouched"
    );
    assert!(live_gemini.exists(), "a live editor's file stays");

    session.wait_clients(0).await;
    let status = session
        .lua("return require('pi-ide').status().companions")
        .await;
    let shown: Vec<&str> = status
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        shown,
        [gemini_file.to_str().unwrap(), qwen_file.to_str().unwrap()]
    );

    let elsewhere = crate::common::scratch_dir("companion-cd");
    let elsewhere = elsewhere.canonicalize().unwrap();
    session
        .exec(&format!("vim.cmd.cd('{}')", elsewhere.display()))
        .await;
    eventually("both files to follow :cd", || async {
        let moved = |path: &Path| read_json(path)["workspacePath"] == elsewhere.to_str().unwrap();
        (moved(&gemini_file) && moved(&qwen_file)).then_some(())
    })
    .await;

    session.exec("require('pi-ide').stop()").await;
    eventually("both files removed when the host stops", || async {
        (!gemini_file.exists() && !qwen_file.exists()).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_killed_host_leaves_no_discovery_file() {
    let session = Session::start().await;
    let gemini_file = one_file(&gemini_dir(&session), |_| true).await;
    let qwen_file = one_file(&qwen_dir(&session), |_| true).await;
    session.wait_clients(0).await;
    session.kill_host_for_good().await;
    eventually("Lua removes what the killed host left", || async {
        (!gemini_file.exists() && !qwen_file.exists()).then_some(())
    })
    .await;
}

#[tokio::test]
async fn the_options_turn_each_cli_off() {
    let session = Session::start_with("{ gemini = false, qwen = false }").await;
    session.lockfile().await;
    session.wait_clients(0).await;
    let status = session
        .lua("return require('pi-ide').status().companions")
        .await;
    assert_eq!(status, json!([]));
    for dir in [gemini_dir(&session), qwen_dir(&session)] {
        assert!(!dir.exists(), "{} written", dir.display());
    }
}

#[tokio::test]
async fn context_updates_follow_the_cursor_and_the_selection() {
    let session = Session::start().await;
    let a = session.write_file("a.txt", "one\ntwo\nthrée x\n");
    let b = session.write_file("b.txt", &format!("{}\n", "y".repeat(20_000)));
    session
        .exec(&format!("vim.cmd.edit('{}')", a.display()))
        .await;
    let mut cli = Cli::connect(&session, "gemini").await;
    assert_eq!(cli.connected["ideInfo"]["displayName"], "Neovim");
    let tools = cli.connected["tools"].as_array().unwrap();
    for name in ["openDiff", "closeDiff", "get_file_text_by_path"] {
        assert!(tools.contains(&json!(name)), "{name} not in {tools:?}");
    }
    let a_path = a.to_str().unwrap().to_owned();
    let first = context(&mut cli, |file| file["path"] == a_path.as_str()).await;
    assert_eq!(first[0]["isActive"], true);
    assert_eq!(first[0]["cursor"], json!({"line": 1, "character": 1}));
    assert!(first[0]["timestamp"].as_u64().unwrap() > 1_700_000_000_000);
    assert!(first[0].get("selectedText").is_none(), "{first}");

    // Row 3, after "thré": 1-based line 3, UTF-16 character 5.
    session.place_cursor(3, "thré".len() as u64).await;
    let moved = context(&mut cli, |file| file["cursor"]["line"] == 3).await;
    assert_eq!(moved[0]["cursor"], json!({"line": 3, "character": 5}));

    session.place_cursor(1, 0).await;
    session.input("Vj").await;
    let selected = context(&mut cli, |file| file.get("selectedText").is_some()).await;
    assert_eq!(selected[0]["selectedText"], "one\ntwo");
    assert_eq!(selected[0]["cursor"]["line"], 2);
    session.input("<Esc>").await;

    session
        .exec(&format!("vim.cmd.edit('{}')", b.display()))
        .await;
    session.input("V").await;
    let b_path = b.to_str().unwrap().to_owned();
    let files = context(&mut cli, |file| {
        file["path"] == b_path.as_str() && file.get("selectedText").is_some()
    })
    .await;
    assert_eq!(
        files[0]["selectedText"].as_str().unwrap().len(),
        16 * 1024,
        "cut at 16 KiB"
    );
    assert_eq!(files.as_array().unwrap().len(), 2);
    assert_eq!(files[1]["path"], a_path.as_str());
    assert!(
        files[1].get("isActive").is_none() && files[1].get("cursor").is_none(),
        "{files}"
    );
    session.input("<Esc>").await;
}

#[tokio::test]
async fn open_diff_is_answered_at_once_and_decided_by_notification() {
    let session = Session::start().await;
    let path = session.write_file("a.txt", "one\n");
    let file_path = path.to_str().unwrap().to_owned();
    let mut cli = Cli::connect(&session, "gemini").await;
    let accept = format!("require('pi-ide.diff').accept('{file_path}')");
    let reject = format!("require('pi-ide.diff').reject('{file_path}')");
    let open = json!({"filePath": file_path, "newContent": "one\ntwo\n"});

    // Accepted as proposed: the final text goes out, the file stays as it was.
    let answer = cli.call("openDiff", open.clone()).await;
    assert_eq!(answer["content"], json!([]), "{answer}");
    let diffs = session.wait_diffs(1).await;
    assert_eq!(diffs[0]["client"], "gemini");
    assert_eq!(diffs[0]["path"], file_path.as_str());
    session.exec(&accept).await;
    let decided = cli.decision().await;
    assert_eq!(decided["method"], "ide/diffAccepted");
    assert_eq!(
        decided["params"],
        json!({"filePath": file_path, "content": "one\ntwo\n"})
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "one\n",
        "the CLI writes the file"
    );

    // Edited in Neovim, then accepted: the person's text.
    cli.call("openDiff", open.clone()).await;
    let diffs = session.wait_diffs(1).await;
    let buf = diffs[0]["proposed_buf"].as_i64().unwrap();
    session
        .exec(&format!(
            "vim.api.nvim_buf_set_lines({buf}, 1, 2, false, {{'TWO'}})"
        ))
        .await;
    session.exec(&accept).await;
    let decided = cli.decision().await;
    assert_eq!(decided["params"]["content"], "one\nTWO\n");

    // Rejected.
    cli.call("openDiff", open.clone()).await;
    session.wait_diffs(1).await;
    session.exec(&reject).await;
    let decided = cli.decision().await;
    assert_eq!(
        decided,
        json!({"jsonrpc": "2.0", "method": "ide/diffRejected", "params": {"filePath": file_path}})
    );

    // Decided in the CLI's prompt: closeDiff (with suppressNotification,
    // as the CLI sends it then) gets the text as the person left it, as
    // JSON text, and no notification follows.
    edit_then_answer_in_the_prompt(&session, &mut cli, &file_path).await;
    let none = cli.call("closeDiff", json!({"filePath": file_path})).await;
    assert_eq!(none["content"][0]["text"], r#"{"content":null}"#);
    // The next decision is the next diff's: none came for the closed one.
    let other = session.write_file("b.txt", "b\n");
    let other_path = other.to_str().unwrap().to_owned();
    cli.call(
        "openDiff",
        json!({"filePath": other_path, "newContent": "c\n"}),
    )
    .await;
    session.wait_diffs(1).await;
    session
        .exec(&format!("require('pi-ide.diff').reject('{other_path}')"))
        .await;
    let decided = cli.decision().await;
    assert_eq!(decided["params"]["filePath"], other_path.as_str());

    // Outside the project: refused, and said so.
    let outside = cli
        .call(
            "openDiff",
            json!({"filePath": "/etc/passwd", "newContent": "x"}),
        )
        .await;
    assert_eq!(outside["content"], json!([]));
    let decided = cli.decision().await;
    assert_eq!(
        decided,
        json!({"jsonrpc": "2.0", "method": "ide/diffRejected", "params": {"filePath": "/etc/passwd"}})
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\n");
}

#[tokio::test]
async fn a_diff_closed_without_a_decision_is_ide_diff_closed() {
    let session = Session::start().await;
    let path = session.write_file("a.txt", "one\n");
    let file_path = path.to_str().unwrap().to_owned();
    let mut cli = Cli::connect(&session, "gemini").await;
    let open = json!({"filePath": file_path, "newContent": "one\ntwo\n"});
    let closed =
        json!({"jsonrpc": "2.0", "method": "ide/diffClosed", "params": {"filePath": file_path}});

    // Its tab closed.
    cli.call("openDiff", open.clone()).await;
    session.wait_diffs(1).await;
    session
        .exec(&format!(
            "require('pi-ide.diff').show('{file_path}'); vim.cmd.tabclose()"
        ))
        .await;
    assert_eq!(cli.decision().await, closed);
    session.wait_diffs(0).await;

    // The proposal's buffer wiped.
    cli.call("openDiff", open.clone()).await;
    let diffs = session.wait_diffs(1).await;
    let buf = diffs[0]["proposed_buf"].as_i64().unwrap();
    session
        .exec(&format!(
            "vim.api.nvim_buf_delete({buf}, {{ force = true }})"
        ))
        .await;
    assert_eq!(cli.decision().await, closed);
    session.wait_diffs(0).await;

    // Rejecting is a decision: ide/diffRejected, as before.
    cli.call("openDiff", open).await;
    session.wait_diffs(1).await;
    session
        .exec(&format!("require('pi-ide.diff').reject('{file_path}')"))
        .await;
    assert_eq!(cli.decision().await["method"], "ide/diffRejected");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\n");
}

#[tokio::test]
async fn close_diff_is_followed_by_ide_diff_closed_unless_suppressed() {
    let session = Session::start().await;
    let path = session.write_file("a.txt", "one\n");
    let file_path = path.to_str().unwrap().to_owned();
    let mut cli = Cli::connect(&session, "gemini").await;
    let open = json!({"filePath": file_path, "newContent": "one\ntwo\n"});
    let answered = |result: &Value| {
        serde_json::from_str::<Value>(result["content"][0]["text"].as_str().unwrap()).unwrap()
    };

    // The CLI takes its diff back (it leaves IDE mode): it hears that the
    // diff closed, with the proposal as the person left it.
    cli.call("openDiff", open.clone()).await;
    session.wait_diffs(1).await;
    let result = cli.call("closeDiff", json!({"filePath": file_path})).await;
    assert_eq!(answered(&result), json!({"content": "one\ntwo\n"}));
    assert_eq!(
        cli.decision().await,
        json!({"jsonrpc": "2.0", "method": "ide/diffClosed",
               "params": {"filePath": file_path, "content": "one\ntwo\n"}})
    );
    session.wait_diffs(0).await;

    // The person answered in the CLI's prompt: nothing follows the answer.
    cli.call("openDiff", open).await;
    session.wait_diffs(1).await;
    let result = cli
        .call(
            "closeDiff",
            json!({"filePath": file_path, "suppressNotification": true}),
        )
        .await;
    assert_eq!(answered(&result), json!({"content": "one\ntwo\n"}));
    session.wait_diffs(0).await;
    // A marker sent after it: a refused openDiff is rejected at once. The
    // first diff notification to arrive must be the marker's.
    cli.call(
        "openDiff",
        json!({"filePath": "/etc/passwd", "newContent": "x"}),
    )
    .await;
    assert_eq!(
        cli.decision().await,
        json!({"jsonrpc": "2.0", "method": "ide/diffRejected", "params": {"filePath": "/etc/passwd"}})
    );
}

/// Whether a buffer of the person's kept edits exists: its lines.
async fn kept_edits(session: &Session) -> Value {
    session
        .lua(
            "for _, b in ipairs(vim.api.nvim_list_bufs()) do
               if vim.api.nvim_buf_get_name(b):find('your edits', 1, true) then
                 return vim.api.nvim_buf_get_lines(b, 0, -1, false)
               end
             end",
        )
        .await
}

/// Has the CLI open a diff of `file_path` proposing "one\ntwo\n", and
/// the person make line `row` (0-based) of the proposal "mine".
async fn open_and_edit(session: &Session, cli: &mut Cli, file_path: &str, row: usize) {
    cli.call(
        "openDiff",
        json!({"filePath": file_path, "newContent": "one\ntwo\n"}),
    )
    .await;
    let diffs = session.wait_diffs(1).await;
    let buf = diffs[0]["proposed_buf"].as_i64().unwrap();
    session
        .exec(&format!(
            "vim.api.nvim_buf_set_lines({buf}, {row}, {row} + 1, false, {{'mine'}})"
        ))
        .await;
}

/// Opens a diff of `file_path`, edits its first line, and has the CLI
/// close it as it does when the person answers in its prompt.
async fn edit_then_answer_in_the_prompt(session: &Session, cli: &mut Cli, file_path: &str) {
    open_and_edit(session, cli, file_path, 0).await;
    let result = cli
        .call(
            "closeDiff",
            json!({"filePath": file_path, "suppressNotification": true}),
        )
        .await;
    assert_eq!(
        result["content"][0]["text"],
        json!({"content": "mine\ntwo\n"}).to_string()
    );
    session.wait_diffs(0).await;
}

#[tokio::test]
async fn after_close_diff_the_person_is_told_where_their_edits_went() {
    let session = Session::start().await;
    let path = session.write_file("a.txt", "one\n");
    let file_path = path.to_str().unwrap().to_owned();

    // Gemini CLI writes the proposal closeDiff answers, edits included.
    let mut gemini = Cli::connect(&session, "gemini").await;
    edit_then_answer_in_the_prompt(&session, &mut gemini, &file_path).await;
    let told = eventually("what became of the edits", || async {
        let told = session.notifications().await;
        told.into_iter().find(|m| m.contains("closed the diff"))
    })
    .await;
    assert_eq!(
        told,
        "pi-ide: Gemini CLI closed the diff (you answered in its prompt): it took your edits to the proposal for a.txt"
    );
    assert_eq!(kept_edits(&session).await, Value::Null, "nothing to keep");

    // Qwen Code applies its own proposal then: the edits stay in Neovim.
    session.exec("_G.notified = {}").await;
    let mut qwen = Cli::connect(&session, "qwen").await;
    edit_then_answer_in_the_prompt(&session, &mut qwen, &file_path).await;
    let told = eventually("what became of the edits", || async {
        let told = session.notifications().await;
        told.into_iter().find(|m| m.contains("closed the diff"))
    })
    .await;
    assert!(
        told.starts_with(
            "pi-ide: Qwen Code closed the diff (you answered in its prompt; an accept there applies its own proposal): \
             your edits to the proposal for a.txt are kept in buffer "
        ),
        "{told}"
    );
    assert_eq!(kept_edits(&session).await, json!(["mine", "two"]));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\n");
}

#[tokio::test]
async fn a_cli_that_goes_away_mid_diff_leaves_the_persons_edits() {
    let session = Session::start().await;
    let path = session.write_file("a.txt", "one\n");
    let file_path = path.to_str().unwrap().to_owned();
    let mut cli = Cli::connect(&session, "qwen").await;
    assert!(cli.connected["file"].as_str().unwrap().ends_with(".lock"));
    session.wait_clients(1).await;
    let status = session
        .lua("return require('pi-ide').status().clients")
        .await;
    assert_eq!(status[0]["kind"], "qwen");
    open_and_edit(&session, &mut cli, &file_path, 1).await;
    cli.exit().await;
    session.wait_diffs(0).await;
    session.wait_clients(0).await;
    let kept = session
        .lua(
            "for _, b in ipairs(vim.api.nvim_list_bufs()) do
               if vim.api.nvim_buf_get_name(b):find('your edits', 1, true) then
                 return vim.api.nvim_buf_get_lines(b, 0, -1, false)
               end
             end",
        )
        .await;
    assert_eq!(kept, json!(["one", "mine"]));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\n");
}

#[tokio::test]
async fn resuming_a_requests_stream_does_not_end_the_session() {
    use tokio::io::AsyncReadExt;
    let session = Session::start().await;
    let mut cli = Cli::connect(&session, "gemini").await;
    let file = gemini_dir(&session).join(cli.connected["file"].as_str().unwrap());
    let token = read_json(&file)["authToken"].as_str().unwrap().to_owned();
    let port = cli.connected["port"].as_u64().unwrap();
    // What the npm SDK sends a few seconds after `initialize`: a GET
    // resuming the initialize request's own stream, which has ended.
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\
         Accept: text/event-stream\r\nmcp-session-id: {}\r\nLast-Event-ID: 0/0\r\n\
         Connection: close\r\n\r\n",
        cli.connected["sessionId"].as_str().unwrap()
    );
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port as u16))
        .await
        .unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(DEADLINE, stream.read_to_end(&mut answer))
        .await
        .expect("the resumed stream to end")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    session.wait_clients(1).await;
    let path = session.write_file("a.txt", "a\n");
    let closed = cli
        .call("closeDiff", json!({"filePath": path.to_str().unwrap()}))
        .await;
    assert_eq!(
        closed["content"][0]["text"], r#"{"content":null}"#,
        "the session still serves"
    );
    session.wait_clients(1).await;
}

/// Every SSE event's data of a raw `initialize` on the Gemini port.
async fn initialize_events(session: &Session) -> Vec<String> {
    use tokio::io::AsyncReadExt;
    let file = one_file(&gemini_dir(session), |_| true).await;
    let body = read_json(&file);
    let port = body["port"].as_u64().unwrap() as u16;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "streamable-http-client", "version": "0.61.0"}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{initialize}",
        body["authToken"].as_str().unwrap(),
        initialize.len()
    );
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(DEADLINE, stream.read_to_end(&mut answer))
        .await
        .expect("the initialize stream to end")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    assert!(answer.contains("\"serverInfo\""), "{answer}");
    answer
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|data| data.trim().to_owned())
        .collect()
}

#[tokio::test]
async fn every_event_carries_json_as_the_clis_bundled_sdk_expects() {
    let session = Session::start().await;
    let events = initialize_events(&session).await;
    assert!(!events.is_empty());
    for data in &events {
        assert!(
            serde_json::from_str::<Value>(data).is_ok(),
            "an event the CLIs cannot parse (a priming event?): {data:?} in {events:?}"
        );
    }
}
