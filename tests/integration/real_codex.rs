//! The real Codex CLI 0.169 (npm, pinned in `tests/agent_clis`, installed
//! there once) started by `:PiIde agent codex` in Neovim's terminal, its
//! model a stub speaking the OpenAI Responses API on loopback
//! (`tests/agent_clis/stub_responses.py`). As a person would: Codex asks to
//! trust the hook `:PiIde agent codex` passed it (trusted), `/ide` is
//! typed, and each prompt carries the active file and selection from this
//! Neovim. An `apply_patch` opens in Neovim's review before anything is
//! written: rejected with a reason, Codex blocks it and its model reads the
//! reason; accepted with a line of the person's own, Codex writes their
//! version.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::codex_socket::{ShortTmp, accept_with_line};
use crate::common::{Session, eventually, fresh_dir, repo_root, scratch_dir};
pub use crate::real_clis::Helper as Stub;
use crate::real_clis::{descendants, install_pinned};

/// A CLI's start, a model turn, a hook's run: seconds each on two busy cores.
pub const CLI_DEADLINE: Duration = Duration::from_secs(180);

pub fn agents_dir() -> PathBuf {
    repo_root().join("tests/agent_clis")
}

const CODEX: &str = "node_modules/@openai/codex/bin/codex.js";
/// opencode's binary for this machine (the package's own launcher is made
/// by a postinstall script, which the install skips).
pub const OPENCODE: &[&str] = &[
    "node_modules/opencode-linux-x64-baseline/bin/opencode",
    "node_modules/opencode-linux-x64/bin/opencode",
    "node_modules/opencode-linux-arm64/bin/opencode",
];

/// Installs the pinned Codex CLI and opencode when they are missing or
/// older than the lockfile.
pub fn require_agents() {
    install_pinned(
        &agents_dir(),
        &[CODEX, "node_modules/opencode-ai/package.json"],
    );
}

/// A stub model of the test (`tests/agent_clis/<script>`), its files in
/// `dir`, run in `cwd`.
pub async fn stub(script: &str, dir: &Path, cwd: &Path) -> Stub {
    Stub::start_at(&agents_dir().join(script), dir, cwd).await
}

