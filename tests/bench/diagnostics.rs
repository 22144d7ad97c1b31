//! `getDiagnostics` latency as agents see it under load: 8 agents each send
//! 2,000 requests one after another (pi awaits one before every model call)
//! while the person moves the cursor and the diagnostics keep changing
//! (the first change comes right after the initial set: the burst whose
//! data answers wait for, which is what `_max` shows).
//!
//! With `PI_IDE_LUA_REFERENCE=<checkout of ldelossa/pi-ide.nvim>` the same
//! load also runs against that pure-Lua plugin, for comparison.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{Agent, Session};
use crate::report;

const AGENTS: usize = 8;
const REQUESTS: usize = 2_000;

pub async fn run() {
    let ours = Session::start_with("{ selection = { debounce_ms = 20 } }").await;
    measure("diagnostics_load", &ours).await;
    if let Ok(reference) = std::env::var("PI_IDE_LUA_REFERENCE") {
        let lua = Session::spawn_plugin(Path::new(&reference)).await;
        lua.exec("require('pi-ide').setup({})").await;
        measure("diagnostics_load_lua_reference", &lua).await;
    }
}

async fn measure(label: &str, session: &Session) {
    open_diagnosed(session).await;
    let mut agents = Vec::new();
    for _ in 0..AGENTS {
        agents.push(session.connect().await);
    }
    let done = Arc::new(AtomicBool::new(false));
    let person = async {
        let mut step = 0u64;
        while !done.load(Ordering::SeqCst) {
            session
                .input(if step.is_multiple_of(2) { "5j" } else { "5k" })
                .await;
            if step.is_multiple_of(25) {
                set_diagnostics(session, step).await;
            }
            step += 1;
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    };
    let flood = async {
        let latencies = futures_util::future::join_all(agents.iter_mut().map(ask)).await;
        done.store(true, Ordering::SeqCst);
        latencies
    };
    let ((), latencies) = tokio::join!(person, flood);
    let mut all: Vec<f64> = latencies.into_iter().flatten().collect();
    all.sort_by(f64::total_cmp);
    let at = |q: f64| all[((all.len() - 1) as f64 * q).round() as usize];
    report(&format!("{label}_p50"), at(0.50), "ms");
    report(&format!("{label}_p99"), at(0.99), "ms");
    report(&format!("{label}_max"), at(1.0), "ms");
}

/// One agent's requests, each waited for; latencies in ms.
async fn ask(agent: &mut Agent) -> Vec<f64> {
    let mut latencies = Vec::with_capacity(REQUESTS);
    for _ in 0..REQUESTS {
        let started = Instant::now();
        let reply = agent.call_tool("getDiagnostics", json!({})).await;
        latencies.push(started.elapsed().as_secs_f64() * 1e3);
        assert!(reply["result"]["content"][0]["text"].is_string(), "{reply}");
        agent.forget_backlog();
    }
    latencies
}

/// A 400-line file open in Neovim with twenty diagnostics.
pub async fn open_diagnosed(session: &Session) {
    let path = session.write_file(
        "diagnosed.rs",
        &(0..400)
            .map(|i| format!("let x{i} = {i};\n"))
            .collect::<String>(),
    );
    session
        .exec(&format!("vim.cmd.edit('{}')", path.display()))
        .await;
    set_diagnostics(session, 0).await;
}

/// Twenty diagnostics on the current buffer whose messages name `step`.
pub async fn set_diagnostics(session: &Session, step: u64) {
    session
        .exec(&format!(
            "local list = {{}}
             for i = 0, 19 do
               list[#list + 1] = {{ lnum = i * 10, col = 4, end_col = 6, severity = 1 + i % 4,
                 message = 'problem ' .. i .. ' at step {step}', source = 'bench' }}
             end
             vim.diagnostic.set(vim.api.nvim_create_namespace('bench'), 0, list)"
        ))
        .await;
}
