//! Several agent terminals, their arguments, `:PiIde ask`, focus after a
//! diff, and the tmux provider. A shell script stands in for each agent:
//! it records its arguments, environment and cwd, asks for bracketed
//! pastes as agent TUIs do, and records every byte it reads.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{Scratch, Session, eventually, repo_root, scratch_dir};
use crate::mcp_edits::{ok, start_client};
use crate::mcp_http::endpoint;
use crate::pi_extension::require_node_deps;

fn stand_in(dir: &Path) -> PathBuf {
    let script = dir.join("agent.sh");
    std::fs::write(
        &script,
        format!(
            r#"#!/bin/sh
out='{}'/$$
mkdir -p "$out"
for arg in "$@"; do printf '%s\n' "$arg"; done > "$out/args"
env > "$out/env"
pwd > "$out/pwd"
printf '\033[?2004h'
stty raw -echo
touch "$out/ready"
exec cat > "$out/stdin"
"#,
            dir.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// What one start of the stand-in recorded.
struct Run {
    dir: PathBuf,
    args: Vec<String>,
    env: HashMap<String, String>,
    cwd: PathBuf,
}

impl Run {
    fn stdin(&self) -> String {
        std::fs::read_to_string(self.dir.join("stdin")).unwrap_or_default()
    }
}

/// Waits for the stand-in started as process `pid` (or a child of it).
async fn run_of(dir: &Path, pid: u64) -> Run {
    let dir = eventually("the stand-in agent to start", || async {
        std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.join("ready").exists()
                    && p.file_name()
                        .and_then(|n| n.to_str())
                        .and_then(|n| n.parse::<u64>().ok())
                        .is_some_and(|n| n == pid || parent_chain(n).contains(&pid))
            })
    })
    .await;
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    Run {
        args: read("args").lines().map(str::to_owned).collect(),
        env: read("env")
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
        cwd: PathBuf::from(read("pwd").trim()),
        dir,
    }
}

fn parent_chain(mut pid: u64) -> Vec<u64> {
    let mut chain = vec![];
    for _ in 0..16 {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            break;
        };
        let Some(ppid) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse().ok())
        else {
            break;
        };
        chain.push(ppid);
        pid = ppid;
    }
    chain
}

async fn session(dir: &Scratch, agent: &str) -> Session {
    let script = stand_in(dir);
    let cmd = format!("{{ '{}' }}", script.display());
    let session = Session::start_with(&format!(
        "{{ agent = {{ claude = {{ cmd = {cmd} }}, pi = {{ cmd = {cmd} }},
                      agents = {{ mine = {{ cmd = {cmd}, kind = 'pi' }} }}, {agent} }} }}"
    ))
    .await;
    session.wait_clients(0).await;
    session
}

async fn agents(session: &Session) -> Value {
    session.lua("return require('pi-ide.agent').list()").await
}

/// Waits for `n` running agents and returns them.
async fn wait_agents(session: &Session, n: usize) -> Vec<Value> {
    eventually(&format!("{n} agents"), || async {
        let list = agents(session).await;
        let list = list.as_array().cloned().unwrap_or_default();
        (list.len() == n && list.iter().all(|a| a["pid"].is_u64())).then_some(list)
    })
    .await
}

