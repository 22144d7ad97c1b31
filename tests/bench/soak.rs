//! An accelerated day (group `soak`): `PI_IDE_SOAK_HOURS` simulated hours
//! (default 8; the default runs in a few minutes on 2 cores), each the
//! same round of phases against one Neovim: WebSocket agents connecting and
//! leaving around hundreds of diffs accepted, edited and rejected; a stream
//! of large selections; MCP sessions opened and abandoned, and MCP edits
//! accepted (the host writes them); a companion CLI session; pi's context
//! socket; a burst of files rewritten on disk; an agent stopped with
//! SIGSTOP while the selection moves, then resumed. The host is killed in
//! the middle of the day (and every 8 hours after): the plugin starts it
//! again (after the first time, `:PiIde start` does).
//!
//! Printed, for the host and for Neovim: RSS at the start and the end and
//! its slope (MiB per simulated hour; the host's over each of its lives,
//! the largest), open file descriptors and threads at the start and the
//! most seen after any phase; the host's tokio tasks likewise (from its
//! `SIGUSR1` log line); the requests sent, answered, refused with a reason
//! and not answered; and the error lines in the host's log.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::common::{Agent, Session, eventually, poll_within};
use crate::load_driver::{host_pid, rss_kib};
use crate::mcp_client::McpClient;
use crate::report;

/// `openDiff`s per simulated hour, a third each accepted, edited and
/// accepted, rejected.
const DIFFS: usize = 400;
/// Large selections sent per hour.
const SELECTIONS: usize = 100;
/// Lines of the file the selections are made in, and of each selection.
const FILE_LINES: usize = 5_000;
const SELECTED_LINES: usize = 2_000;
/// MCP sessions opened and abandoned per hour, and sessions that work and
/// end properly.
const ABANDONED: usize = 100;
const WORKING: usize = 10;
/// MCP edits accepted per hour (files without a buffer: the host writes).
const MCP_EDITS: usize = 10;
/// Files rewritten on disk at once, per hour (all loaded in buffers).
const WATCHED: usize = 200;
/// How long a request may go unanswered before it counts as such (under
/// the harness's own 15 s, after which its waits give up).
const ANSWER_WITHIN: Duration = Duration::from_secs(10);
/// The host is killed every this many hours (and in the middle of the day).
const KILL_EVERY: usize = 8;

#[derive(Default)]
struct Requests {
    sent: u64,
    answered: u64,
    refused: u64,
    unanswered: u64,
}

impl Requests {
    /// Counts one request's fate: `None` when no answer came in time.
    fn count(&mut self, answer: Option<&Value>) {
        self.sent += 1;
        match answer {
            None => self.unanswered += 1,
            Some(answer) if answer.get("error").is_some() => self.refused += 1,
            Some(_) => self.answered += 1,
        }
    }
}

/// What a process holds now.
#[derive(Clone, Copy, Default)]
struct Held {
    rss_kib: u64,
    fds: u64,
    threads: u64,
}

fn held(pid: i64) -> Held {
    let count = |dir: &str| {
        std::fs::read_dir(format!("/proc/{pid}/{dir}")).map_or(0, |entries| entries.count() as u64)
    };
    Held {
        rss_kib: rss_kib(pid),
        fds: count("fd"),
        threads: count("task"),
    }
}

/// A process's RSS at the start and the end, its descriptors and threads
/// at the start, the most after any phase, and at the end.
fn report_held(process: &str, start: Held, most: Held, end: Held) {
    let mib = |kib: u64| kib as f64 / 1024.0;
    report(
        &format!("soak_{process}_rss_start"),
        mib(start.rss_kib),
        "MiB",
    );
    report(&format!("soak_{process}_rss_end"), mib(end.rss_kib), "MiB");
    for (what, unit, of) in [
        ("fds", "fds", (|h: Held| h.fds) as fn(Held) -> u64),
        ("threads", "threads", |h: Held| h.threads),
    ] {
        for (when, held) in [("start", start), ("most_after_a_phase", most), ("end", end)] {
            report(
                &format!("soak_{process}_{what}_{when}"),
                of(held) as f64,
                unit,
            );
        }
    }
}

