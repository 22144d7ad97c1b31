//! The real Gemini CLI 0.61 and Qwen Code 0.24 (npm, pinned in
//! `tests/gemini_cli/package.json`, installed here once) typed into a shell
//! in Neovim's own `:terminal`, as a person would, against real headless
//! Neovim; their models are stubs (`tests/gemini_cli/stub_model.py` for the
//! Gemini API, `stub_openai.py` for the OpenAI API Qwen Code speaks).
//! Another editor (`decoy_ide.py`, an IDE companion server that answers) has
//! the same workspace open and announced itself after Neovim, so a CLI that
//! went by its own process-tree walk would connect there. Each CLI connects
//! to this Neovim, gets the selection, writes an edit accepted in Neovim and
//! leaves one rejected alone.
//!
//! What makes this hold on a loaded machine (where an earlier version of
//! this test saw turns never start): a CLI handles keys in a React effect
//! subscribed again after each render, so a Return can reach the handler of
//! the render before the typed line showed, which finds the input empty
//! and drops it; Return goes again while the line is still the input and
//! the model has not been asked. Each CLI gets keys it takes as Return
//! however soon after the line they arrive. Every diff Neovim opens is
//! recorded by its `PiIdeDiffOpened` event rather than looked for by
//! polling, and every wait has a deadline sized for a CLI starting on two
//! busy cores.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::common::{Scratch, Session, eventually, fresh_dir, repo_root, scratch_dir};
use crate::pi_extension::{installed_and_current, run_in};

/// A CLI's start, a model turn, a tool's run: seconds each when two cores
/// are busy with a build.
const CLI_DEADLINE: Duration = Duration::from_secs(180);

/// How long a Return may take to show before it is taken as lost.
const RETURN_AGAIN: Duration = Duration::from_secs(2);

pub(crate) fn cli_dir() -> PathBuf {
    repo_root().join("tests/gemini_cli")
}

/// One of the two CLIs.
pub(crate) struct Cli {
    /// Its client kind in `status().clients`, and the CLI's name.
    pub(crate) kind: &'static str,
    /// Its entry point, under `tests/gemini_cli`.
    pub(crate) program: &'static str,
    /// The stub of the model API it speaks.
    pub(crate) stub: &'static str,
    /// What sends the typed line. Gemini CLI takes a Return within 30 ms of
    /// a typed key as a newline (in a terminal without the kitty keyboard
    /// protocol, which Neovim 0.11's has); a key that types nothing (End) in
    /// between makes it a Return however soon it follows. Qwen Code takes a
    /// Return that arrives with other bytes as a paste: it goes alone.
    submit: &'static str,
    /// How the model's request shows the selected line `two`.
    selection_sent: &'static str,
    /// What the CLI shows once it took b.txt's edit as rejected.
    rejected_shows: &'static str,
}

pub(crate) const GEMINI: Cli = Cli {
    kind: "gemini",
    program: "node_modules/@google/gemini-cli/bundle/gemini.js",
    stub: "stub_model.py",
    submit: "\x1b[F\r",
    selection_sent: r#""selectedText": "two""#,
    rejected_shows: "b.txt → Rejected",
};

const QWEN: Cli = Cli {
    kind: "qwen",
    program: "node_modules/@qwen-code/qwen-code/cli.js",
    stub: "stub_openai.py",
    submit: "\r",
    selection_sent: "Selected text:\n```\ntwo\n```",
    // Its mark for a tool call cancelled.
    rejected_shows: "- WriteFile Writing to b.txt",
};

static INSTALL: Mutex<()> = Mutex::new(());

/// Installs the pinned CLIs when they are missing or older than the
/// lockfile. (`npm ci` refuses this lockfile on npm 11: Qwen Code names
/// clipboard packages for other platforms that the registry does not
/// have; `npm install` installs the same locked versions.)
pub(crate) fn require_clis() {
    install_pinned(&cli_dir(), &[GEMINI.program, QWEN.program]);
}

/// Installs the packages pinned in `dir`'s lockfile when any of `needed`
/// (paths below `dir`) is missing or older than the lockfile.
pub(crate) fn install_pinned(dir: &Path, needed: &[&str]) {
    let _one_at_a_time = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    if installed_and_current(dir, needed) {
        return;
    }
    run_in(
        dir,
        "npm",
        &[
            "install",
            "--no-save",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
        ],
        &[],
    );
    for needed in needed {
        assert!(
            dir.join(needed).exists(),
            "{} is missing after `npm install`",
            dir.join(needed).display()
        );
    }
}

