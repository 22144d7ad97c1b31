//! `:PiIde agent opencode` against a stand-in for opencode's server
//! (`tests/agent_clis/stub_opencode.py`): what the real opencode
//! (real_opencode.rs) is too slow or too well-behaved to show. Its secrets
//! never reach a command line; the host stops following it once it is
//! gone; its requests are reviewed within caps; and what the person
//! accepted of an edit they partly rejected is written.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::codex_socket::accept_with_line;
use crate::common::{DEADLINE, Scratch, Session, eventually, fresh_dir, poll_within, scratch_dir};
use crate::real_codex::{agents_dir, diff_of, seen_diff};
use crate::real_opencode::Tmux;

/// The stand-in's files: what it is asked, and its log.
struct Stub {
    _dir: Scratch,
    asked: PathBuf,
    log: PathBuf,
}

impl Stub {
    fn new(asked: &Value) -> Stub {
        let dir = scratch_dir("opencode-stub");
        let (asked_file, log) = (dir.join("asked.json"), dir.join("log.jsonl"));
        std::fs::write(&asked_file, asked.to_string()).unwrap();
        Stub {
            _dir: dir,
            asked: asked_file,
            log,
        }
    }

    /// The options that make `:PiIde agent opencode` start the stand-in.
    fn opts(&self, position: &str) -> String {
        format!(
            "{{ agent = {{ position = '{position}', opencode = {{ cmd = {{ 'python3', '{}', '{}', '{}' }} }} }} }}",
            agents_dir().join("stub_opencode.py").display(),
            self.asked.display(),
            self.log.display()
        )
    }

    /// The requests it received so far.
    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// Its answered permission requests: (id, body).
    fn replies(&self) -> Vec<(String, Value)> {
        self.requests()
            .into_iter()
            .filter(|r| r["method"] == "POST" && r["authorized"] == true)
            .filter_map(|r| {
                let path = r["path"].as_str()?.split('?').next()?.to_owned();
                let id = path.strip_prefix("/permission/")?.strip_suffix("/reply")?;
                Some((id.to_owned(), r["body"].clone()))
            })
            .collect()
    }
}

/// Starts the agent, watching the diffs that open.
async fn start(session: &Session) {
    session
        .exec(
            "_G.diffs_seen = {}
             vim.api.nvim_create_autocmd('User', { pattern = 'PiIdeDiffOpened', callback = function(ev)
               table.insert(_G.diffs_seen, ev.data)
             end })",
        )
        .await;
    let started = session
        .lua("return require('pi-ide.agent').show('opencode')")
        .await;
    assert_eq!(started, true);
}

/// An edit request of opencode's `apply_patch`, changing each of `files`
/// from `before` to `after`.
fn asked(id: &str, files: &[&Path], before: &str, after: &str) -> Value {
    let files: Vec<Value> = files
        .iter()
        .map(|path| {
            let name = path.display();
            json!({
                "filePath": path,
                "type": "update",
                "patch": format!("Index: {name}\n===================================================================\n--- {name}\n+++ {name}\n@@ -1,1 +1,1 @@\n-{before}\n+{after}\n"),
            })
        })
        .collect();
    json!({"id": id, "sessionID": "s", "permission": "edit", "patterns": [], "metadata": {"files": files}})
}

/// A pane of a tmux server of the test's own, with a fake `tmux` first on
/// `PATH` that logs each command line (and the files it names) before it
/// runs the real one.
fn fake_tmux(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let real = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v tmux"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let (log, files) = (dir.join("tmux-argv.log"), dir.join("tmux-files.log"));
    let script = format!(
        "#!/bin/sh\nfor arg in \"$@\"; do printf '%s\\n' \"$arg\" >> '{log}'; if [ -f \"$arg\" ] && [ ! -x \"$arg\" ]; then printf 'FILE %s %s\\n' \"$(stat -c %a \"$arg\")\" \"$arg\" >> '{files}'; cat \"$arg\" >> '{files}'; fi; done\nexec '{real}' \"$@\"\n",
        log = log.display(),
        files = files.display(),
        real = real.trim()
    );
    let fake = bin.join("tmux");
    std::fs::write(&fake, script).unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&fake)
        .status()
        .unwrap();
    bin
}