/// Least-squares slope of `(hour, kib)` samples, MiB per hour.
fn slope(samples: &[(f64, u64)]) -> f64 {
    let n = samples.len() as f64;
    if samples.len() < 2 {
        return f64::NAN;
    }
    let mean_x = samples.iter().map(|s| s.0).sum::<f64>() / n;
    let mean_y = samples.iter().map(|s| s.1 as f64).sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for &(x, y) in samples {
        num += (x - mean_x) * (y as f64 - mean_y);
        den += (x - mean_x).powi(2);
    }
    num / den / 1024.0
}

struct Day {
    session: Session,
    host: i64,
    nvim: i64,
    requests: Requests,
    /// The files rewritten on disk, loaded in buffers.
    watched: Vec<PathBuf>,
    /// The host's start values and the most seen after a phase.
    host_start: Held,
    host_most: Held,
    tasks_start: u64,
    tasks_most: u64,
    nvim_most: Held,
    /// The host's RSS at the end of each hour, one list per life.
    host_lives: Vec<Vec<(f64, u64)>>,
    restarted_by_plugin: u64,
    started_again: u64,
    /// The host was started again this hour.
    warming: bool,
    /// Messages Neovim showed the person.
    notifications: u64,
    /// `PI_IDE_SOAK_ONLY`: the phases to run (comma-separated: diffs,
    /// selections, mcp, companion, socket, watch, stopped), to find which
    /// one a figure comes from; all when unset.
    only: Option<String>,
}

impl Day {
    async fn new() -> Day {
        let session = Session::start_with("{ selection = { debounce_ms = 20 } }").await;
        let host = host_pid(&session).await;
        let nvim = session
            .lua("return vim.fn.getpid()")
            .await
            .as_i64()
            .unwrap();
        let text: String = (0..FILE_LINES)
            .map(|i| format!("line {i} of the day\n"))
            .collect();
        let big = session.write_file("big.txt", &text);
        for dir in ["w", "m"] {
            std::fs::create_dir_all(session.work_dir.join(dir)).unwrap();
        }
        let mut watched = vec![];
        for n in 0..WATCHED {
            watched.push(session.write_file(&format!("w/f{n}.txt"), "0\n"));
        }
        let names: Vec<String> = watched.iter().map(|p| p.display().to_string()).collect();
        session
            .lua_with(
                "for _, name in ipairs(...) do vim.fn.bufload(vim.fn.bufadd(name)) end",
                vec![json!(names)],
            )
            .await;
        session
            .exec(&format!("vim.cmd.edit('{}')", big.display()))
            .await;
        Day {
            session,
            host,
            nvim,
            requests: Requests::default(),
            watched,
            host_start: Held::default(),
            host_most: Held::default(),
            tasks_start: 0,
            tasks_most: 0,
            nvim_most: Held::default(),
            host_lives: vec![vec![]],
            restarted_by_plugin: 0,
            started_again: 0,
            warming: false,
            notifications: 0,
            only: std::env::var("PI_IDE_SOAK_ONLY").ok(),
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.session.state_dir.join("nvim/pi-ide.log")).unwrap_or_default()
    }

    /// The host's tokio tasks alive, from the line `SIGUSR1` makes it log.
    async fn tasks(&self) -> u64 {
        let before = self.log().matches("tasks alive").count();
        // SAFETY: signalling the host this session's Neovim started.
        unsafe { libc::kill(self.host as i32, libc::SIGUSR1) };
        eventually("the host's counts in its log", || async {
            let log = self.log();
            if log.matches("tasks alive").count() <= before {
                return None;
            }
            let line = log.lines().rev().find(|l| l.contains("tasks alive"))?;
            let (_, after) = line.split_once("counts: ")?;
            after.split_whitespace().next()?.parse().ok()
        })
        .await
    }

    /// After a phase: every agent gone, what the processes hold.
    async fn settle(&mut self, phase: &str) {
        eventually(&format!("no client after {phase}"), || async {
            let status = self.session.lua("return require('pi-ide').status()").await;
            let clients = status["clients"].as_array().map_or(0, Vec::len);
            (clients == 0).then_some(())
        })
        .await;
        let host = held(self.host);
        let tasks = self.tasks().await;
        self.host_most.fds = self.host_most.fds.max(host.fds);
        self.host_most.threads = self.host_most.threads.max(host.threads);
        self.tasks_most = self.tasks_most.max(tasks);
        let nvim = held(self.nvim);
        self.nvim_most.fds = self.nvim_most.fds.max(nvim.fds);
        self.nvim_most.threads = self.nvim_most.threads.max(nvim.threads);
    }