/// A helper process of the test (a stub model, another editor): what it
/// listens on and what it logged.
pub struct Helper {
    child: Child,
    pub port: u16,
    log: PathBuf,
}

impl Helper {
    /// `python3 tests/gemini_cli/<script> <port-file> <log-file>` in `cwd`.
    pub(crate) async fn start(script: &str, dir: &Path, cwd: &Path) -> Helper {
        Helper::start_at(&cli_dir().join(script), dir, cwd).await
    }

    /// `python3 <script> <port-file> <log-file>` in `cwd`, its files in `dir`.
    pub async fn start_at(script: &Path, dir: &Path, cwd: &Path) -> Helper {
        let script_name = script.file_name().unwrap().to_string_lossy();
        let (port_file, log) = (
            dir.join(format!("{script_name}.port")),
            dir.join(format!("{script_name}.log")),
        );
        let child = Command::new("python3")
            .arg(script)
            .args([&port_file, &log])
            .current_dir(cwd)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("python3 runs the test's helpers");
        let port = eventually(&format!("{script_name} to listen"), || async {
            std::fs::read_to_string(&port_file).ok()?.parse().ok()
        })
        .await;
        Helper { child, port, log }
    }

    pub(crate) fn logged(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// How many requests it logged.
    pub fn asked(&self) -> usize {
        self.logged().lines().count()
    }

    /// The items of each logged request body's list `key` (the Responses
    /// API's `input`, the chat API's `messages`) that `keep` takes.
    pub fn items(&self, key: &str, keep: impl Fn(&Value) -> bool) -> Vec<Value> {
        self.logged()
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .flat_map(|entry| entry["body"][key].as_array().cloned().unwrap_or_default())
            .filter(|item| keep(item))
            .collect()
    }

    fn pid(&self) -> u32 {
        self.child.id().expect("the helper runs")
    }
}

/// The decoy's discovery file for `cli` in `dir`, for the same workspace
/// and newer than Neovim's by each CLI's measure: a later PID (the decoy
/// started after Neovim) for Gemini CLI, a later mtime for Qwen Code. With
/// nothing else to go by, each CLI takes it.
fn announce_decoy(cli: &Cli, dir: &Path, decoy: &Helper, workspace: &Path) {
    let (name, mut content) = match cli.kind {
        "gemini" => (
            format!("gemini-ide-server-{}-{}.json", decoy.pid(), decoy.port),
            json!({}),
        ),
        _ => (format!("{}.lock", decoy.port), json!({"ppid": decoy.pid()})),
    };
    content["port"] = json!(decoy.port);
    content["workspacePath"] = json!(workspace);
    content["authToken"] = json!("decoy-token");
    content["ideInfo"] = json!({"name": "vscode", "displayName": "Decoy IDE"});
    let path = dir.join(name);
    std::fs::write(&path, content.to_string()).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .and_then(|file| file.set_modified(SystemTime::now() + Duration::from_secs(60)))
        .unwrap();
}

/// The CLI's settings: its model is the stub, IDE mode on, no prompt of
/// its own (trust, nudges, updates, suggestions) in the way.
pub(crate) fn write_settings(cli: &Cli, home: &Path, session: &Session) {
    let (file, settings) = match cli.kind {
        "gemini" => (
            home.join(".gemini/settings.json"),
            json!({
                "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
                "ide": {"enabled": true, "hasSeenNudge": true},
                "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
                "privacy": {"usageStatisticsEnabled": false},
            }),
        ),
        _ => (
            session.state_dir.join("qwen/settings.json"),
            json!({
                "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": false}},
                "model": {"name": "stub"},
                // Every edit goes to the editor's review.
                "tools": {"approvalMode": "default"},
                "ide": {"enabled": true, "hasSeenNudge": true},
                "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
                "privacy": {"usageStatisticsEnabled": false},
                "ui": {"enableFollowupSuggestions": false, "enableUserFeedback": false, "enableWelcomeBack": false},
            }),
        ),
    };
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, settings.to_string()).unwrap();
}

