//! The chat's figures, against the mock ACP agent (`tests/acp_agent`) with
//! a UI attached: Neovim's time per streamed chunk, the time from sending a
//! prompt to its answer's first chunk in the transcript, and the longest
//! freeze, the wall time and the CPU time while a 1 MB answer streams in.
//!
//! With `PI_IDE_CODECOMPANION_REFERENCE=<checkout of
//! olimorris/codecompanion.nvim>` its chat takes the same stream from the
//! same agent in turns with ours, its figures named `chat_codecompanion_*`
//! (see `chat_codecompanion.rs`).

use std::path::PathBuf;

use crate::chat_codecompanion::{self, Checkouts};
use crate::common::{Session, eventually, repo_root};
use crate::editor::{STALL_PROBE, attach_ui};
use crate::load_driver::host_pid;
use crate::side_by_side::cpu_ms;
use crate::{median, report};

const RUNS: usize = 5;
const LARGE_RUNS: usize = 3;

/// The mock agent, built when missing (`cargo bench` builds no examples).
pub fn mock_agent() -> PathBuf {
    let bin = repo_root().join("target/debug/examples/mock_acp_agent");
    if !bin.exists() {
        let built = std::process::Command::new(env!("CARGO"))
            .args(["build", "--example", "mock_acp_agent"])
            .current_dir(repo_root())
            .status()
            .expect("run cargo");
        assert!(built.success(), "cannot build the mock agent");
    }
    bin
}

/// A chat plugin under measurement.
#[derive(Clone, Copy)]
enum Plugin<'a> {
    Ours,
    CodeCompanion(&'a Checkouts),
}

impl Plugin<'_> {
    /// The prefix of its figures' names.
    fn prefix(self) -> &'static str {
        match self {
            Plugin::Ours => "chat_",
            Plugin::CodeCompanion(_) => "chat_codecompanion_",
        }
    }

    /// Neovim with the plugin's chat open on the mock agent, a UI attached
    /// and `_G.bench` keeping the time of each batch it draws.
    async fn open(self) -> Session {
        match self {
            Plugin::Ours => chat_session().await,
            Plugin::CodeCompanion(checkouts) => {
                chat_codecompanion::session(checkouts, &mock_agent()).await
            }
        }
    }

    /// Ends a session the plugin opened.
    async fn close(self, session: Session) {
        if let Plugin::CodeCompanion(_) = self {
            chat_codecompanion::forget_logs(&session).await;
        }
    }

    /// Lua that sends `prompt`.
    fn send(self, prompt: &str) -> String {
        match self {
            Plugin::Ours => format!("require('pi-ide.chat').send('{prompt}')"),
            Plugin::CodeCompanion(_) => chat_codecompanion::send(prompt),
        }
    }

    /// Lua that returns the chat's status, `idle` once the answer ended.
    fn status(self) -> &'static str {
        match self {
            Plugin::Ours => "return require('pi-ide.chat').sessions()[1].status",
            Plugin::CodeCompanion(_) => chat_codecompanion::STATUS,
        }
    }
}

async fn chat_session() -> Session {
    let opts = format!(
        "{{ bin = '{}', acp = {{ agents = {{ mock = {{ cmd = {{ '{}' }} }} }} }} }}",
        env!("CARGO_BIN_EXE_pi-ide"),
        mock_agent().display()
    );
    let session = Session::start_with(&opts).await;
    session.lockfile().await;
    attach_ui(&session).await;
    session.exec(STALL_PROBE).await;
    // Times every batch Lua draws, and when the first and the last agent
    // text arrive.
    session
        .exec(
            "local chat = require('pi-ide.chat')
             local on = chat.on_update
             _G.bench = { calls = {}, chunks = {} }
             chat.on_update = function(id, updates)
               local t0 = vim.uv.hrtime()
               on(id, updates)
               local t1 = vim.uv.hrtime()
               local b = _G.bench
               for _, u in ipairs(updates) do
                 if u.kind == 'text' then
                   b.first = b.first or t1
                   b.last = t1
                 end
               end
               table.insert(b.calls, t1 - t0)
             end",
        )
        .await;
    session.exec("require('pi-ide.chat').open('mock')").await;
    eventually("the mock's session", || async {
        let list = session
            .lua("return require('pi-ide.chat').sessions()")
            .await;
        (list[0]["status"] == "ready").then_some(())
    })
    .await;
    session
}

/// What one answer cost.
struct Streamed {
    /// ms from sending the prompt to the end of the batch that drew its
    /// first text.
    first_ms: f64,
    /// ms from sending the prompt to the end of the batch that drew its
    /// last text.
    wall_ms: f64,
    /// UI ns of each batch drawn.
    draws: Vec<f64>,
    /// UI ns of each chunk, where a plugin draws chunk by chunk.
    chunks: Vec<f64>,
    /// Longest freeze ns, and most CPU ns between two probe callbacks
    /// (the freeze a machine with a core to spare would see).
    freeze: f64,
    busy: f64,
    /// CPU ms of Neovim and of our host meanwhile.
    nvim_cpu_ms: f64,
    host_cpu_ms: f64,
    /// ms Neovim's main thread was ready to run but waited for a core
    /// (where the kernel keeps the figure).
    nvim_waiting_ms: Option<f64>,
}

/// ms `pid`'s main thread has waited, ready to run, for a core.
fn waiting_for_cpu_ms(pid: i64) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).ok()?;
    let waited: f64 = stat.split_whitespace().nth(1)?.parse().ok()?;
    Some(waited / 1e6)
}

