//! The real Gemini CLI (npm `@google/gemini-cli`, pinned in
//! `tests/gemini_cli/package.json`) in a terminal (`script` gives it one),
//! against real headless Neovim, its model a stub
//! (`tests/gemini_cli/stub_model.py`, through `GOOGLE_GEMINI_BASE_URL`):
//! `/ide status` says it is connected, the model's request carries the
//! selection, an edit reviewed in Neovim and accepted is written by the
//! CLI, one rejected is not.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};

use crate::common::{Scratch, Session, eventually, repo_root, scratch_dir};
use crate::pi_extension::{npm_ci, require_node_deps};

fn cli_dir() -> PathBuf {
    repo_root().join("tests/gemini_cli")
}

const GEMINI: &str = "node_modules/@google/gemini-cli/bundle/gemini.js";

/// The stub model, listening; its request log.
struct Model {
    _child: Child,
    port: String,
    log: PathBuf,
}

async fn stub_model(dir: &Path) -> Model {
    let (port_file, log) = (dir.join("model.port"), dir.join("model.log"));
    let child = Command::new("python3")
        .arg(cli_dir().join("stub_model.py"))
        .args([&port_file, &log])
        .kill_on_drop(true)
        .spawn()
        .expect("python3 runs the stub model");
    let port = eventually("the stub model to listen", || async {
        std::fs::read_to_string(&port_file)
            .ok()
            .filter(|port| !port.is_empty())
    })
    .await;
    Model {
        _child: child,
        port,
        log,
    }
}

/// Every text part of every request the model got.
fn texts_sent(model: &Model) -> Vec<String> {
    let log = std::fs::read_to_string(&model.log).unwrap_or_default();
    let mut texts = vec![];
    for line in log.lines() {
        let request: Value = serde_json::from_str(line).unwrap();
        for content in request["body"]["contents"].as_array().into_iter().flatten() {
            for part in content["parts"].as_array().into_iter().flatten() {
                if let Some(text) = part["text"].as_str() {
                    texts.push(text.to_owned());
                }
            }
        }
    }
    texts
}

/// Gemini CLI in a terminal; what it printed, escape sequences removed.
struct Terminal {
    _child: Child,
    stdin: ChildStdin,
    screen: Arc<Mutex<String>>,
}

impl Terminal {
    async fn start(session: &Session, model: &Model, home: &Scratch) -> Terminal {
        let gemini = cli_dir().join(GEMINI);
        let mut child = Command::new("script")
            .args([
                "-qfec",
                &format!("stty cols 120 rows 40; exec node '{}'", gemini.display()),
                "/dev/null",
            ])
            .current_dir(&session.work_dir)
            .env("HOME", &**home)
            .env("TMPDIR", session.state_dir.join("tmp"))
            .env("GEMINI_API_KEY", "stub-key")
            .env(
                "GOOGLE_GEMINI_BASE_URL",
                format!("http://127.0.0.1:{}", model.port),
            )
            // In a container (/.dockerenv) it dials host.docker.internal otherwise.
            .env("SSH_CONNECTION", "127.0.0.1 1 127.0.0.1 2")
            .env("NO_COLOR", "1")
            .env("TERM", "xterm-256color")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("`script` (util-linux) gives Gemini CLI a terminal");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let screen = Arc::new(Mutex::new(String::new()));
        let filled = screen.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 8192];
            while let Ok(n) = stdout.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let text = String::from_utf8_lossy(&buf[..n]);
                filled.lock().unwrap().push_str(&without_escapes(&text));
            }
        });
        Terminal {
            _child: child,
            stdin,
            screen,
        }
    }

    fn printed(&self) -> String {
        self.screen.lock().unwrap().clone()
    }

    async fn shows(&self, what: &str) {
        eventually(&format!("Gemini CLI to show {what:?}"), || async {
            self.printed().contains(what).then_some(())
        })
        .await;
    }

    /// Types `line`, waits for its echo, then presses Enter (in one write
    /// the Enter would be taken as part of a paste).
    async fn enter(&mut self, line: &str) {
        let before = self.printed().matches(line).count();
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
        eventually(&format!("{line:?} typed"), || async {
            (self.printed().matches(line).count() > before).then_some(())
        })
        .await;
        self.stdin.write_all(b"\r").await.unwrap();
        self.stdin.flush().await.unwrap();
    }
}

/// `text` without terminal escape sequences (CSI, OSC).
fn without_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() || c == '~' {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' || (c == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[tokio::test]
async fn the_real_gemini_cli_connects_gets_context_and_decides_edits_in_neovim() {
    require_node_deps();
    npm_ci(&cli_dir(), &[GEMINI]);
    let dir = scratch_dir("gemini-cli");
    let model = stub_model(&dir).await;
    let home = scratch_dir("gemini-home");
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::write(
        home.join(".gemini/settings.json"),
        r#"{"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
            "ide": {"enabled": true, "hasSeenNudge": true},
            "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
            "privacy": {"usageStatisticsEnabled": false}}"#,
    )
    .unwrap();
    let session = Session::start().await;
    let a = session.write_file("a.txt", "one\ntwo\nthree\n");
    let b = session.write_file("b.txt", "bee\n");
    session
        .exec(&format!("vim.cmd.edit('{}')", a.display()))
        .await;
    session.lockfile().await;
    let mut gemini = Terminal::start(&session, &model, &home).await;

    eventually("Gemini CLI among Neovim's clients", || async {
        let clients = session
            .lua("return require('pi-ide').status().clients")
            .await;
        clients
            .as_array()?
            .iter()
            .any(|client| client["kind"] == "gemini")
            .then_some(())
    })
    .await;
    gemini.shows("Type your message").await;
    gemini.enter("/ide status").await;
    gemini.shows("Connected to Neovim").await;

    // The selection reaches the model with the prompt.
    session.place_cursor(2, 0).await;
    session.input("V").await;
    let prompt = format!("edit {} to accepted-in-neovim", a.display());
    gemini.enter(&prompt).await;
    let diffs = session.wait_diffs(1).await;
    assert_eq!(diffs[0]["client"], "gemini");
    assert!(
        texts_sent(&model)
            .iter()
            .any(|text| text.contains(r#""selectedText": "two""#)),
        "no selection in {:?}",
        texts_sent(&model)
    );
    session.input("<Esc>").await;
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\ntwo\nthree\n");
    session
        .lua_with(
            "require('pi-ide.diff').accept(...)",
            vec![Value::from(a.to_str().unwrap())],
        )
        .await;
    eventually("Gemini CLI to write the accepted text", || async {
        (std::fs::read_to_string(&a).ok()? == "accepted-in-neovim\n").then_some(())
    })
    .await;
    gemini.shows("Accepted").await;

    let prompt = format!("edit {} to rejected-in-neovim", b.display());
    gemini.enter(&prompt).await;
    session.wait_diffs(1).await;
    session
        .lua_with(
            "require('pi-ide.diff').reject(...)",
            vec![Value::from(b.to_str().unwrap())],
        )
        .await;
    gemini.shows("Rejected").await;
    session.wait_diffs(0).await;
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "bee\n");
}