    async fn diffs(&mut self, hour: usize) {
        let mut agents = vec![
            self.session.connect().await,
            self.session.connect().await,
            self.session.connect_claude().await,
        ];
        let path = self.session.write_file("diffed.txt", "the day's file\n");
        for n in 0..DIFFS {
            let agent = &mut agents[n % 3];
            let tab = format!("soak-{hour}-{n}");
            let id = agent
                .open_diff(&path, &format!("proposal {n}\n"), &tab)
                .await;
            if !diffs_open(&self.session, 1).await {
                self.requests.count(None);
                continue;
            }
            let decide = match n % 3 {
                0 => "require('pi-ide.diff').accept(...)",
                1 => {
                    "local d = require('pi-ide.diff').list()[1]
                     vim.api.nvim_buf_set_lines(d.proposed_buf, 0, -1, false, { 'edited' })
                     require('pi-ide.diff').accept(...)"
                }
                _ => "require('pi-ide.diff').reject(...)",
            };
            self.session.lua_with(decide, vec![json!(tab)]).await;
            let answer = tokio::time::timeout(ANSWER_WITHIN, agent.response(&id)).await;
            self.requests.count(answer.as_ref().ok());
            diffs_open(&self.session, 0).await;
            if n % 10 == 0 {
                agent.forget_backlog();
            }
        }
        drop(agents);
        self.settle("diffs").await;
    }

    /// Moves a large visual selection; `true` once `agent` heard it.
    async fn select(&mut self, agent: Option<&mut Agent>, n: usize) -> bool {
        let first = 1 + n % (FILE_LINES - SELECTED_LINES);
        self.session
            .input(&format!("<Esc>{first}GV{}j", SELECTED_LINES - 1))
            .await;
        let Some(agent) = agent else { return true };
        let wanted = format!("line {} of the day", first - 1);
        let heard = tokio::time::timeout(
            ANSWER_WITHIN,
            agent.notification("selection_changed", |params| {
                params["text"]
                    .as_str()
                    .is_some_and(|text| text.starts_with(&wanted) && text.len() > 30_000)
            }),
        )
        .await;
        agent.forget_backlog();
        heard.is_ok()
    }

    async fn selections(&mut self) {
        let mut agent = self.session.connect().await;
        for n in 0..SELECTIONS {
            let heard = self.select(Some(&mut agent), n * 97).await;
            // A notification, not a request: counted as one all the same.
            self.requests
                .count(heard.then_some(&json!({"result": "heard"})));
        }
        self.session.input("<Esc>").await;
        drop(agent);
        self.settle("selections").await;
    }

    async fn mcp(&mut self, hour: usize) {
        let (url, token) = mcp_endpoint(&self.session).await;
        for _ in 0..ABANDONED {
            // Initialized, then never used or ended.
            McpClient::connect(&url, &token).await;
        }
        for n in 0..WORKING {
            let mut client = McpClient::connect(&url, &token).await;
            let answer = tokio::time::timeout(
                ANSWER_WITHIN,
                client.call_tool(
                    "get_file_text_by_path",
                    json!({"pathInProject": "big.txt", "maxLinesCount": 5}),
                ),
            )
            .await;
            self.requests.count(answer.ok().map(|a| wrap(&a)).as_ref());
            if n % 2 == 0 {
                client.close().await;
            }
        }
        for n in 0..MCP_EDITS {
            let name = format!("m/h{hour}-{n}.txt");
            self.session.write_file(&name, "before\n");
            let mut client = McpClient::connect(&url, &token).await;
            let call = client.call_tool(
                "replace_text_in_file",
                json!({"pathInProject": name, "oldText": "before", "newText": "after"}),
            );
            let accept = async {
                if diffs_open(&self.session, 1).await {
                    self.session
                        .exec(
                            "local d = require('pi-ide.diff').list()[1]
                             require('pi-ide.diff').accept(d.tab_name)",
                        )
                        .await;
                }
            };
            let (answer, ()) = tokio::join!(tokio::time::timeout(ANSWER_WITHIN, call), accept);
            let answer = answer.ok().map(|a| wrap(&a));
            let written = std::fs::read_to_string(self.session.work_dir.join(&name)).ok();
            let ok = written.as_deref() == Some("after\n");
            self.requests.count(answer.as_ref().filter(|_| ok));
        }
        self.settle("mcp").await;
    }

