//! Our plugin and the pure-Lua reference (ldelossa/pi-ide.nvim, when
//! `PI_IDE_LUA_REFERENCE` points at a checkout) in the same run, driven by
//! an agent outside the crate: `ws_client.py` on Python's `websockets`, as
//! the harnesses are.
//!
//! * `ws_sequential_*`: one agent, 1,000 calls each of `ping`, `tools/list`
//!   and `tools/call getDiagnostics`, each waited for (p50, p99).
//! * `ws_host_frame_*`: the host's own time from a frame read to its reply
//!   written, for the same calls (`$PI_IDE_FRAME_TIMINGS`).
//! * `ws_load_*`: 8 agents × 2,000 requests, alternating `tools/list` and
//!   `getDiagnostics`, while the person moves the cursor and the
//!   diagnostics change; the agents share one Python process.
//! * `ws_load_processes_*`: the same with each agent in a process of its
//!   own, as agents are (one asyncio loop for eight measures its queue).
//!   `*_editor_cpu` is the CPU time Neovim and the host used meanwhile.
//!   Each load figure is the median of three rounds, the plugins in turn.
//! * `ws_load_node_*`: the one-process load from Node's own WebSocket
//!   (`ws_load.mjs`), as pi and Claude Code are, whose loop costs the
//!   agents less of each round trip than Python's.
//! * `startup_*`: `setup()` to the lockfile on disk, median of runs.
//! * `ws_memory_*`: host RSS idle, and 3 s after a 16 MiB message with the
//!   connection still open.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

use crate::common::python_tools::bench_tools;
use crate::common::{Session, fresh_dir, host_binary, repo_root};
use crate::diagnostics::{open_diagnosed, set_diagnostics};
use crate::load_driver::{host_pid, rss_kib};
use crate::{median, report};

const CALLS: usize = 1_000;
const AGENTS: usize = 8;
const REQUESTS: usize = 2_000;
const STARTUP_RUNS: usize = 7;
const LOAD_ROUNDS: usize = 3;
const LARGE_MESSAGE_BYTES: usize = 16 << 20;

/// The same options for every session: a short selection debounce, so the
/// cursor's moves reach the agents while they ask.
const OPTIONS: &str = "{ selection = { debounce_ms = 20 } }";

/// A plugin under measurement.
struct Plugin {
    label: &'static str,
    root: PathBuf,
    ours: bool,
}

pub async fn run() {
    let mut plugins = vec![Plugin {
        label: "ours",
        root: repo_root().to_path_buf(),
        ours: true,
    }];
    if let Ok(reference) = std::env::var("PI_IDE_LUA_REFERENCE") {
        plugins.push(Plugin {
            label: "lua_reference",
            root: PathBuf::from(reference),
            ours: false,
        });
    }
    if let Ok(claudecode) = std::env::var("PI_IDE_CLAUDECODE_REFERENCE") {
        plugins.push(Plugin {
            label: "claudecode",
            root: PathBuf::from(claudecode),
            ours: false,
        });
    }
    for plugin in &plugins {
        startup(plugin).await;
    }
    for plugin in plugins.iter().filter(|p| p.label != "claudecode") {
        sequential(plugin).await;
    }
    // Load figures swing with whatever else the machine runs: the plugins
    // take turns, and each figure is the median of the rounds.
    let mut rounds: Vec<Vec<(String, f64)>> = Vec::new();
    for _ in 0..LOAD_ROUNDS {
        let mut round = Vec::new();
        for plugin in plugins.iter().filter(|p| p.label != "claudecode") {
            round.extend(load(plugin, Agents::Python).await);
            round.extend(load_processes(plugin).await);
            round.extend(load(plugin, Agents::Node).await);
        }
        rounds.push(round);
    }
    for (at, (name, _)) in rounds[0].iter().enumerate() {
        report(name, median(rounds.iter().map(|r| r[at].1).collect()), "ms");
    }
    memory().await;
}