/// Sends `prompt` and waits for its end.
async fn stream(session: &Session, plugin: Plugin<'_>, prompt: &str) -> Streamed {
    let nvim = i64::from(session.child.id().unwrap());
    let host = match plugin {
        Plugin::Ours => Some(host_pid(session).await),
        Plugin::CodeCompanion(_) => None,
    };
    let host_cpu = || host.map_or(0.0, cpu_ms);
    let (nvim_before, host_before) = (cpu_ms(nvim), host_cpu());
    let waiting_before = waiting_for_cpu_ms(nvim);
    session
        .exec(&format!(
            "local b = _G.bench
             b.calls, b.chunks, b.first, b.last = {{}}, {{}}, nil, nil
             _G.stall.reset(); b.sent = vim.uv.hrtime()
             {}",
            plugin.send(prompt)
        ))
        .await;
    // A 1 MB answer may take longer than a test's deadline.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    loop {
        let status = session.lua(plugin.status()).await;
        if status == "idle" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the answer to {prompt} did not end: {status}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let (nvim_cpu_ms, host_cpu_ms) = (cpu_ms(nvim) - nvim_before, host_cpu() - host_before);
    let nvim_waiting_ms = waiting_for_cpu_ms(nvim)
        .zip(waiting_before)
        .map(|(a, b)| a - b);
    let figures = session
        .lua(
            "local b = _G.bench
             if not b.first then return {} end
             return { (b.first - b.sent) / 1e6, (b.last - b.sent) / 1e6, b.calls, b.chunks,
               _G.stall.max, _G.stall.busy }",
        )
        .await;
    let number = |at: usize| {
        figures[at]
            .as_f64()
            .unwrap_or_else(|| panic!("no text of the answer to {prompt} was drawn"))
    };
    let sample = |at: usize| -> Vec<f64> {
        figures[at]
            .as_array()
            .map(|all| all.iter().filter_map(|v| v.as_f64()).collect())
            .unwrap_or_default()
    };
    Streamed {
        first_ms: number(0),
        wall_ms: number(1),
        draws: sample(2),
        chunks: sample(3),
        freeze: number(4),
        busy: number(5),
        nvim_cpu_ms,
        host_cpu_ms,
        nvim_waiting_ms,
    }
}

fn percentile(mut sample: Vec<f64>, p: f64) -> f64 {
    sample.sort_by(f64::total_cmp);
    if sample.is_empty() {
        return f64::NAN;
    }
    sample[((sample.len() - 1) as f64 * p).round() as usize]
}

/// Figures of several runs, reported as medians.
#[derive(Default)]
struct Figures(Vec<(String, Vec<f64>, &'static str)>);

impl Figures {
    fn add(&mut self, name: String, value: f64, unit: &'static str) {
        match self.0.iter_mut().find(|(known, _, _)| *known == name) {
            Some((_, sample, _)) => sample.push(value),
            None => self.0.push((name, vec![value], unit)),
        }
    }

    /// `{name}_p50` and `{name}_p99` of a sample in ns, as µs.
    fn percentiles(&mut self, name: String, ns: &[f64]) {
        for (q, at) in [("p50", 0.5), ("p99", 0.99)] {
            let value = percentile(ns.to_vec(), at) / 1e3;
            self.add(format!("{name}_{q}"), value, "µs");
        }
    }

    fn report(self) {
        for (name, sample, unit) in self.0 {
            report(&name, median(sample), unit);
        }
    }
}

pub async fn run() {
    let checkouts = chat_codecompanion::checkouts();
    let mut plugins = vec![Plugin::Ours];
    if let Some(checkouts) = &checkouts {
        plugins.push(Plugin::CodeCompanion(checkouts));
    }
    // The plugins take turns, so a change in the machine's load falls on
    // both.
    let mut sessions = Vec::new();
    for &plugin in &plugins {
        sessions.push((plugin, plugin.open().await));
    }
    // 80,000 bytes in 20-byte chunks: 4,000 chunks.
    let chunks = 4_000.0;
    let mut figures = Figures::default();
    for _ in 0..RUNS {
        for (plugin, session) in &sessions {
            let streamed = stream(session, *plugin, "big 80000 20").await;
            let name = |figure: &str| format!("{}{figure}", plugin.prefix());
            figures.add(name("first_chunk_to_transcript"), streamed.first_ms, "ms");
            let total: f64 = streamed.draws.iter().sum();
            figures.add(name("ui_time_per_chunk"), total / chunks / 1e3, "µs");
            figures.percentiles(name("ui_time_per_draw"), &streamed.draws);
            if !streamed.chunks.is_empty() {
                figures.percentiles(name("ui_time_per_chunk"), &streamed.chunks);
            }
        }
    }
    for (plugin, session) in sessions {
        plugin.close(session).await;
    }
    figures.report();
    let mut figures = Figures::default();
    for _ in 0..LARGE_RUNS {
        for &plugin in &plugins {
            let session = plugin.open().await;
            let streamed = stream(&session, plugin, "big 1048576 16").await;
            plugin.close(session).await;
            let name = |figure: &str| format!("{}1mb_answer_{figure}", plugin.prefix());
            figures.add(name("longest_freeze"), streamed.freeze / 1e6, "ms");
            figures.add(name("longest_busy"), streamed.busy / 1e6, "ms");
            figures.add(name("draws"), streamed.draws.len() as f64, "calls");
            figures.add(name("wall"), streamed.wall_ms, "ms");
            figures.add(name("nvim_cpu"), streamed.nvim_cpu_ms, "ms");
            if let Some(waiting) = streamed.nvim_waiting_ms {
                figures.add(name("nvim_waiting_for_cpu"), waiting, "ms");
            }
            if matches!(plugin, Plugin::Ours) {
                figures.add(name("host_cpu"), streamed.host_cpu_ms, "ms");
            }
        }
    }
    figures.report();
}