    async fn companion(&mut self) {
        let companions = self
            .session
            .lua("return require('pi-ide').status().companions")
            .await;
        for companion in companions.as_array().into_iter().flatten() {
            let port = companion["port"].as_u64().unwrap();
            let file = companion["file"].as_str().unwrap();
            let Ok(text) = std::fs::read_to_string(file) else {
                continue;
            };
            let announced: Value = serde_json::from_str(&text).unwrap();
            let token = announced["authToken"].as_str().unwrap();
            let url = format!("http://127.0.0.1:{port}/mcp");
            let mut client = McpClient::connect(&url, token).await;
            let answer =
                tokio::time::timeout(ANSWER_WITHIN, client.request("tools/list", json!({}))).await;
            self.requests.count(answer.ok().map(|a| wrap(&a)).as_ref());
            // The CLI's leaving: its client is gone with its session.
            client.close().await;
        }
        self.settle("companion").await;
    }

    async fn context_socket(&mut self) {
        let socket = self
            .session
            .lua("return require('pi-ide').status().socket")
            .await;
        let Some(path) = socket.as_str() else { return };
        for _ in 0..5 {
            let stream = UnixStream::connect(path).await.expect("the context socket");
            let mut lines = BufReader::new(stream).lines();
            let hello = tokio::time::timeout(ANSWER_WITHIN, lines.next_line()).await;
            let hello = hello
                .ok()
                .and_then(Result::ok)
                .flatten()
                .and_then(|l| serde_json::from_str::<Value>(&l).ok());
            let ok = hello.is_some_and(|h| h["type"] == "hello");
            self.requests
                .count(ok.then_some(&json!({"result": "hello"})));
        }
        self.settle("socket").await;
    }

    async fn watch_burst(&mut self, hour: usize) {
        let text = format!("hour {hour}\n");
        for path in &self.watched {
            std::fs::write(path, &text).unwrap();
        }
        let last = self.watched.last().unwrap().display().to_string();
        let want = format!("hour {hour}");
        let seen = poll_within(ANSWER_WITHIN, || async {
            let first = self
                .session
                .lua_with(
                    "return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, 1, false)[1]",
                    vec![json!(last)],
                )
                .await;
            (first == want.as_str()).then_some(())
        })
        .await;
        self.requests
            .count(seen.is_some().then_some(&json!({"result": "reloaded"})));
        self.settle("watch").await;
    }