/// Neovim with `plugin` set up and a file with diagnostics open.
async fn session(plugin: &Plugin, env: &[(&str, &Path)]) -> Session {
    let session = if plugin.ours {
        Session::start_in(fresh_dir("work"), env, OPTIONS).await
    } else {
        let session = Session::spawn_plugin(&plugin.root).await;
        session
            .exec(&format!("require('pi-ide').setup({OPTIONS})"))
            .await;
        session
    };
    open_diagnosed(&session).await;
    session
}

async fn startup(plugin: &Plugin) {
    let mut sample = Vec::new();
    for _ in 0..STARTUP_RUNS {
        let session = Session::spawn_plugin(&plugin.root).await;
        let setup = match plugin.label {
            "ours" => format!(
                "require('pi-ide').setup({{ bin = '{}' }})",
                host_binary().display()
            ),
            "claudecode" => "require('claudecode').setup({})".to_owned(),
            _ => "require('pi-ide').setup({})".to_owned(),
        };
        let lock_dirs = [
            session.lock_dir.clone(),
            session.state_dir.join("claude/ide"),
        ];
        let started = Instant::now();
        session.exec(&setup).await;
        // A tight poll: tokio's timers tick in whole milliseconds.
        let deadline = started + Duration::from_secs(10);
        while !lock_dirs.iter().any(|dir| has_lockfile(dir)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_micros(50));
        }
        sample.push(started.elapsed().as_secs_f64() * 1e3);
    }
    report(
        &format!("startup_{}_setup_to_lockfile", plugin.label),
        median(sample),
        "ms",
    );
}

fn has_lockfile(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut entries| {
        entries.any(|e| e.is_ok_and(|e| e.path().extension().is_some_and(|x| x == "lock")))
    })
}

async fn sequential(plugin: &Plugin) {
    let timings = fresh_dir("timings").join("frames.txt");
    let session = session(plugin, &[("PI_IDE_FRAME_TIMINGS", &timings)]).await;
    let mut client = client(&session, &["sequential", &CALLS.to_string()]).await;
    let figures = next_line(&mut client.1).await;
    finish(client.0).await;
    for name in ["ping", "tools_list", "get_diagnostics"] {
        for q in ["p50", "p99"] {
            report(
                &format!("ws_sequential_{}_{name}_{q}", plugin.label),
                figures[name][q].as_f64().unwrap(),
                "ms",
            );
        }
    }
    if plugin.ours {
        host_frame_times(&timings).await;
    }
}