#[tokio::test]
async fn arguments_pass_through_and_each_agent_has_a_named_terminal_of_its_own() {
    let dir = scratch_dir("agents-two");
    let session = session(&dir, "").await;
    session.exec("vim.cmd('PiIde agent claude --resume')").await;
    let first = wait_agents(&session, 1).await.remove(0);
    let run = run_of(&dir, first["pid"].as_u64().unwrap()).await;
    assert_eq!(run.args, ["--resume"]);
    assert_eq!(run.cwd, session.work_dir.canonicalize().unwrap());
    assert!(run.env.contains_key("CLAUDE_CODE_SSE_PORT"));

    session
        .exec("vim.cmd('PiIde agent new claude --model x')")
        .await;
    let both = wait_agents(&session, 2).await;
    let run = run_of(&dir, both[1]["pid"].as_u64().unwrap()).await;
    assert_eq!(run.args, ["--model", "x"]);
    let buffers = session
        .lua_with(
            "return vim.tbl_map(function(b)
               return { name = vim.api.nvim_buf_get_name(b), filetype = vim.bo[b].filetype,
                        agent = vim.b[b].pi_ide_agent, listed = vim.bo[b].buflisted }
             end, ...)",
            vec![json!([both[0]["buf"], both[1]["buf"]])],
        )
        .await;
    assert_eq!(
        buffers,
        json!([
            {"name": "pi-ide://agent/claude", "filetype": "pi-ide-agent", "agent": "claude", "listed": true},
            {"name": "pi-ide://agent/claude#2", "filetype": "pi-ide-agent", "agent": "claude", "listed": true},
        ])
    );

    // With two running, `:PiIde agent` asks which (from elsewhere).
    session
        .exec(
            "vim.cmd('wincmd t')
             vim.ui.select = function(items, opts, choose)
               _G.offered = vim.tbl_map(opts.format_item, items)
               choose(items[1])
             end
             vim.cmd('PiIde agent')",
        )
        .await;
    let offered = session.lua("return _G.offered").await;
    assert_eq!(offered.as_array().unwrap().len(), 2, "{offered}");
    assert!(
        offered[1].as_str().unwrap().starts_with("claude#2"),
        "{offered}"
    );
    assert_eq!(
        session.lua("return vim.api.nvim_get_current_buf()").await,
        both[0]["buf"]
    );
    // Completion knows the names, user agents included.
    let completed = session
        .lua("return require('pi-ide.commands').complete('', 'PiIde agent ')")
        .await;
    assert_eq!(
        completed,
        json!([
            "focus", "new", "claude", "pi", "gemini", "qwen", "codex", "opencode", "mine"
        ])
    );
    let completed = session
        .lua("return require('pi-ide.commands').complete('m', 'PiIde agent new m')")
        .await;
    assert_eq!(completed, json!(["mine"]));
}

#[tokio::test]
async fn pi_gets_this_plugins_extensions_and_connects_to_this_neovim() {
    let dir = scratch_dir("agents-pi");
    let session = session(&dir, "").await;
    let mcp_url = session
        .lua("return require('pi-ide').status().mcp_url")
        .await;
    session.exec("vim.cmd('PiIde agent mine --model y')").await;
    let agent = wait_agents(&session, 1).await.remove(0);
    let run = run_of(&dir, agent["pid"].as_u64().unwrap()).await;
    let root = crate::common::repo_root();
    assert_eq!(
        run.args,
        [
            "-e".to_owned(),
            root.join("pi/review.ts").display().to_string(),
            "-e".to_owned(),
            root.join("pi/nvim.ts").display().to_string(),
            "--model".to_owned(),
            "y".to_owned()
        ]
    );
    assert_eq!(json!(run.env["PI_IDE_NVIM_URL"]), mcp_url);
    assert!(!run.env.contains_key("CLAUDE_CODE_SSE_PORT"));

    // Each can be turned off.
    session
        .exec(
            "local ext = require('pi-ide.config').values.agent.pi.extensions
             ext.review, ext.nvim = false, false
             vim.cmd('PiIde agent new pi')",
        )
        .await;
    let both = wait_agents(&session, 2).await;
    let run = run_of(&dir, both[1]["pid"].as_u64().unwrap()).await;
    assert!(run.args.is_empty(), "{:?}", run.args);
    assert!(!run.env.contains_key("PI_IDE_NVIM_URL"));
}