    async fn stopped_agent(&mut self) {
        let (port, lock) = self.session.lockfile().await;
        let token = lock["authToken"].as_str().unwrap().to_owned();
        let python = crate::common::python_tools::bench_tools().join("python");
        let mut agent = tokio::process::Command::new(python)
            .arg(crate::common::repo_root().join("tests/bench/ws_client.py"))
            .args(["hold", &port.to_string(), &token, "64"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("run the Python agent");
        let mut out = BufReader::new(agent.stdout.take().unwrap()).lines();
        let ready = tokio::time::timeout(ANSWER_WITHIN, out.next_line()).await;
        assert!(
            matches!(&ready, Ok(Ok(Some(line))) if line.contains("ready")),
            "{ready:?}"
        );
        let pid = agent.id().unwrap() as i32;
        // SAFETY: stopping and resuming the agent process we started.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        for n in 0..SELECTIONS {
            self.select(None, n * 31).await;
        }
        self.session.input("<Esc>").await;
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGCONT) };
        let mut stdin = agent.stdin.take().unwrap();
        stdin.write_all(b"go\n").await.unwrap();
        let answered = tokio::time::timeout(ANSWER_WITHIN, async {
            while let Ok(Some(line)) = out.next_line().await {
                if line.contains("answered") {
                    return true;
                }
            }
            false
        })
        .await;
        self.requests
            .count(matches!(answered, Ok(true)).then_some(&json!({"result": "answered"})));
        drop(stdin);
        let _ = tokio::time::timeout(ANSWER_WITHIN, agent.wait()).await;
        self.settle("stopped agent").await;
    }

    /// One simulated hour: every phase once.
    async fn round(&mut self, hour: usize) {
        let runs = |phase: &str| {
            self.only
                .as_ref()
                .is_none_or(|only| only.split(',').any(|p| p == phase))
        };
        let (diffs, selections, mcp) = (runs("diffs"), runs("selections"), runs("mcp"));
        let (companion, socket, watch) = (runs("companion"), runs("socket"), runs("watch"));
        let stopped = runs("stopped");
        if diffs {
            self.diffs(hour).await;
        }
        if selections {
            self.selections().await;
        }
        if mcp {
            self.mcp(hour).await;
        }
        if companion {
            self.companion().await;
        }
        if socket {
            self.context_socket().await;
        }
        if watch {
            self.watch_burst(hour).await;
        }
        if stopped {
            self.stopped_agent().await;
        }
        // The harness keeps every message Neovim shows (tests read them):
        // counted and let go, so they do not count as Neovim's memory.
        let shown = self
            .session
            .lua("local n = #_G.notified; _G.notified = {}; return n")
            .await;
        self.notifications += shown.as_u64().unwrap_or(0);
    }

    /// SIGKILL; the plugin starts it again (the first time), else
    /// `:PiIde start` does.
    async fn kill_host(&mut self) {
        let old = self.host;
        // SAFETY: killing the host this session's Neovim started.
        unsafe { libc::kill(old as i32, libc::SIGKILL) };
        let again = poll_within(Duration::from_secs(10), || async {
            let status = self.session.lua("return require('pi-ide').status()").await;
            let pid = status["pid"].as_i64()?;
            (status["running"] == true && pid != old).then_some(pid)
        })
        .await;
        self.host = match again {
            Some(pid) => {
                self.restarted_by_plugin += 1;
                pid
            }
            None => {
                self.session.wait_stopped().await;
                self.session.exec("vim.cmd('PiIde start')").await;
                self.started_again += 1;
                self.session.running_host(old).await
            }
        };
        self.session.lockfile().await;
        self.host_lives.push(vec![]);
        self.warming = true;
    }
}

/// Whether `n` diffs are open (all loaded) within [`ANSWER_WITHIN`].
async fn diffs_open(session: &Session, n: usize) -> bool {
    poll_within(ANSWER_WITHIN, || async {
        let list = session.lua("return require('pi-ide.diff').list()").await;
        let list = list.as_array()?.clone();
        (list.len() == n && list.iter().all(|d| d["loading"] == false)).then_some(())
    })
    .await
    .is_some()
}

/// A `CallToolResult` or JSON-RPC error object as a reply: an error with a
/// message is a refusal with a reason.
fn wrap(answer: &Value) -> Value {
    if answer.get("code").is_some() && answer.get("message").is_some() {
        json!({"error": answer})
    } else {
        json!({"result": answer})
    }
}

async fn mcp_endpoint(session: &Session) -> (String, String) {
    let (_, lock) = session.lockfile().await;
    (
        lock["mcpUrl"].as_str().unwrap().to_owned(),
        lock["authToken"].as_str().unwrap().to_owned(),
    )
}

