//! Large `openDiff`s as an agent sends them, from a client outside the
//! host's crate (Node's WebSocket, `large_diff_agent.mjs`): a 1 MB and a
//! 4 MB proposal (a change every 200 lines, `sparse`, or every few lines,
//! `dense`), into a Neovim with a UI attached so it redraws as a terminal
//! would. Figures per plugin:
//!
//! * `_longest_freeze`: the longest gap between two `vim.schedule`
//!   callbacks posted every millisecond, from the send until Neovim has
//!   drawn the diff and gone quiet; `_longest_wait`, the longest wait of one
//!   callback from posting to running, which cannot see work inside one
//!   event (a seam call decoding its arguments: no uv timer fires there
//!   either) and so says less; `_longest_busy`, the most CPU time Neovim
//!   spent between two callbacks, the freeze a machine with a core to
//!   spare would see; `_nvim_cpu`, all of Neovim's CPU time until then but
//!   the probe's;
//!   `…_rejected_…` the same from the rejection until Neovim is quiet
//!   again (the tab closed); `large_diff_idle_…` the same over a second
//!   with no diff, the floor a loaded machine sets;
//! * `_until_both_shown`: from the send until two windows of one tab show
//!   the whole of both sides (line count, last line and the first line
//!   that differs);
//! * `_nvim_rss_peak_above_idle` (and for ours `_host_rss_…`): the peak RSS
//!   during the 4 MB diffs over the RSS before any, `_rss_after_3s_above_idle`
//!   3 s after the last one was rejected, the agent still connected.
//!
//! With `PI_IDE_LUA_REFERENCE=<checkout of ldelossa/pi-ide.nvim>` and
//! `PI_IDE_CLAUDECODE_REFERENCE=<checkout of coder/claudecode.nvim>` the
//! same figures are taken of those pure-Lua plugins in the same run, as
//! `…_lua_reference` and `…_claudecode`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::common::{Session, eventually};
use crate::editor::{STALL_PROBE, attach_ui, proposal_of};
use crate::{median, report};

const RUNS: usize = 3;

/// Which plugin a Neovim runs, and how to drive it.
struct Plugin {
    /// Suffix of its figures ("" for ours).
    label: &'static str,
    root: PathBuf,
    /// Lua that sets it up.
    setup: String,
    /// Where it writes its lockfile, below the session's directories.
    lock_in_claude_dir: bool,
    /// The auth header and subprotocol its agents use.
    header: &'static str,
    subprotocol: &'static str,
    /// Lua that rejects the open diff and closes its windows.
    reject: &'static str,
    /// Whether the host is a process of its own (ours).
    host: bool,
}

/// Run in every callback of the stall probe (`STALL_PROBE`): the first
/// moment two windows of one tab show `_G.large.want`'s two sides.
const SHOWN: &str = "
  _G.large = {}
  local api = vim.api
  local function matches(buf, side)
    if api.nvim_buf_line_count(buf) ~= side.count then return false end
    for _, check in ipairs(side.lines) do
      local got = api.nvim_buf_get_lines(buf, check[1], check[1] + 1, false)[1]
      if got ~= check[2] then return false end
    end
    return true
  end
  local function shown(want)
    for _, tab in ipairs(api.nvim_list_tabpages()) do
      local old, new
      for _, win in ipairs(api.nvim_tabpage_list_wins(tab)) do
        local buf = api.nvim_win_get_buf(win)
        if not old and matches(buf, want.old) then old = win
        elseif not new and matches(buf, want.new) then new = win end
      end
      if old and new then return true end
    end
    return false
  end
  _G.stall.each = function(now)
    local want = _G.large.want
    if want and not _G.large.shown_at and shown(want) then _G.large.shown_at = now end
  end";