#[tokio::test]
async fn ask_pastes_into_the_agents_input_and_presses_enter_only_after_a_final_newline() {
    let dir = scratch_dir("agents-ask");
    let session = session(&dir, "").await;
    let path = session.write_file("ask.lua", "one\ntwo\nthree\nfour\n");
    session
        .exec(&format!("vim.cmd.edit('{}')", path.display()))
        .await;
    session.exec("vim.cmd('PiIde agent claude')").await;
    let claude = wait_agents(&session, 1).await.remove(0);
    let run = run_of(&dir, claude["pid"].as_u64().unwrap()).await;
    session
        .exec("vim.cmd('wincmd p'); vim.cmd('2,3PiIde ask explain  this')")
        .await;
    let pasted = "\u{1b}[200~@ask.lua#L2-3 explain  this\u{1b}[201~";
    eventually("the paste in Claude's input", || async {
        (run.stdin() == pasted).then_some(())
    })
    .await;
    assert_eq!(
        session.lua("return vim.b.pi_ide_agent").await,
        "claude",
        "the agent's terminal has the cursor"
    );
    session
        .exec(&format!(
            "require('pi-ide.agent.ask').ask('go\\n', vim.fn.bufnr('{}'))",
            path.display()
        ))
        .await;
    let sent = format!("{pasted}\u{1b}[200~go\u{1b}[201~\r");
    eventually("the text and its Enter", || async {
        (run.stdin() == sent).then_some(())
    })
    .await;

    // Other agents get the lines themselves.
    session.exec("vim.cmd('PiIde agent new mine')").await;
    let mine = wait_agents(&session, 2).await.remove(1);
    let run = run_of(&dir, mine["pid"].as_u64().unwrap()).await;
    session
        .exec(&format!(
            "vim.cmd.buffer(vim.fn.bufnr('{}')); vim.cmd('4PiIde ask why?')",
            path.display()
        ))
        .await;
    let quoted = "\u{1b}[200~ask.lua:4\n```lua\nfour\n```\nwhy?\u{1b}[201~";
    eventually("the quoted lines in the agent's input", || async {
        (run.stdin() == quoted).then_some(())
    })
    .await;
}

#[tokio::test]
async fn deciding_a_diff_goes_back_to_the_terminal_of_the_agent_that_proposed_it() {
    let dir = scratch_dir("agents-focus");
    let session = session(&dir, "").await;
    session.exec("vim.cmd('PiIde agent claude')").await;
    session.exec("vim.cmd('PiIde agent new claude')").await;
    let both = wait_agents(&session, 2).await;
    // The first agent's process says who it is, as Claude does.
    let mut claude = session.connect_claude().await;
    let pid = both[0]["pid"].as_u64().unwrap();
    claude
        .send_raw(
            &json!({"jsonrpc": "2.0", "method": "ide_connected", "params": {"pid": pid}})
                .to_string(),
        )
        .await;
    eventually("the client's pid", || async {
        let clients = session
            .lua("return require('pi-ide').status().clients")
            .await;
        (clients[0]["pid"] == pid).then_some(())
    })
    .await;
    let path = session.write_file("focus.txt", "old\n");
    session.exec("vim.cmd('wincmd t')").await;
    let id = claude.open_diff(&path, "new\n", "d1").await;
    session.wait_diffs(1).await;
    session.exec("require('pi-ide.diff').show('d1')").await;
    session.exec("require('pi-ide.diff').reject('d1')").await;
    claude.response(&id).await;
    eventually("the first agent's terminal to have the cursor", || async {
        let here = session
            .lua("return { buf = vim.api.nvim_get_current_buf(), mode = vim.api.nvim_get_mode().mode }")
            .await;
        (here == json!({"buf": both[0]["buf"], "mode": "t"})).then_some(())
    })
    .await;

    // A diff from an agent outside Neovim leaves the cursor where it is.
    let mut other = session.connect().await;
    // pi says nothing about itself: the host finds this process for it,
    // off its event loop.
    eventually("the host to find the second client's process", || async {
        let clients = session
            .lua("return require('pi-ide').status().clients")
            .await;
        (clients[1]["pid"] == std::process::id()).then_some(())
    })
    .await;
    session
        .exec("vim.cmd('stopinsert'); vim.cmd('wincmd t')")
        .await;
    let id = other.open_diff(&path, "other\n", "d2").await;
    session.wait_diffs(1).await;
    session.exec("require('pi-ide.diff').show('d2')").await;
    let diff_buf = session.lua("return vim.api.nvim_get_current_buf()").await;
    session.exec("require('pi-ide.diff').reject('d2')").await;
    other.response(&id).await;
    eventually("the diff to close", || async {
        (session.lua("return #require('pi-ide.diff').list()").await == 0).then_some(())
    })
    .await;
    let here = session.lua("return vim.b.pi_ide_agent").await;
    assert!(
        here.is_null(),
        "moved into an agent terminal: {here}, diff was {diff_buf}"
    );
}