/// An item's text: its `content` as a string, or its parts' texts joined.
pub fn text_of(item: &Value) -> String {
    match &item["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Polls `check` until it finds what it wants, as long as a CLI may take;
/// on a timeout panics naming `what`, with what `context` says.
pub async fn within<T, Fut, Said>(
    what: &str,
    mut check: impl FnMut() -> Fut,
    context: impl Fn() -> Said,
) -> T
where
    Fut: std::future::Future<Output = Option<T>>,
    Said: std::future::Future<Output = String>,
{
    let deadline = tokio::time::Instant::now() + CLI_DEADLINE;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        if tokio::time::Instant::now() >= deadline {
            panic!("timed out waiting for {what}\n{}", context().await);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// An agent's terminal in Neovim: what it shows, keys into it.
pub struct AgentTerminal<'a> {
    pub session: &'a Session,
    pub buf: i64,
    pub job: i64,
}

impl<'a> AgentTerminal<'a> {
    /// The terminal of the agent `:PiIde agent <name>` started.
    pub async fn of(session: &'a Session, name: &str) -> AgentTerminal<'a> {
        let agent = eventually("the agent's terminal", || async {
            let list = session.lua("return require('pi-ide.agent').list()").await;
            list.as_array()?.iter().find(|a| a["name"] == name).cloned()
        })
        .await;
        AgentTerminal {
            session,
            buf: agent["buf"].as_i64().unwrap(),
            job: agent["job"].as_i64().unwrap(),
        }
    }

    /// Its lines, scrollback included ("" once the agent exited).
    pub async fn screen(&self) -> String {
        let lines = self
            .session
            .lua_with(
                "local buf = ...
                 if not vim.api.nvim_buf_is_valid(buf) then return '' end
                 return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\\n')",
                vec![json!(self.buf)],
            )
            .await;
        lines.as_str().unwrap_or_default().to_owned()
    }

    pub async fn send(&self, keys: &str) {
        self.session
            .lua_with("vim.fn.chansend(...)", vec![json!(self.job), json!(keys)])
            .await;
    }

    /// Polls `check` until it finds what it wants, on the screen or
    /// elsewhere; on a timeout shows the screen and what Neovim said.
    pub async fn wait_until<T, Fut>(&self, what: &str, check: impl FnMut() -> Fut) -> T
    where
        Fut: std::future::Future<Output = Option<T>>,
    {
        within(what, check, || async {
            format!(
                "--- the terminal ---\n{}\n--- the person was told ---\n{:?}",
                self.screen().await,
                self.session.notifications().await
            )
        })
        .await
    }

    pub async fn shows(&self, what: &str) {
        self.wait_until(&format!("the terminal to show {what:?}"), || async {
            self.screen().await.contains(what).then_some(())
        })
        .await
    }

    /// Sends `keys` until the screen shows `then` (again after 2 s without
    /// it: a TUI may get keys before it takes them); the keys must be
    /// harmless to repeat.
    pub async fn press_until(&self, keys: &str, then: &str) {
        let mut sent_at: Option<tokio::time::Instant> = None;
        self.wait_until(&format!("{keys:?} to show {then:?}"), || {
            let again = sent_at.is_none_or(|at| at.elapsed() > Duration::from_secs(2));
            if again {
                sent_at = Some(tokio::time::Instant::now());
            }
            async move {
                if self.screen().await.contains(then) {
                    return Some(());
                }
                if again {
                    self.send(keys).await;
                }
                None
            }
        })
        .await
    }

    /// Types `line`, waits for its echo, then presses Return (again while
    /// the line is still the input and `asked` says nothing happened: a
    /// key can reach a TUI before it drew the line).
    pub async fn enter(&self, line: &str, asked: impl Fn() -> usize) {
        let before = self.screen().await.matches(line).count();
        self.send(line).await;
        self.wait_until(&format!("{line:?} typed"), || async {
            (self.screen().await.matches(line).count() > before).then_some(())
        })
        .await;
        let asked_before = asked();
        let deadline = tokio::time::Instant::now() + CLI_DEADLINE;
        while tokio::time::Instant::now() < deadline {
            self.send("\r").await;
            let again = tokio::time::Instant::now() + Duration::from_secs(2);
            while tokio::time::Instant::now() < again {
                let screen = self.screen().await;
                let typed = screen
                    .lines()
                    .rev()
                    .find(|l| l.trim_start().starts_with('›') || l.trim_start().starts_with('┃'))
                    .is_some_and(|input| input.contains(line));
                if !typed || asked() > asked_before {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        panic!("{line:?} never left the input:\n{}", self.screen().await);
    }
}

/// Ends the agent's processes (Codex runs its binary under node) however
/// the test ends: Neovim going away would only hang them up.
pub struct EndsAgent(pub i32);

impl Drop for EndsAgent {
    fn drop(&mut self) {
        for pid in descendants(self.0).into_iter().chain([self.0]) {
            // SAFETY: a process of this test's agent terminal.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// Records every diff Neovim opens; selects the second line of `file`,
/// as the person would, and starts agent `name` (`:PiIde agent`, cursor
/// kept).
pub async fn select_and_start(session: &Session, file: &Path, name: &str) {
    session
        .exec(
            "vim.env.CI = nil; vim.env.GITHUB_ACTIONS = nil -- a person's editor is no CI job
             _G.diffs_seen = {}
             vim.api.nvim_create_autocmd('User', { pattern = 'PiIdeDiffOpened', callback = function(ev)
               table.insert(_G.diffs_seen, ev.data)
             end })",
        )
        .await;
    session
        .exec(&format!("vim.cmd.edit('{}')", file.display()))
        .await;
    session.place_cursor(2, 0).await;
    session.input("V").await;
    let started = session
        .lua_with(
            "return require('pi-ide.agent').show(...)",
            vec![json!(name)],
        )
        .await;
    assert_eq!(started, true, "{name} started");
}

/// Diff `n` (1-based) Neovim opened, once it did.
pub async fn seen_diff(session: &Session, n: usize) -> Option<Value> {
    let seen = session.lua("return _G.diffs_seen").await;
    seen.as_array()?.get(n - 1).cloned()
}

/// Checks that `client` proposed `diff` for `path`; its tab name.
pub fn diff_of(diff: &Value, client: &str, path: &Path) -> String {
    assert_eq!(diff["client"], client, "{diff}");
    assert_eq!(diff["path"], json!(path), "{diff}");
    diff["tab_name"].as_str().unwrap().to_owned()
}

/// Waits for diff `n` to open, checks `client` proposed it for `path`;
/// its tab name.
pub async fn diff_opened(
    terminal: &AgentTerminal<'_>,
    client: &str,
    n: usize,
    path: &Path,
) -> String {
    let diff = terminal
        .wait_until(&format!("diff {n} to open"), || {
            seen_diff(terminal.session, n)
        })
        .await;
    diff_of(&diff, client, path)
}

/// Another program on Codex's shared socket (`decoy_ipc.py`).
struct Decoy {
    _child: Child,
    log: PathBuf,
}

impl Decoy {
    async fn start(socket: &Path, dir: &Path) -> Decoy {
        let log = dir.join("decoy.log");
        let child = Command::new("python3")
            .arg(agents_dir().join("decoy_ipc.py"))
            .args([socket, &log])
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("python3 runs the decoy");
        eventually("the decoy to listen", || async {
            log.exists().then_some(())
        })
        .await;
        Decoy { _child: child, log }
    }

    fn logged(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// Codex's home: the stub model as its provider, the project trusted.
fn codex_home(home: &Path, model: &Stub, work: &Path) -> PathBuf {
    let codex_home = home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let config = format!(
        "model = \"stub\"
model_provider = \"stub\"
model_catalog_json = {catalog:?}
check_for_update_on_startup = false

[model_providers.stub]
name = \"stub\"
base_url = \"http://127.0.0.1:{port}/v1\"
wire_api = \"responses\"

[projects.{work:?}]
trust_level = \"trusted\"

[tui]
screen_reader_detection_done = true
",
        catalog = agents_dir().join("codex_catalog.json"),
        port = model.port,
        work = work.display().to_string(),
    );
    std::fs::write(codex_home.join("config.toml"), config).unwrap();
    codex_home
}

/// The texts of the user messages Codex sent its model.
fn prompts(model: &Stub) -> Vec<String> {
    let user = |item: &Value| item["type"] == "message" && item["role"] == "user";
    model.items("input", user).iter().map(text_of).collect()
}

/// What Codex told its model its patches came to.
fn tool_outputs(model: &Stub) -> Vec<String> {
    let outputs = model.items("input", |item| item["type"] == "custom_tool_call_output");
    outputs
        .iter()
        .filter_map(|item| item["output"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn the_real_codex_gets_neovims_context_and_its_patches_are_decided_in_neovims_review() {
    require_agents();
    let helpers = scratch_dir("real-codex");
    let work = fresh_dir("real-codex-work");
    let (a, b) = (work.join("a.txt"), work.join("b.txt"));
    std::fs::write(&a, "one\ntwo\nthree\n").unwrap();
    std::fs::write(&b, "bee\n").unwrap();
    let model = stub("stub_responses.py", &helpers, &work).await;
    let home = scratch_dir("real-codex-home");
    let codex_home = codex_home(&home, &model, &work);
    let tmp = ShortTmp::new();
    // Another program serves the socket every Codex of this user finds
    // first: Neovim leaves it alone, and its agent terminal's Codex comes
    // here anyway.
    let decoy = Decoy::start(
        &tmp.0
            .join(format!("codex-ipc/ipc-{}.sock", unsafe { libc::getuid() })),
        &helpers,
    )
    .await;
    let codex = agents_dir().join(CODEX);
    let opts = format!(
        "{{ codex = true, agent = {{ codex = {{ cmd = {{ 'node', '{}', '--no-daemon' }} }} }} }}",
        codex.display()
    );
    let session = Session::start_in(
        work.clone(),
        &[
            ("HOME", &home),
            ("CODEX_HOME", &codex_home),
            ("TMPDIR", &tmp.0),
        ],
        &opts,
    )
    .await;
    session.lockfile().await;
    eventually("the host serving Codex's socket", || async {
        session
            .lua("return require('pi-ide').status().codex")
            .await
            .is_object()
            .then_some(())
    })
    .await;
    // The person is in a.txt with its second line selected.
    select_and_start(&session, &a, "codex").await;
    let terminal = AgentTerminal::of(&session, "codex").await;
    let pid = session
        .lua_with("return vim.fn.jobpid(...)", vec![json!(terminal.job)])
        .await;
    let _ends = EndsAgent(pid.as_i64().unwrap() as i32);

    // The hook `:PiIde agent codex` passed: trusted, as the person would.
    terminal.shows("Hooks need review").await;
    terminal
        .press_until("2", "› 2. Trust all and continue")
        .await;
    terminal.press_until("\r", "Ask Codex to do anything").await;
    let asked = || model.asked();
    terminal.enter("/ide", asked).await;
    terminal.shows("IDE context is on").await;

    terminal.enter("edit a.txt to rejected", asked).await;
    let tab = diff_opened(&terminal, "codex", 1, &a).await;
    let prompt = prompts(&model)
        .into_iter()
        .find(|text| text.ends_with("edit a.txt to rejected"))
        .expect("the prompt went to the model");
    assert!(prompt.contains("## Active file: a.txt"), "{prompt}");
    assert!(
        prompt.contains("## Active selection of the file:\ntwo"),
        "{prompt}"
    );
    session
        .lua_with(
            "return require('pi-ide.diff').reject(..., 'keep the three lines')",
            vec![json!(tab)],
        )
        .await;
    let output = terminal
        .wait_until("Codex to tell its model the patch was blocked", || async {
            tool_outputs(&model)
                .into_iter()
                .find(|o| o.contains("blocked"))
        })
        .await;
    assert!(
        output.contains("Command blocked by PreToolUse hook: The person rejected this patch in Neovim: keep the three lines"),
        "{output}"
    );
    terminal.shows("Blocked by hook").await;
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\ntwo\nthree\n");

    terminal.enter("edit b.txt to accepted", asked).await;
    let tab = diff_opened(&terminal, "codex", 2, &b).await;
    accept_with_line(&session, &tab, "mine").await;
    terminal
        .wait_until("Codex to write the person's version", || async {
            (std::fs::read_to_string(&b).ok()? == "accepted\nmine\n").then_some(())
        })
        .await;
    terminal.shows("Done.").await;
    assert_eq!(decoy.logged(), "", "Codex asked the other program");

    // `:PiIde mcp`'s command for Codex, run as printed: Codex keeps the
    // variable's name, and the agent terminal's Codex has the token in it.
    let (add, token) = {
        let answer = session
            .lua(
                "local status = require('pi-ide').status()
                 local add = require('pi-ide.commands').codex_mcp_add(require('pi-ide.host').mcp())
                 local env = require('pi-ide.agent.specs').environment(require('pi-ide.agent.specs').get('codex'), status)
                 return { add, env.PI_IDE_MCP_TOKEN }",
            )
            .await;
        (answer[0].as_str().unwrap().to_owned(), answer[1].clone())
    };
    let (_, lock) = session.lockfile().await;
    assert_eq!(token, lock["authToken"]);
    let added = std::process::Command::new("sh")
        .args([
            "-c",
            &add.replacen("codex ", &format!("node '{}' ", codex.display()), 1),
        ])
        .env("HOME", &*home)
        .env("CODEX_HOME", &codex_home)
        .current_dir(&work)
        .output()
        .unwrap();
    assert!(added.status.success(), "{added:?}");
    let config = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
    assert!(config.contains("[mcp_servers.nvim]"), "{config}");
    assert!(
        config.contains(&format!("url = {:?}", lock["mcpUrl"].as_str().unwrap())),
        "{config}"
    );
    assert!(
        config.contains("bearer_token_env_var = \"PI_IDE_MCP_TOKEN\""),
        "{config}"
    );
    assert!(
        !config.contains(token.as_str().unwrap()),
        "the token went into Codex's config"
    );
}