pub async fn run() {
    let mut plugins = vec![Plugin {
        label: "",
        root: crate::common::repo_root().to_path_buf(),
        setup: format!(
            "require('pi-ide').setup({{ bin = '{}' }})",
            env!("CARGO_BIN_EXE_pi-ide")
        ),
        lock_in_claude_dir: false,
        header: "x-pi-ide-authorization",
        subprotocol: "",
        reject: "require('pi-ide.diff').reject(_G.large.tab)",
        host: true,
    }];
    if let Ok(root) = std::env::var("PI_IDE_LUA_REFERENCE") {
        plugins.push(Plugin {
            label: "_lua_reference",
            root: root.into(),
            setup: "require('pi-ide').setup({})".into(),
            lock_in_claude_dir: false,
            header: "x-pi-ide-authorization",
            subprotocol: "",
            // Closing its tab rejects.
            reject: "vim.cmd('silent! 1tabnext | silent! tabonly')",
            host: false,
        });
    }
    if let Ok(root) = std::env::var("PI_IDE_CLAUDECODE_REFERENCE") {
        plugins.push(Plugin {
            label: "_claudecode",
            root: root.into(),
            setup: "require('claudecode').setup({ log_level = 'error' })".into(),
            lock_in_claude_dir: true,
            header: "x-claude-code-ide-authorization",
            subprotocol: "mcp",
            // What Claude does after a rejection: close the tab.
            reject: "local diff = require('claudecode.diff')
                     for name in pairs(diff._get_active_diffs()) do
                       diff._resolve_diff_as_rejected(name)
                       diff._cleanup_diff_state(name, 'rejected')
                     end
                     vim.cmd('silent! only')",
            host: false,
        });
    }
    for plugin in &plugins {
        measure(plugin).await;
    }
}