/// What the person's shell would have: the model's address and key.
pub(crate) fn model_env(cli: &Cli, model: &Helper) -> Vec<(&'static str, String)> {
    let url = format!("http://127.0.0.1:{}", model.port);
    let mut env = match cli.kind {
        "gemini" => vec![
            ("GEMINI_API_KEY", "stub-key".to_owned()),
            ("GOOGLE_GEMINI_BASE_URL", url),
        ],
        _ => vec![
            ("OPENAI_API_KEY", "stub-key".to_owned()),
            ("OPENAI_BASE_URL", format!("{url}/v1")),
            ("OPENAI_MODEL", "stub".to_owned()),
        ],
    };
    // In a container (/.dockerenv) Gemini CLI dials host.docker.internal
    // unless this says the session is remote.
    env.push(("SSH_CONNECTION", "127.0.0.1 1 127.0.0.1 2".to_owned()));
    env
}

/// A shell in Neovim's `:terminal` (a tab of its own) and what it shows.
struct Terminal<'a> {
    cli: &'a Cli,
    session: &'a Session,
    decoy: &'a Helper,
    model: &'a Helper,
}

impl Terminal<'_> {
    /// Opens the shell, then goes back to the tab the person was in.
    async fn open<'a>(
        cli: &'a Cli,
        session: &'a Session,
        decoy: &'a Helper,
        model: &'a Helper,
    ) -> Terminal<'a> {
        session
            .exec(
                "vim.o.shell = 'bash'
                 -- A person's editor is no CI job: Gemini CLI runs headless
                 -- (no prompt, no IDE) when it sees CI=true.
                 vim.env.CI = nil
                 vim.env.GITHUB_ACTIONS = nil
                 vim.cmd.tabnew()
                 vim.cmd.terminal()
                 _G.cli_term = { buf = vim.api.nvim_get_current_buf(), chan = vim.bo.channel }
                 vim.cmd.tabprevious()",
            )
            .await;
        let terminal = Terminal {
            cli,
            session,
            decoy,
            model,
        };
        terminal
            .wait_for("the shell's prompt", |screen| {
                (!screen.trim().is_empty()).then_some(())
            })
            .await;
        terminal
    }

    /// The terminal's lines, scrollback included.
    async fn screen(&self) -> String {
        let lines = self
            .session
            .lua("return table.concat(vim.api.nvim_buf_get_lines(_G.cli_term.buf, 0, -1, false), '\\n')")
            .await;
        lines.as_str().unwrap_or_default().to_owned()
    }

    async fn send(&self, keys: &str) {
        self.session
            .lua_with("vim.fn.chansend(_G.cli_term.chan, ...)", vec![json!(keys)])
            .await;
    }

    /// Waits until `check` finds what it wants on the screen; on a timeout
    /// says what the screen, the decoy and the model saw.
    async fn wait_for<T>(&self, what: &str, check: impl Fn(&str) -> Option<T>) -> T {
        self.wait_until(what, || async { check(&self.screen().await) })
            .await
    }

    async fn wait_until<T, Fut>(&self, what: &str, mut check: impl FnMut() -> Fut) -> T
    where
        Fut: std::future::Future<Output = Option<T>>,
    {
        let deadline = tokio::time::Instant::now() + CLI_DEADLINE;
        loop {
            if let Some(found) = check().await {
                return found;
            }
            if tokio::time::Instant::now() >= deadline {
                panic!(
                    "timed out waiting for {what}\n--- the terminal ---\n{}\n--- the decoy's log ---\n{}\n--- requests to the model: {} ---",
                    self.screen().await,
                    self.decoy.logged(),
                    self.model.logged().lines().count(),
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn shows(&self, what: &str) {
        self.wait_for(&format!("the terminal to show {what:?}"), |screen| {
            screen.contains(what).then_some(())
        })
        .await
    }

    /// Types `line`, waits for its echo, then sends it with the CLI's keys
    /// for Return.
    ///
    /// The CLIs handle keys in a React effect that is subscribed again
    /// after each render, and on a busy machine a key can reach the
    /// handler of the render before the echo: Return then sees the input
    /// empty and does nothing, and the line stays typed. So while the line
    /// is still the input and the model has not been asked anything,
    /// Return goes again; never once the model was asked (the CLI may be
    /// asking the person to confirm by then, and Return would answer it).
    async fn enter(&self, line: &str) {
        let before = self.screen().await.matches(line).count();
        self.send(line).await;
        self.wait_for(&format!("{line:?} typed"), |screen| {
            (screen.matches(line).count() > before).then_some(())
        })
        .await;
        let asked = self.model.logged().lines().count();
        let deadline = tokio::time::Instant::now() + CLI_DEADLINE;
        let mut sent = 0;
        while tokio::time::Instant::now() < deadline {
            if sent > 0 {
                eprintln!("{}: {line:?}: Return lost, sent again", self.cli.kind);
            }
            self.send(self.cli.submit).await;
            sent += 1;
            let again = tokio::time::Instant::now() + RETURN_AGAIN;
            while tokio::time::Instant::now() < again {
                let still_typed =
                    input_line(&self.screen().await).is_some_and(|input| input.contains(line));
                if !still_typed || self.model.logged().lines().count() > asked {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        panic!("{line:?} never left the input:\n{}", self.screen().await);
    }
}

/// The CLI's input line: the last one that starts with its prompt `>`.
fn input_line(screen: &str) -> Option<&str> {
    screen
        .lines()
        .rev()
        .find(|line| line.trim_start().starts_with('>'))
}

/// Records every diff Neovim opens and closes, so none goes unseen
/// however briefly it was open.
async fn record_diffs(session: &Session) {
    session
        .exec(
            "_G.diffs_seen = { opened = {}, closed = {} }
             vim.api.nvim_create_autocmd('User', { pattern = 'PiIdeDiffOpened', callback = function(ev)
               table.insert(_G.diffs_seen.opened, ev.data)
             end })
             vim.api.nvim_create_autocmd('User', { pattern = 'PiIdeDiffClosed', callback = function(ev)
               table.insert(_G.diffs_seen.closed, ev.data)
             end })",
        )
        .await;
}

/// Waits for diff number `n` (1-based) to open, checks that it is still
/// open and that `cli` opened it for `path`, and returns its tab name.
async fn diff_opened(terminal: &Terminal<'_>, cli: &Cli, n: usize, path: &Path) -> String {
    let opened = terminal
        .wait_until(&format!("diff {n} to open"), || async {
            let seen = terminal.session.lua("return _G.diffs_seen").await;
            let opened = seen["opened"].as_array()?.get(n - 1)?.clone();
            Some((opened, seen["closed"].as_array().map_or(0, Vec::len)))
        })
        .await;
    let (diff, closed) = opened;
    assert_eq!(diff["client"], cli.kind, "{diff}");
    assert_eq!(diff["path"], json!(path), "{diff}");
    assert_eq!(closed, n - 1, "diff {n} closed before Neovim decided it");
    diff["tab_name"].as_str().unwrap().to_owned()
}

/// Every text the model was sent, in whichever API the CLI speaks.
fn texts_sent(model: &Helper) -> Vec<String> {
    let mut texts = vec![];
    for line in model.logged().lines() {
        let request: Value = serde_json::from_str(line).unwrap();
        let body = &request["body"];
        let gemini = body["contents"].as_array().into_iter().flatten();
        let parts = gemini.flat_map(|content| content["parts"].as_array().into_iter().flatten());
        texts.extend(parts.filter_map(|part| part["text"].as_str().map(str::to_owned)));
        for message in body["messages"].as_array().into_iter().flatten() {
            match &message["content"] {
                Value::String(text) => texts.push(text.clone()),
                Value::Array(parts) => texts.extend(
                    parts
                        .iter()
                        .filter_map(|p| p["text"].as_str().map(str::to_owned)),
                ),
                _ => {}
            }
        }
    }
    texts
}

/// Ends what the terminal's shell started, its descendants too (Gemini
/// CLI runs itself again as a child), when the test ends, however it ends:
/// Neovim going away would only hang up the shell.
struct EndsCli(i32);

/// The children of `pid`, their children, and so on.
pub fn descendants(pid: i32) -> Vec<i32> {
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"));
    let children: Vec<i32> = children
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|pid| pid.parse().ok())
        .collect();
    let mut all = children.clone();
    for child in children {
        all.extend(descendants(child));
    }
    all
}

impl Drop for EndsCli {
    fn drop(&mut self) {
        for pid in descendants(self.0) {
            // SAFETY: a process the shell of this test's terminal started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

async fn a_real_cli_typed_into_neovims_terminal_connects_here_and_decides_edits_in_neovim(
    cli: &Cli,
) {
    require_clis();
    let helpers = scratch_dir(&format!("real-{}", cli.kind));
    let work = fresh_dir(&format!("real-{}-work", cli.kind));
    let a = work.join("a.txt");
    let b = work.join("b.txt");
    std::fs::write(&a, "one\ntwo\nthree\n").unwrap();
    std::fs::write(&b, "bee\n").unwrap();
    let model = Helper::start(cli.stub, &helpers, &work).await;
    let home: Scratch = scratch_dir(&format!("real-{}-home", cli.kind));
    let env = model_env(cli, &model);
    let mut session_env: Vec<(&str, &Path)> = vec![("HOME", &home)];
    session_env.extend(
        env.iter()
            .map(|(name, value)| (*name, Path::new(value.as_str()))),
    );
    let session = Session::start_in(work.clone(), &session_env, "{}").await;
    write_settings(cli, &home, &session);
    session.lockfile().await;
    let ours = eventually("Neovim announced to the CLI", || async {
        let companions = session
            .lua("return require('pi-ide').status().companions")
            .await;
        let announced = companions
            .as_array()?
            .iter()
            .find(|c| c["client"] == cli.kind)?;
        Some(PathBuf::from(announced["file"].as_str()?))
    })
    .await;
    // Another editor with the same workspace, announced after Neovim.
    let decoy = Helper::start("decoy_ide.py", &helpers, &work).await;
    announce_decoy(cli, ours.parent().unwrap(), &decoy, &work);
    record_diffs(&session).await;

    let terminal = Terminal::open(cli, &session, &decoy, &model).await;
    let shell = session.lua("return vim.fn.jobpid(_G.cli_term.chan)").await;
    let _ends_cli = EndsCli(shell.as_i64().unwrap() as i32);
    // The person is in a.txt with its second line selected.
    session
        .exec(&format!("vim.cmd.edit('{}')", a.display()))
        .await;
    session.place_cursor(2, 0).await;
    session.input("V").await;
    terminal
        .send(&format!(
            "node '{}'\r",
            cli_dir().join(cli.program).display()
        ))
        .await;
    terminal
        .wait_until("the CLI among Neovim's clients", || async {
            let dialed = decoy.logged();
            assert!(
                dialed.is_empty(),
                "the CLI connected to the other editor:\n{dialed}"
            );
            let clients = session
                .lua("return require('pi-ide').status().clients")
                .await;
            clients
                .as_array()?
                .iter()
                .any(|client| client["kind"] == cli.kind)
                .then_some(())
        })
        .await;
    terminal.shows("Type your message").await;
    terminal.enter("/ide status").await;
    terminal.shows("Connected to Neovim").await;
    // The context the CLI holds has Neovim's file, its selection with it.
    terminal.shows("a.txt (active)").await;

    terminal.enter("edit a.txt to accepted-in-neovim").await;
    let tab = diff_opened(&terminal, cli, 1, &a).await;
    let texts = texts_sent(&model);
    assert!(
        texts.iter().any(|text| text.contains(cli.selection_sent)),
        "no selection in the model's requests; their editor context: {:?}",
        texts
            .iter()
            .filter(|text| text.contains("a.txt"))
            .collect::<Vec<_>>()
    );
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\ntwo\nthree\n");
    let decided = session
        .lua_with(
            "return require('pi-ide.diff').accept(...)",
            vec![json!(tab)],
        )
        .await;
    assert_eq!(decided, true);
    terminal
        .wait_until("the CLI to write the accepted text", || async {
            (std::fs::read_to_string(&a).ok()? == "accepted-in-neovim\n").then_some(())
        })
        .await;
    // The turn ends with the model's text.
    terminal.shows("Done.").await;

    terminal.enter("edit b.txt to rejected-in-neovim").await;
    let tab = diff_opened(&terminal, cli, 2, &b).await;
    let decided = session
        .lua_with(
            "return require('pi-ide.diff').reject(...)",
            vec![json!(tab)],
        )
        .await;
    assert_eq!(decided, true);
    terminal.shows(cli.rejected_shows).await;
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "bee\n");
    assert_eq!(decoy.logged(), "", "the CLI dialed the other editor");
}

#[tokio::test]
async fn the_real_gemini_cli_typed_into_neovims_terminal_connects_here_and_decides_edits_in_neovim()
{
    a_real_cli_typed_into_neovims_terminal_connects_here_and_decides_edits_in_neovim(&GEMINI).await;
}

#[tokio::test]
async fn the_real_qwen_code_typed_into_neovims_terminal_connects_here_and_decides_edits_in_neovim()
{
    a_real_cli_typed_into_neovims_terminal_connects_here_and_decides_edits_in_neovim(&QWEN).await;
}