/// A tmux server of the test's own, killed when dropped.
struct Tmux(String);

impl Tmux {
    fn start() -> Tmux {
        let tmux = Tmux(format!("pi-ide-agents-{}", uuid::Uuid::new_v4().simple()));
        let started = tmux.run(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            "120",
            "-y",
            "40",
            "sleep 600",
        ]);
        assert!(
            started.status.success(),
            "the tmux test needs tmux: {started:?}"
        );
        tmux
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new("tmux")
            .args(["-L", &self.0])
            .args(args)
            .output()
            .expect("tmux (apt-get install tmux; .ci/run installs it)")
    }

    fn query(&self, args: &[&str]) -> String {
        String::from_utf8_lossy(&self.run(args).stdout)
            .trim()
            .to_owned()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

#[tokio::test]
async fn in_tmux_the_agent_gets_a_pane_wired_the_same_way() {
    let tmux = Tmux::start();
    let dir = scratch_dir("agents-tmux");
    let session = session(&dir, "position = 'tmux'").await;
    // This Neovim runs "inside" the test's tmux, in its first pane.
    let socket = tmux.query(&["display-message", "-p", "#{socket_path},#{pid},0"]);
    let pane = tmux.query(&["display-message", "-p", "#{pane_id}"]);
    session
        .lua_with(
            "vim.env.TMUX, vim.env.TMUX_PANE = ...",
            vec![json!(socket), json!(pane)],
        )
        .await;
    session.exec("vim.cmd('PiIde agent claude --resume')").await;
    let agent = wait_agents(&session, 1).await.remove(0);
    let agent_pane = agent["pane"].as_str().expect("a pane").to_owned();
    let panes = tmux.query(&["list-panes", "-F", "#{pane_id} #{pane_pid}"]);
    assert!(
        panes.contains(&format!("{agent_pane} {}", agent["pid"])),
        "{panes}"
    );
    assert_eq!(session.lua("return #vim.api.nvim_list_wins()").await, 1);
    let run = run_of(&dir, agent["pid"].as_u64().unwrap()).await;
    assert_eq!(run.args, ["--resume"]);
    assert_eq!(run.cwd, session.work_dir.canonicalize().unwrap());
    let port = session.lua("return require('pi-ide').status().port").await;
    assert_eq!(
        json!(run.env["CLAUDE_CODE_SSE_PORT"]),
        json!(port.to_string())
    );
    assert!(run.env["no_proxy"].contains("127.0.0.1"), "{:?}", run.env);

    // `:PiIde agent` goes to its pane.
    tmux.run(&["select-pane", "-t", &pane]);
    session.exec("vim.cmd('PiIde agent')").await;
    eventually("the agent's pane to be active", || async {
        (tmux.query(&["display-message", "-p", "#{pane_id}"]) == agent_pane).then_some(())
    })
    .await;
    // And `:PiIde ask` pastes into it.
    let path = session.write_file("t.txt", "a\n");
    session
        .exec(&format!(
            "vim.cmd.edit('{}'); vim.cmd('1PiIde ask look')",
            path.display()
        ))
        .await;
    eventually("the paste in the pane", || async {
        (run.stdin() == "\u{1b}[200~@t.txt#L1 look\u{1b}[201~").then_some(())
    })
    .await;
}

/// An agent that makes MCP calls from its terminal: `client.mjs` with the
/// agent's arguments (url, token, calls), its report in `dir/report.json`;
/// then it waits, as an agent does.
fn mcp_agent(dir: &Path) -> PathBuf {
    let script = dir.join("mcp-agent.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nnode '{}' \"$1\" \"$2\" \"$3\" > '{}/report.tmp' && mv '{}/report.tmp' '{}/report.json'\nexec cat > /dev/null\n",
            repo_root().join("tests/mcp/client.mjs").display(),
            dir.display(),
            dir.display(),
            dir.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// Waits for `n` diffs, then accepts the first, shown, from another
/// window as the person would.
async fn accept_a_diff(session: &Session, n: usize) {
    let tab = eventually(&format!("{n} diffs of the edit"), || async {
        let list = session.lua("return require('pi-ide.diff').list()").await;
        let list = list.as_array()?;
        (list.len() == n && list.iter().all(|d| d["loading"] == false))
            .then(|| list[0]["tab_name"].as_str().unwrap().to_owned())
    })
    .await;
    session
        .exec("vim.cmd('stopinsert'); vim.cmd('wincmd t')")
        .await;
    session
        .lua_with(
            "local tab = ...; require('pi-ide.diff').show(tab); require('pi-ide.diff').accept(tab)",
            vec![json!(tab)],
        )
        .await;
}

/// The agent terminal `vim.b.pi_ide_agent` names where the cursor is once
/// what the last decision scheduled has run (`vim.schedule` keeps order).
async fn agent_here_after_the_decision(session: &Session) -> Value {
    session
        .exec("_G.settled = false; vim.schedule(function() _G.settled = true end)")
        .await;
    eventually("Neovim to run what the decision scheduled", || async {
        (session.lua("return _G.settled").await == true).then_some(())
    })
    .await;
    session.lua("return vim.b.pi_ide_agent").await
}

const A_PY: &str = "a = 1\n";
const B_PY: &str = "b = 1\n";
const PATCH: &str = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-b = 1\n+b = 2\n";

#[tokio::test]
async fn an_mcp_edit_decided_goes_back_to_the_terminal_of_the_agent_that_asked() {
    require_node_deps();
    let dir = scratch_dir("agents-mcp-focus");
    let script = mcp_agent(&dir);
    let session = Session::start_with(&format!(
        "{{ agent = {{ agents = {{ editor = {{ cmd = {{ '{}' }} }} }} }} }}",
        script.display()
    ))
    .await;
    let (url, token) = endpoint(&session).await;
    session.write_file("a.py", A_PY);
    session.write_file("b.py", B_PY);
    let calls = json!([{"name": "apply_patch", "arguments": {"patch": PATCH}}]);
    session
        .lua_with(
            "require('pi-ide.agent').new('editor', { ... })",
            vec![json!(url), json!(token), json!(calls.to_string())],
        )
        .await;
    let agent = wait_agents(&session, 1).await.remove(0);
    // One file of the edit decided, the other still waiting: the cursor
    // stays with the diffs.
    accept_a_diff(&session, 2).await;
    let here = agent_here_after_the_decision(&session).await;
    assert!(here.is_null(), "went to {here} with a diff waiting");
    // The last one decided: back to the agent that asked.
    accept_a_diff(&session, 1).await;
    eventually("the agent's terminal to have the cursor", || async {
        let here = session
            .lua("return { buf = vim.api.nvim_get_current_buf(), mode = vim.api.nvim_get_mode().mode }")
            .await;
        (here == json!({"buf": agent["buf"], "mode": "t"})).then_some(())
    })
    .await;
    let report = eventually("the agent's call to return", || async {
        std::fs::read_to_string(dir.join("report.json")).ok()
    })
    .await;
    assert!(report.contains("applied and saved: a.py, b.py"), "{report}");

    // An MCP client outside any agent terminal leaves the cursor where it is.
    let calls = json!([{"name": "replace_text_in_file",
        "arguments": {"pathInProject": "a.py", "oldText": "a = 2", "newText": "a = 3"}}]);
    let outside = start_client(&(url, token), calls, false);
    accept_a_diff(&session, 1).await;
    assert!(
        ok(&outside.result().await).contains("applied and saved: a.py"),
        "the outside edit"
    );
    let here = agent_here_after_the_decision(&session).await;
    assert!(here.is_null(), "moved into an agent terminal: {here}");
}