#[tokio::test]
async fn in_tmux_opencodes_password_reaches_it_through_a_file_never_a_command_line_and_its_end_is_noticed()
 {
    let stub = Stub::new(&json!([]));
    let helpers = scratch_dir("opencode-stub-tmux");
    let bin = fake_tmux(&helpers);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let tmux = Tmux::start(&helpers, &[]);
    let (tmux_env, tmux_pane) = tmux.env();
    let env: Vec<(&str, &Path)> = vec![
        ("PATH", Path::new(&path)),
        ("TMUX", Path::new(&tmux_env)),
        ("TMUX_PANE", Path::new(&tmux_pane)),
    ];
    let session =
        Session::start_in(fresh_dir("opencode-stub-work"), &env, &stub.opts("tmux")).await;
    session.lockfile().await;
    start(&session).await;
    // The stand-in, given the password through its environment, is
    // followed with it.
    eventually(
        "the host to follow the stand-in with its password",
        || async {
            stub.requests()
                .iter()
                .any(|r| r["path"] == "/global/event" && r["authorized"] == true)
                .then_some(())
        },
    )
    .await;
    let argv = std::fs::read_to_string(helpers.join("tmux-argv.log")).unwrap();
    for arg in argv.lines() {
        assert!(
            !arg.contains("OPENCODE_SERVER_PASSWORD") && !arg.contains("PI_IDE_MCP_TOKEN"),
            "a secret on tmux's command line: {arg}"
        );
    }
    let files = std::fs::read_to_string(helpers.join("tmux-files.log")).expect("no file named");
    // The file the pane reads: `FILE <mode> <path>`, then what it holds.
    let (head, held) = files
        .split("FILE ")
        .filter_map(|section| section.split_once('\n'))
        .find(|(_, held)| held.contains("export OPENCODE_SERVER_PASSWORD="))
        .expect("the environment file");
    let (mode, named) = head.split_once(' ').unwrap();
    assert_eq!(mode, "600", "the environment file's mode");
    let password = held
        .lines()
        .find_map(|line| line.strip_prefix("export OPENCODE_SERVER_PASSWORD='"))
        .and_then(|rest| rest.strip_suffix('\''))
        .expect("the password in the environment file");
    assert!(password.len() >= 32, "{password}");
    assert!(
        argv.lines().all(|arg| !arg.contains(password)),
        "the password on tmux's command line"
    );
    // The MCP token is Codex's only.
    assert!(!held.contains("PI_IDE_MCP_TOKEN"), "{held}");
    // The file is gone once the pane read it.
    eventually("the environment file to go", || async {
        (!Path::new(named).exists()).then_some(())
    })
    .await;

    // The stand-in ends: Neovim forgets it, the host stops following it.
    let pid = session
        .lua("return require('pi-ide.agent').list()[1].pid")
        .await;
    let pid = pid.as_i64().expect("its pid").to_string();
    // SIGKILL: whatever the pane's process inherited for SIGTERM, it ends.
    std::process::Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .unwrap();
    poll_within(DEADLINE, || async {
        let list = session.lua("return #require('pi-ide.agent').list()").await;
        (list == 0).then_some(())
    })
    .await
    .unwrap_or_else(|| {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        panic!("Neovim still lists the ended pane; its process: {state:?}")
    });
    session.host_log_shows("stopped following opencode 1").await;
}