async fn measure(plugin: &Plugin) {
    let session = Session::spawn_plugin(&plugin.root).await;
    attach_ui(&session).await;
    session.exec(&plugin.setup).await;
    let lock_dir = if plugin.lock_in_claude_dir {
        session.state_dir.join("claude/ide")
    } else {
        session.lock_dir.clone()
    };
    let (port, token) = lockfile(&lock_dir).await;
    let mut agent = NodeAgent::start(port, plugin.header, &token, plugin.subprotocol).await;
    session.exec(STALL_PROBE).await;
    session.exec(SHOWN).await;
    let nvim_pid = session
        .lua("return vim.fn.getpid()")
        .await
        .as_i64()
        .unwrap();
    let host_pid = if plugin.host {
        Some(crate::load_driver::host_pid(&session).await)
    } else {
        None
    };
    let pids: Vec<(&str, i64)> = [Some(("nvim", nvim_pid)), host_pid.map(|p| ("host", p))]
        .into_iter()
        .flatten()
        .collect();
    let idle: Vec<u64> = pids.iter().map(|(_, p)| rss(*p, "VmRSS")).collect();
    // What the probe sees with nothing to do: the floor the machine sets.
    let mut quiet = vec![];
    for _ in 0..RUNS {
        session.exec("_G.stall.reset()").await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        quiet.push(Stalls::read(&session).await);
    }
    Stalls::report(&format!("large_diff_idle_{{}}{}", plugin.label), quiet);
    let mut peaks = vec![0u64; pids.len()];
    let mut run = 0;
    for (size, bytes) in [("1MB", 1 << 20), ("4MB", 4 << 20)] {
        for dense in [false, true] {
            let shape = if dense { "dense" } else { "sparse" };
            let (mut stalls, mut shown, mut closing) = (vec![], vec![], vec![]);
            for _ in 0..RUNS {
                run += 1;
                let large = bytes == 4 << 20;
                if large {
                    pids.iter().for_each(|(_, p)| reset_peak(*p));
                }
                let (stalled, until, closed) =
                    one_diff(&session, &mut agent, plugin, run, bytes, dense).await;
                stalls.push(stalled);
                closing.push(closed);
                shown.push(until);
                if large {
                    for (peak, (_, p)) in peaks.iter_mut().zip(&pids) {
                        *peak = (*peak).max(rss(*p, "VmHWM"));
                    }
                }
            }
            let name = |what: &str| format!("large_diff_{size}_{shape}_{what}{}", plugin.label);
            Stalls::report(&name("{}"), stalls);
            Stalls::report(&name("rejected_{}"), closing);
            report(&name("until_both_shown"), median(shown), "ms");
        }
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let alive = agent.call("tools/list").await;
    assert!(!alive.is_empty(), "the agent is still connected");
    for (i, (who, pid)) in pids.iter().enumerate() {
        let mib = |kib: u64| kib as f64 / 1024.0;
        let name = |what: &str| format!("large_diff_4MB_{who}_rss_{what}{}", plugin.label);
        report(&name("idle"), mib(idle[i]), "MiB");
        report(
            &name("peak_above_idle"),
            mib(peaks[i]) - mib(idle[i]),
            "MiB",
        );
        report(
            &name("after_3s_above_idle"),
            mib(rss(*pid, "VmRSS")) - mib(idle[i]),
            "MiB",
        );
    }
}

/// What the stall probe saw, in ms: the longest gap between its callbacks
/// (`freeze`), the longest wait of one callback (`wait`, blind to work
/// inside one event), the most CPU time between two (`busy`) and all of
/// Neovim's CPU time (`cpu`) but the probe's own.
struct Stalls {
    freeze: f64,
    wait: f64,
    busy: f64,
    cpu: f64,
}

impl Stalls {
    async fn read(session: &Session) -> Stalls {
        let s = session
            .lua("local s = _G.stall; return { s.max, s.wait, s.busy, s.cpu() }")
            .await;
        let ms = |i: usize| s[i].as_f64().unwrap() / 1e6;
        Stalls {
            freeze: ms(0),
            wait: ms(1),
            busy: ms(2),
            cpu: ms(3),
        }
    }

    /// The medians, named by `pattern` with `{}` for the figure.
    fn report(pattern: &str, sample: Vec<Stalls>) {
        let figure = |what: &str, of: fn(&Stalls) -> f64| {
            let name = pattern.replace("{}", what);
            report(&name, median(sample.iter().map(of).collect()), "ms");
        };
        figure("longest_freeze", |s| s.freeze);
        figure("longest_wait", |s| s.wait);
        figure("longest_busy", |s| s.busy);
        figure("nvim_cpu", |s| s.cpu);
    }
}

/// One diff, sent, shown, settled and rejected: what the probe saw until
/// it settled, the time until both sides showed (ms), and what the probe
/// saw from the rejection until Neovim settled again.
async fn one_diff(
    session: &Session,
    agent: &mut NodeAgent,
    plugin: &Plugin,
    run: usize,
    bytes: usize,
    dense: bool,
) -> (Stalls, f64, Stalls) {
    let (original, proposal) = proposal_of(bytes, dense);
    // A file of its own each time, so no buffer of an earlier run helps.
    let path = session.write_file(&format!("large_{run}.rs"), &original);
    let proposal_file = session.write_file(&format!("proposal_{run}.txt"), &proposal);
    let tab = format!("large-{run}");
    session
        .lua_with(
            "local want, tab = ...
             _G.large.want, _G.large.tab, _G.large.shown_at = want, tab, nil
             _G.stall.reset()",
            vec![want(&original, &proposal), json!(tab)],
        )
        .await;
    let sent = agent.open(&path, &proposal_file, &tab).await;
    let shown_at = eventually("both sides shown", || async {
        session.lua("return _G.large.shown_at").await.as_f64()
    })
    .await;
    let stalls = settled(session).await;
    session.exec("_G.stall.reset()").await;
    session.exec(plugin.reject).await;
    let reply = agent.reply(&tab).await;
    assert_eq!(reply, "DIFF_REJECTED", "{}", plugin.label);
    let closing = settled(session).await;
    session.exec("vim.cmd('silent! %bwipeout!')").await;
    (stalls, (shown_at - sent) / 1e6, closing)
}

/// What `SHOWN` looks for: each side's line count, last line and the first
/// line where the two differ.
fn want(original: &str, proposal: &str) -> Value {
    let (old, new): (Vec<&str>, Vec<&str>) =
        (original.lines().collect(), proposal.lines().collect());
    let first = old.iter().zip(&new).position(|(a, b)| a != b).unwrap_or(0);
    let side = |lines: &[&str]| {
        json!({
            "count": lines.len(),
            "lines": [[first, lines[first]], [lines.len() - 1, lines[lines.len() - 1]]],
        })
    };
    json!({ "old": side(&old), "new": side(&new) })
}

/// What the probe saw once its longest gap has not grown for 300 ms.
async fn settled(session: &Session) -> Stalls {
    let mut last = -1.0;
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let stalls = Stalls::read(session).await;
        if stalls.freeze == last {
            return stalls;
        }
        last = stalls.freeze;
    }
}

