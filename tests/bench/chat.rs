//! The chat's figures, against the mock ACP agent (`tests/acp_agent`) with
//! a UI attached: Neovim's time per streamed chunk, the time from sending a
//! prompt to its answer's first chunk in the transcript, and the longest
//! freeze while a 1 MB answer streams in.

use std::path::PathBuf;

use crate::common::{Session, eventually, repo_root};
use crate::editor::{STALL_PROBE, attach_ui};
use crate::{median, report};

const RUNS: usize = 5;

/// The mock agent, built when missing (`cargo bench` builds no examples).
fn mock_agent() -> PathBuf {
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
    // Times every batch Lua draws, and when the first agent text arrives.
    session
        .exec(
            "local chat = require('pi-ide.chat')
             local on = chat.on_update
             _G.bench = { calls = {}, chunks = 0 }
             chat.on_update = function(id, updates)
               local t0 = vim.uv.hrtime()
               on(id, updates)
               local t1 = vim.uv.hrtime()
               local b = _G.bench
               for _, u in ipairs(updates) do
                 if u.kind == 'text' then
                   b.first = b.first or t1
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

/// Sends `prompt` and waits for its end; (ms from send to first text,
/// UI ns of each batch, longest freeze ns, most CPU ns between two probe
/// callbacks: the freeze a machine with a core to spare would see).
async fn stream(session: &Session, prompt: &str) -> (f64, Vec<f64>, f64, f64) {
    session
        .exec(&format!(
            "_G.bench.calls = {{}}; _G.bench.first = nil; _G.stall.reset()
             _G.bench.sent = vim.uv.hrtime(); require('pi-ide.chat').send('{prompt}')"
        ))
        .await;
    // A 1 MB answer may take longer than a test's deadline.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    loop {
        let status = session
            .lua("return require('pi-ide.chat').sessions()[1].status")
            .await;
        if status == "idle" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the answer to {prompt} did not end: {status}, {} lines",
            session
                .lua("return #require('pi-ide.chat').transcript()")
                .await
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let figures = session
        .lua("local b = _G.bench; return { (b.first - b.sent) / 1e6, b.calls, _G.stall.max, _G.stall.busy }")
        .await;
    let calls = figures[1]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_f64())
        .collect();
    (
        figures[0].as_f64().unwrap(),
        calls,
        figures[2].as_f64().unwrap(),
        figures[3].as_f64().unwrap(),
    )
}

fn percentile(mut sample: Vec<f64>, p: f64) -> f64 {
    sample.sort_by(f64::total_cmp);
    sample[((sample.len() - 1) as f64 * p).round() as usize]
}

pub async fn run() {
    let session = chat_session().await;
    // 2,000 lines of ~40 bytes in 20-byte chunks: 4,000 chunks.
    let chunks = 4_000.0;
    let (mut first_ms, mut per_chunk_us, mut p50, mut p99) = (vec![], vec![], vec![], vec![]);
    for _ in 0..RUNS {
        let (first, calls, _, _) = stream(&session, "big 80000 20").await;
        first_ms.push(first);
        per_chunk_us.push(calls.iter().sum::<f64>() / chunks / 1e3);
        p50.push(percentile(calls.clone(), 0.5) / 1e3);
        p99.push(percentile(calls, 0.99) / 1e3);
    }
    report("chat_first_chunk_to_transcript", median(first_ms), "ms");
    report("chat_ui_time_per_chunk", median(per_chunk_us), "µs");
    report("chat_ui_time_per_draw_p50", median(p50), "µs");
    report("chat_ui_time_per_draw_p99", median(p99), "µs");
    let (mut freeze, mut busy, mut draws) = (vec![], vec![], vec![]);
    for _ in 0..3 {
        let session = chat_session().await;
        let (_, calls, longest, cpu) = stream(&session, "big 1048576 16").await;
        freeze.push(longest / 1e6);
        busy.push(cpu / 1e6);
        draws.push(calls.len() as f64);
    }
    report("chat_1mb_answer_longest_freeze", median(freeze), "ms");
    report("chat_1mb_answer_longest_busy", median(busy), "ms");
    report("chat_1mb_answer_draws", median(draws), "calls");
}