/// The host's own time per frame, as it wrote them when the agent left.
async fn host_frame_times(timings: &Path) {
    // Written when the agent leaves; a host that keeps none prints none.
    let mut text = String::new();
    for _ in 0..50 {
        text = std::fs::read_to_string(timings).unwrap_or_default();
        if text.lines().count() >= 3 * CALLS {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    if text.is_empty() {
        eprintln!("the host wrote no frame timings");
        return;
    }
    for (name, method) in [
        ("ping", "ping"),
        ("tools_list", "tools/list"),
        ("get_diagnostics", "tools/call getDiagnostics"),
    ] {
        let mut micros: Vec<f64> = text
            .lines()
            .filter_map(|line| line.rsplit_once(' '))
            .filter(|(label, _)| *label == method)
            .filter_map(|(_, ns)| ns.parse::<f64>().ok())
            .map(|ns| ns / 1e3)
            .collect();
        micros.sort_by(f64::total_cmp);
        let at = |q: f64| micros[((micros.len() - 1) as f64 * q).round() as usize];
        report(&format!("ws_host_frame_{name}_p50"), at(0.5), "us");
        report(&format!("ws_host_frame_{name}_p99"), at(0.99), "us");
    }
}

/// The program the agents of a one-process load run in.
#[derive(Clone, Copy)]
enum Agents {
    /// `ws_client.py load`, Python's `websockets`: figures `ws_load_*`.
    Python,
    /// `ws_load.mjs`, Node's own WebSocket: figures `ws_load_node_*`.
    Node,
}

async fn load(plugin: &Plugin, agents: Agents) -> Vec<(String, f64)> {
    let session = session(plugin, &[]).await;
    let (port, token) = endpoint(&session).await;
    one_process(plugin.label, agents, port, &token, (&session, plugin)).await
}

/// The load from one process, while the person works in the plugin's Neovim.
async fn one_process(
    label: &str,
    agents: Agents,
    port: u16,
    token: &str,
    (session, plugin): (&Session, &Plugin),
) -> Vec<(String, f64)> {
    let (clients, requests) = (AGENTS.to_string(), REQUESTS.to_string());
    let (child, mut lines, label) = match agents {
        Agents::Python => {
            let (child, lines) = client_at(port, token, &["load", &clients, &requests]).await;
            (child, lines, label.to_owned())
        }
        Agents::Node => {
            let (child, lines) = node_load(port, token, &clients, &requests);
            (child, lines, format!("node_{label}"))
        }
    };
    assert_eq!(next_line(&mut lines).await["ready"], true);
    let cpu_before = editor_cpu_ms(session, plugin).await;
    let figures = while_the_person_works(session, next_line(&mut lines)).await;
    let cpu = editor_cpu_ms(session, plugin).await - cpu_before;
    finish(child).await;
    assert_eq!(figures["answered"], AGENTS * REQUESTS, "{figures}");
    let mut figures: Vec<(String, f64)> = ["p50", "p99", "max"]
        .iter()
        .map(|q| (format!("ws_load_{label}_{q}"), figures[q].as_f64().unwrap()))
        .collect();
    figures.push((format!("ws_load_{label}_editor_cpu"), cpu));
    figures
}

async fn load_processes(plugin: &Plugin) -> Vec<(String, f64)> {
    let session = session(plugin, &[]).await;
    let mut agents = Vec::new();
    for _ in 0..AGENTS {
        let (child, mut lines) = client(&session, &["agent", &REQUESTS.to_string()]).await;
        assert_eq!(next_line(&mut lines).await["ready"], true);
        agents.push((child, lines));
    }
    for (child, _) in &mut agents {
        let stdin = child.stdin.as_mut().unwrap();
        stdin.write_all(b"go\n").await.unwrap();
        stdin.flush().await.unwrap();
    }
    let answers = while_the_person_works(
        &session,
        futures_util::future::join_all(agents.iter_mut().map(|(_, lines)| next_line(lines))),
    )
    .await;
    for (child, _) in agents {
        finish(child).await;
    }
    let mut all: Vec<f64> = answers
        .iter()
        .flat_map(|answer| answer["latencies"].as_array().unwrap().iter())
        .filter_map(Value::as_f64)
        .collect();
    assert_eq!(all.len(), AGENTS * REQUESTS);
    all.sort_by(f64::total_cmp);
    let at = |q: f64| all[((all.len() - 1) as f64 * q).round() as usize];
    [("p50", at(0.5)), ("p99", at(0.99)), ("max", at(1.0))]
        .into_iter()
        .map(|(q, value)| (format!("ws_load_processes_{}_{q}", plugin.label), value))
        .collect()
}

/// Runs `work` while the person moves the cursor every 2 ms and the
/// diagnostics change every 25 moves.
async fn while_the_person_works<T>(session: &Session, work: impl Future<Output = T>) -> T {
    tokio::pin!(work);
    let mut step = 0u64;
    loop {
        tokio::select! {
            done = &mut work => return done,
            () = tokio::time::sleep(Duration::from_millis(2)) => {
                session.input(if step.is_multiple_of(2) { "5j" } else { "5k" }).await;
                if step.is_multiple_of(25) {
                    set_diagnostics(session, step).await;
                }
                step += 1;
            }
        }
    }
}

/// Host RSS with an agent connected, before and 3 s after a large message.
async fn memory() {
    let session = session(
        &Plugin {
            label: "ours",
            root: repo_root().to_path_buf(),
            ours: true,
        },
        &[],
    )
    .await;
    let host = host_pid(&session).await;
    let (mut child, mut lines) =
        client(&session, &["hold", &LARGE_MESSAGE_BYTES.to_string()]).await;
    assert_eq!(next_line(&mut lines).await["ready"], true);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle = rss_kib(host);
    let stdin = child.stdin.as_mut().unwrap();
    stdin.write_all(b"send\n").await.unwrap();
    stdin.flush().await.unwrap();
    assert_eq!(next_line(&mut lines).await["answered"], true);
    let right_after = rss_kib(host);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let later = rss_kib(host);
    report("ws_memory_host_rss_idle", idle as f64 / 1024.0, "MiB");
    report(
        "ws_memory_host_rss_after_16mib_message",
        right_after as f64 / 1024.0,
        "MiB",
    );
    report(
        "ws_memory_host_rss_3s_after_16mib_message_above_idle",
        (later as f64 - idle as f64) / 1024.0,
        "MiB",
    );
    finish(child).await;
}

/// CPU time a process has used, in ms.
pub fn cpu_ms(pid: i64) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command's closing parenthesis; utime and stime are 14 and 15.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<f64>().ok())
        .sum();
    // SAFETY: sysconf only reads a constant.
    ticks * 1e3 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// Neovim's and (for ours) the host's CPU time, in ms.
async fn editor_cpu_ms(session: &Session, plugin: &Plugin) -> f64 {
    let nvim = i64::from(session.child.id().unwrap());
    let host = if plugin.ours {
        cpu_ms(host_pid(session).await)
    } else {
        0.0
    };
    cpu_ms(nvim) + host
}

/// The port and token of the WebSocket server in `session`.
async fn endpoint(session: &Session) -> (u16, String) {
    let (port, lock) = session.lockfile().await;
    (port, lock["authToken"].as_str().unwrap().to_owned())
}

/// Starts `ws_client.py MODE PORT TOKEN ARGS…` against `session`.
async fn client(session: &Session, args: &[&str]) -> (Child, Lines<BufReader<ChildStdout>>) {
    let (port, token) = endpoint(session).await;
    client_at(port, &token, args).await
}

/// Starts `node ws_load.mjs PORT TOKEN CLIENTS REQUESTS`.
fn node_load(
    port: u16,
    token: &str,
    clients: &str,
    requests: &str,
) -> (Child, Lines<BufReader<ChildStdout>>) {
    let mut node = Command::new("node");
    node.args(["--experimental-websocket", "--no-warnings"])
        .arg(repo_root().join("tests/bench/ws_load.mjs"))
        .args([&port.to_string(), token, clients, requests]);
    start_agents(node, "node (>= 20) on PATH")
}

/// Starts `ws_client.py MODE PORT TOKEN ARGS…`.
async fn client_at(
    port: u16,
    token: &str,
    args: &[&str],
) -> (Child, Lines<BufReader<ChildStdout>>) {
    let mut python = Command::new(bench_tools().join("python"));
    python
        .arg(repo_root().join("tests/bench/ws_client.py"))
        .arg(args[0])
        .arg(port.to_string())
        .arg(token)
        .args(&args[1..]);
    start_agents(python, "start ws_client.py")
}

/// Starts an agent program with piped stdin and stdout, its stdout as lines.
fn start_agents(mut command: Command, failing: &str) -> (Child, Lines<BufReader<ChildStdout>>) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect(failing);
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    (child, lines)
}

async fn next_line(lines: &mut Lines<BufReader<ChildStdout>>) -> Value {
    let line = lines
        .next_line()
        .await
        .unwrap()
        .expect("ws_client.py ended without a figure");
    serde_json::from_str(&line).unwrap()
}

async fn finish(mut child: Child) {
    drop(child.stdin.take());
    let status = child.wait().await.unwrap();
    assert!(status.success(), "ws_client.py failed: {status}");
}