/// The port and token of the one lockfile in `dir`.
async fn lockfile(dir: &Path) -> (u16, String) {
    eventually("the lockfile", || async {
        let entry = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .find(|e| e.path().extension().is_some_and(|x| x == "lock"))?;
        let port = entry.path().file_stem()?.to_str()?.parse().ok()?;
        let lock: Value = serde_json::from_slice(&std::fs::read(entry.path()).ok()?).ok()?;
        Some((port, lock["authToken"].as_str()?.to_owned()))
    })
    .await
}

/// `field` (`VmRSS`, `VmHWM`) of process `pid`, in KiB.
fn rss(pid: i64, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|value| value.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Starts a new peak (`VmHWM`) at the current RSS.
fn reset_peak(pid: i64) {
    let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
}

/// The Node agent, driven over its stdin and stdout.
struct NodeAgent {
    _child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl NodeAgent {
    async fn start(port: u16, header: &str, token: &str, subprotocol: &str) -> NodeAgent {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bench/large_diff_agent.mjs");
        let mut child = Command::new("node")
            .arg("--experimental-websocket")
            .arg("--no-warnings")
            .arg(script)
            .args([&port.to_string(), header, token, subprotocol])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("node (>= 20) on PATH");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut agent = NodeAgent {
            _child: child,
            stdin,
            stdout,
        };
        agent.reply("init").await;
        agent
    }

    async fn send(&mut self, command: Value) {
        let line = format!("{command}\n");
        self.stdin.write_all(line.as_bytes()).await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let deadline = Instant::now() + Duration::from_secs(120);
        let line = tokio::time::timeout_at(deadline.into(), self.stdout.next_line())
            .await
            .expect("the agent answers within 2 minutes")
            .unwrap()
            .expect("the agent is running");
        serde_json::from_str(&line).unwrap()
    }

    /// Sends the proposal; returns when it was sent (ns, CLOCK_MONOTONIC).
    async fn open(&mut self, path: &Path, proposal_file: &Path, tab: &str) -> f64 {
        self.send(
            json!({"open": {"id": tab, "path": path, "proposal_file": proposal_file, "tab": tab}}),
        )
        .await;
        let sent = self.next().await;
        assert!(sent["error"].is_null(), "{sent}");
        sent["sent_ns"].as_str().unwrap().parse().unwrap()
    }

    /// The first text of the reply to `id`.
    async fn reply(&mut self, id: &str) -> String {
        loop {
            let message = self.next().await;
            assert!(message["error"].is_null(), "{message}");
            if message["reply"] == id {
                return message["text"].as_str().unwrap_or_default().to_owned();
            }
        }
    }

    async fn call(&mut self, method: &str) -> String {
        self.send(json!({"call": {"id": method, "method": method}}))
            .await;
        self.reply(method).await
    }
}