pub async fn run() {
    let hours: usize = std::env::var("PI_IDE_SOAK_HOURS")
        .ok()
        .and_then(|h| h.parse().ok())
        .unwrap_or(8);
    let began = Instant::now();
    let mut day = Day::new().await;
    // One warm-up hour, not counted: what is made once (tool lists,
    // parsers, buffers, the blocking pool's threads) is there at the start.
    day.round(0).await;
    day.requests = Requests::default();
    day.host_most = Held::default();
    day.nvim_most = Held::default();
    day.tasks_most = 0;
    let buffers = "return #vim.api.nvim_list_bufs()";
    let buffers_start = day.session.lua(buffers).await.as_u64().unwrap_or(0);
    let lua_kib = "collectgarbage('collect'); return math.floor(collectgarbage('count'))";
    let lua_start = day.session.lua(lua_kib).await.as_u64().unwrap_or(0);
    day.notifications = 0;
    let nvim_start = held(day.nvim);
    day.host_start = held(day.host);
    day.tasks_start = day.tasks().await;
    day.host_lives[0].push((0.0, day.host_start.rss_kib));
    let mut nvim_samples = vec![(0.0, nvim_start.rss_kib)];
    for hour in 1..=hours {
        if hour > 1 && (hour - 1 == hours / 2 || (hour - 1) % KILL_EVERY == 0) {
            day.kill_host().await;
        }
        day.round(hour).await;
        let at = hour as f64;
        let host = held(day.host);
        // A host started again this hour is warming up: its life is
        // measured from the end of its first hour.
        if !std::mem::take(&mut day.warming) {
            day.host_lives.last_mut().unwrap().push((at, host.rss_kib));
        }
        nvim_samples.push((at, held(day.nvim).rss_kib));
        eprintln!(
            "soak: hour {hour} of {hours} done after {:.0} s (host {} KiB, nvim {} KiB)",
            began.elapsed().as_secs_f64(),
            host.rss_kib,
            nvim_samples.last().unwrap().1
        );
    }
    let host_end = held(day.host);
    let nvim_end = held(day.nvim);
    let tasks_end = day.tasks().await;
    let lives: Vec<f64> = day
        .host_lives
        .iter()
        .filter(|life| life.len() >= 2)
        .map(|life| slope(life))
        .collect();
    let host_slope = lives.iter().copied().fold(f64::NAN, f64::max);
    let log = day.log();
    let errors: Vec<&str> = log.lines().filter(|l| l.contains(" ERROR ")).collect();
    let refusals = errors
        .iter()
        .filter(|l| l.contains("refused") || l.contains("Refused"))
        .count();
    for line in errors.iter().take(5) {
        eprintln!("soak: host log error line: {line}");
    }
    report("soak_simulated_hours", hours as f64, "h");
    report("soak_wall_time", began.elapsed().as_secs_f64(), "s");
    report_held("host", day.host_start, day.host_most, host_end);
    report("soak_host_rss_slope_max_over_lives", host_slope, "MiB/h");
    report("soak_host_lives", day.host_lives.len() as f64, "processes");
    report(
        "soak_host_restarted_by_plugin",
        day.restarted_by_plugin as f64,
        "times",
    );
    report(
        "soak_host_started_again_by_command",
        day.started_again as f64,
        "times",
    );
    for (when, tasks) in [
        ("start", day.tasks_start),
        ("most_after_a_phase", day.tasks_most),
        ("end", tasks_end),
    ] {
        report(&format!("soak_host_tasks_{when}"), tasks as f64, "tasks");
    }
    report_held("nvim", nvim_start, day.nvim_most, nvim_end);
    report("soak_nvim_rss_slope", slope(&nvim_samples), "MiB/h");
    let buffers_end = day.session.lua(buffers).await.as_u64().unwrap_or(0);
    report("soak_nvim_buffers_start", buffers_start as f64, "buffers");
    report("soak_nvim_buffers_end", buffers_end as f64, "buffers");
    let lua_end = day.session.lua(lua_kib).await.as_u64().unwrap_or(0);
    report("soak_nvim_lua_heap_start", lua_start as f64 / 1024.0, "MiB");
    report("soak_nvim_lua_heap_end", lua_end as f64 / 1024.0, "MiB");
    report(
        "soak_nvim_messages_shown",
        day.notifications as f64,
        "messages",
    );
    report("soak_requests_sent", day.requests.sent as f64, "requests");
    report(
        "soak_requests_answered",
        day.requests.answered as f64,
        "requests",
    );
    report(
        "soak_requests_refused_with_a_reason",
        day.requests.refused as f64,
        "requests",
    );
    report(
        "soak_requests_not_answered",
        day.requests.unanswered as f64,
        "requests",
    );
    report("soak_host_log_error_lines", errors.len() as f64, "lines");
    report(
        "soak_host_log_error_lines_not_refusals",
        (errors.len() - refusals) as f64,
        "lines",
    );
}