#[tokio::test]
async fn the_host_stops_following_an_opencode_whose_process_is_gone_and_sends_no_password_meanwhile()
 {
    let session = Session::start().await;
    session.lockfile().await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut process = std::process::Command::new("sleep")
        .arg("1000")
        .spawn()
        .unwrap();
    session
        .lua_with(
            "return require('pi-ide.seam').notify('opencode_follow', ...)",
            vec![json!({"id": 7, "port": port, "password": "p4ss", "cwd": session.work_dir, "pid": process.id()})],
        )
        .await;
    session.host_log_shows("following opencode 7 on port").await;
    process.kill().unwrap();
    process.wait().unwrap();
    let log = session
        .host_log_shows("stopped following opencode 7: its process")
        .await;
    assert!(!log.contains("p4ss"), "the password in the log");
}

#[tokio::test]
async fn what_the_person_accepted_of_an_edit_they_partly_rejected_is_written() {
    let work = fresh_dir("opencode-stub-partly");
    let (a, b) = (work.join("a.txt"), work.join("b.txt"));
    std::fs::write(&a, "old\n").unwrap();
    std::fs::write(&b, "old\n").unwrap();
    let many: Vec<PathBuf> = (0..101).map(|i| work.join(format!("f{i}.txt"))).collect();
    let many: Vec<&Path> = many.iter().map(PathBuf::as_path).collect();
    let stub = Stub::new(&json!([
        asked("per_many", &many, "old", "new"),
        asked("per_two", &[&a, &b], "old", "new"),
    ]));
    let session = Session::start_in(work.clone(), &[], &stub.opts("right")).await;
    session.lockfile().await;
    start(&session).await;
    let (first, second) = eventually("the two diffs", || async {
        Some((seen_diff(&session, 1).await?, seen_diff(&session, 2).await?))
    })
    .await;
    let (tab_a, tab_b) = match first["path"] == json!(a) {
        true => (
            diff_of(&first, "opencode", &a),
            diff_of(&second, "opencode", &b),
        ),
        false => (
            diff_of(&second, "opencode", &a),
            diff_of(&first, "opencode", &b),
        ),
    };
    accept_with_line(&session, &tab_a, "mine").await;
    session
        .lua_with(
            "return require('pi-ide.diff').reject(..., 'not b')",
            vec![json!(tab_b)],
        )
        .await;
    let (_, body) = eventually("the edit answered", || async {
        stub.replies().into_iter().find(|(id, _)| id == "per_two")
    })
    .await;
    assert_eq!(body["reply"], "reject", "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("a.txt now holds what they accepted")
            && message.contains("rejected: b.txt (not b)"),
        "{message}"
    );
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "new\nmine\n");
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "old\n");
    // The edit of 101 files is left to opencode's own prompt, and the
    // person is told why.
    let told = session.notifications().await;
    assert!(
        told.iter()
            .any(|m| m.contains("101 files") && m.contains("at most 100")),
        "{told:?}"
    );
    assert!(
        stub.replies().iter().all(|(id, _)| id != "per_many"),
        "the edit of 101 files was answered"
    );
}

#[tokio::test]
async fn edits_asked_past_the_open_reviews_are_left_to_opencodes_prompt() {
    let work = fresh_dir("opencode-stub-many");
    let files: Vec<PathBuf> = (0..9).map(|i| work.join(format!("f{i}.txt"))).collect();
    let mut requests = vec![];
    for (i, file) in files.iter().enumerate() {
        std::fs::write(file, "old\n").unwrap();
        requests.push(asked(&format!("per_{i}"), &[file], "old", "new"));
    }
    let stub = Stub::new(&json!(requests));
    let session = Session::start_in(work, &[], &stub.opts("right")).await;
    session.lockfile().await;
    start(&session).await;
    eventually("the person told of the edit past the reviews", || async {
        session
            .notifications()
            .await
            .iter()
            .any(|m| m.contains("while 8 of its edits wait"))
            .then_some(())
    })
    .await;
    session.wait_diffs(8).await;
    let seen = session.lua("return #_G.diffs_seen").await;
    assert_eq!(seen, 8, "diffs opened");
}
