//! Editor figures: start-up, cursor and selection costs, openDiff stalls,
//! host memory under load.

use serde_json::json;

use crate::common::{Session, eventually, open_diff_args};
use crate::stamped::{StampedAgent, now_ns};
use crate::{median, report};

const RUNS: usize = 7;

/// A `vim.schedule` callback posted every millisecond (by a uv timer)
/// records the longest gap between two callbacks that ran: how long the
/// main loop took nothing new, keys and redraws included. `_G.stall.max` is
/// that gap (ns); `wait` the longest a callback waited from posting to
/// running, which misses work inside one event (a long `nvim_exec_lua`, a
/// seam call) because the uv timer cannot fire there either; `busy` the
/// most CPU time Neovim spent between two callbacks (ns), what the gap
/// would be on a machine with a core to spare; `cpu()` Neovim's CPU time
/// since the sample began, less the probe's own (ns). `_G.stall.reset()`
/// starts a new sample; `_G.stall.each(now)`, when set, runs in every
/// callback.
pub const STALL_PROBE: &str = "
  local uv = vim.uv
  _G.stall = { max = 0, wait = 0, busy = 0 }
  function _G.stall.reset()
    local s = _G.stall
    s.max, s.wait, s.busy, s.last, s.last_cpu = 0, 0, 0, uv.hrtime(), os.clock() * 1e9
    s.from_cpu, s.own = s.last_cpu, 0
  end
  function _G.stall.cpu()
    return os.clock() * 1e9 - _G.stall.from_cpu - _G.stall.own
  end
  _G.stall.reset()
  _G.stall_timer = _G.stall_timer or uv.new_timer()
  _G.stall_timer:start(1, 1, function()
    local posted, from = uv.hrtime(), os.clock() * 1e9
    vim.schedule(function()
      local s, now, cpu = _G.stall, uv.hrtime(), os.clock() * 1e9
      s.max = math.max(s.max, now - s.last)
      s.wait = math.max(s.wait, now - posted)
      s.busy = math.max(s.busy, cpu - s.last_cpu)
      s.last, s.last_cpu = now, cpu
      if s.each then s.each(now) end
      s.own = s.own + os.clock() * 1e9 - cpu
    end)
    _G.stall.own = _G.stall.own + os.clock() * 1e9 - from
  end)";

pub async fn run() {
    startup().await;
    cursor_and_selection().await;
    open_diff().await;
    memory_under_load().await;
}

/// `setup()` cost inside a fresh Neovim, and the time to a written lockfile.
async fn startup() {
    let (mut setup_ms, mut to_lockfile_ms) = (vec![], vec![]);
    for _ in 0..RUNS {
        let session = Session::spawn().await;
        let timing = session
            .lua(&format!(
                "local uv = vim.uv
                 local t0 = uv.hrtime()
                 require('pi-ide').setup({{ bin = '{}' }})
                 _G.setup_at = t0
                 return uv.hrtime() - t0",
                env!("CARGO_BIN_EXE_pi-ide")
            ))
            .await;
        setup_ms.push(timing.as_f64().unwrap() / 1e6);
        // Poll the lock directory on the same clock as vim.uv.hrtime().
        let written_at = loop {
            let mut entries = std::fs::read_dir(&session.lock_dir).unwrap().flatten();
            if entries.any(|e| e.path().extension().is_some_and(|x| x == "lock")) {
                break now_ns();
            }
            std::thread::sleep(std::time::Duration::from_micros(100));
        };
        let setup_at = session.lua("return _G.setup_at").await.as_f64().unwrap();
        to_lockfile_ms.push((written_at as f64 - setup_at) / 1e6);
    }
    report("setup_ui_time", median(setup_ms), "ms");
    report("neovim_startup_overhead", startup_overhead(), "ms");
    report("setup_to_lockfile", median(to_lockfile_ms), "ms");
}

/// Wall time of `nvim --headless … +qa` with the plugin set up, minus without.
fn startup_overhead() -> f64 {
    let run = |with_plugin: bool| {
        let mut command = std::process::Command::new(crate::common::nvim_binary());
        command.args(["--headless", "-u", "NONE", "-i", "NONE", "-n"]);
        let lock_dir = crate::common::scratch_dir("startup");
        command.env("PI_IDE_LOCK_DIR", &*lock_dir);
        command.env("CLAUDE_CONFIG_DIR", lock_dir.join("claude"));
        command.env("QWEN_HOME", lock_dir.join("qwen"));
        command.env_remove("TMPDIR").env("TMP", &*lock_dir);
        if with_plugin {
            command.args([
                "--cmd",
                &format!("set rtp^={}", crate::common::repo_root().display()),
            ]);
            command.args(["--cmd", "runtime plugin/pi-ide.lua"]);
            command.args([
                "-c",
                &format!(
                    "lua require('pi-ide').setup({{ bin = '{}' }})",
                    env!("CARGO_BIN_EXE_pi-ide")
                ),
            ]);
        }
        command.args(["-c", "qa!"]);
        let started = std::time::Instant::now();
        command.output().unwrap();
        started.elapsed().as_secs_f64() * 1e3
    };
    let (mut with, mut without) = (vec![], vec![]);
    for _ in 0..RUNS * 3 {
        without.push(run(false));
        with.push(run(true));
    }
    median(with) - median(without)
}

async fn connected(opts: &str) -> (Session, StampedAgent) {
    let session = Session::start_with(opts).await;
    let (port, lock) = session.lockfile().await;
    let agent = StampedAgent::connect(port, lock["authToken"].as_str().unwrap()).await;
    session.wait_clients(1).await;
    (session, agent)
}

/// Replaces the plugin's CursorMoved autocmds by timed calls of the same
/// handlers (selection debounce, suggestion cancel).
const TIMED_CURSOR_HANDLER: &str = "
  _G.bench = { ns = 0, calls = 0 }
  local uv = vim.uv
  local suggest, selection = require('pi-ide.suggest'), require('pi-ide.selection')
  vim.api.nvim_clear_autocmds({ group = 'PiIde', event = 'CursorMoved' })
  vim.api.nvim_create_autocmd('CursorMoved', {
    group = 'PiIde',
    callback = function()
      local t = uv.hrtime(); selection.on_event(); suggest.on_leave()
      _G.bench.ns = _G.bench.ns + uv.hrtime() - t; _G.bench.calls = _G.bench.calls + 1
    end,
  })";

async fn cursor_and_selection() {
    let (session, mut agent) = connected("{ selection = { debounce_ms = 0 } }").await;
    let text: String = (0..12_000)
        .map(|i| format!("line {i} with some text\n"))
        .collect();
    let path = session.write_file("cursor.txt", &text);
    session
        .exec(&format!("vim.cmd.edit('{}')", path.display()))
        .await;
    session.exec(TIMED_CURSOR_HANDLER).await;

    // UI time per CursorMoved, and cursor move → selection_changed on the wire.
    let (mut per_move, mut latency) = (vec![], vec![]);
    for run in 0..RUNS {
        session.exec("_G.bench.ns = 0; _G.bench.calls = 0").await;
        for step in 0..50 {
            let target = 100 + run * 100 + step;
            let sent = now_ns();
            session.input(&format!("{}G", target + 1)).await;
            let frame = agent
                .next(|m| {
                    m["method"] == "selection_changed"
                        && m["params"]["selection"]["start"]["line"] == target
                })
                .await;
            latency.push((frame.at_ns - sent) as f64 / 1e6);
        }
        let calls = session.lua("return _G.bench").await;
        per_move
            .push(calls["ns"].as_f64().unwrap() / calls["calls"].as_f64().unwrap().max(1.0) / 1e3);
    }
    report("cursor_moved_ui_time", median(per_move), "us");
    report(
        "cursor_move_to_selection_changed_debounce_0",
        median(latency),
        "ms",
    );

    // Extending a 10,000-line visual selection by one line.
    session.input("gg0V").await;
    session.input("9999j").await;
    agent
        .next(|m| {
            m["method"] == "selection_changed" && m["params"]["selection"]["end"]["line"] == 9999
        })
        .await;
    session.exec(STALL_PROBE).await;
    let (mut per_extend, mut stall) = (vec![], vec![]);
    for step in 0..RUNS * 5 {
        session
            .exec("_G.bench.ns = 0; _G.bench.calls = 0; _G.stall.reset()")
            .await;
        session.input("j").await;
        let end = 10_000 + step as u64;
        let frame = agent
            .next(|m| {
                m["method"] == "selection_changed" && m["params"]["selection"]["end"]["line"] == end
            })
            .await;
        assert!(frame.bytes > 200_000, "the selected text travels with it");
        let calls = session.lua("return { _G.bench, _G.stall.max }").await;
        per_extend.push(calls[0]["ns"].as_f64().unwrap() / 1e3);
        stall.push(calls[1].as_f64().unwrap() / 1e6);
    }
    report("visual_10k_extend_ui_time", median(per_extend), "us");
    report("visual_10k_extend_longest_stall", median(stall), "ms");
    session.input("<Esc>").await;
}

/// A file of about `bytes` and an agent's proposal for it: a change every
/// 200 lines (sparse), or changes, deletions and insertions every few lines
/// (dense).
pub fn proposal_of(bytes: usize, dense: bool) -> (String, String) {
    // Numbered lines, so a diff finds exactly the edits made below.
    let original: String = (0..bytes / 64)
        .map(|i| format!("let value_{i:07} = compute(previous, next); // ordinary code\n"))
        .collect();
    let proposal: String = original
        .lines()
        .enumerate()
        .filter(|(i, _)| !dense || i % 13 != 5)
        .map(
            |(i, l)| match (dense, i % 200 == 100, i % 7 == 3, i % 11 == 0) {
                (false, true, _, _) | (true, _, true, _) => format!("{l} // changed\n"),
                (true, _, _, true) => format!("{l}\n// inserted\n"),
                _ => format!("{l}\n"),
            },
        )
        .collect();
    (original, proposal)
}

async fn open_diff() {
    let sizes = [("64KB", 64 << 10), ("1MB", 1 << 20), ("4MB", 4 << 20)];
    for ((size, bytes), dense) in sizes
        .iter()
        .flat_map(|size| [(*size, false), (*size, true)])
    {
        let label = format!("{size}_{}", if dense { "dense" } else { "sparse" });
        let (session, agent) = connected("{}").await;
        let (original, proposal) = proposal_of(bytes, dense);
        let path = session.write_file(&format!("diff_{label}.rs"), &original);
        session.exec(STALL_PROBE).await;
        session
            .exec("vim.api.nvim_create_autocmd('User', { pattern = 'PiIdeDiffOpened', callback = function() _G.opened_at = vim.uv.hrtime() end })")
            .await;
        let (mut stall, mut until_windows) = (vec![], vec![]);
        for run in 0..RUNS {
            session.exec("_G.opened_at = nil; _G.stall.reset()").await;
            let tab = format!("bench-{run}");
            let sent = now_ns();
            agent.send(json!({"jsonrpc": "2.0", "id": tab, "method": "tools/call",
                "params": {"name": "openDiff", "arguments": open_diff_args(&path, &proposal, &tab)}}));
            let opened = eventually("the diff", || async {
                session.lua("return _G.opened_at").await.as_f64()
            })
            .await;
            until_windows.push((opened - sent as f64) / 1e6);
            // Let the probe see the rest of the work (diff mode settles after open).
            session.lua("vim.wait(50)").await;
            stall.push(session.lua("return _G.stall.max").await.as_f64().unwrap() / 1e6);
            session.exec("require('pi-ide.diff').reject()").await;
            eventually("the diff to close", || async {
                (session.lua("return #require('pi-ide.diff').list()").await == 0).then_some(())
            })
            .await;
        }
        report(
            &format!("open_diff_{label}_longest_stall"),
            median(stall),
            "ms",
        );
        report(
            &format!("open_diff_{label}_until_windows"),
            median(until_windows),
            "ms",
        );
    }
}

/// Neovim's own diff mode, without the plugin: how long the main loop is
/// blocked while `:diffthis` compares two buffers of `bytes` each and a UI
/// redraws them, and when one line of one side changes (diff mode re-diffs
/// the whole file). Timed around the synchronous work (the stall probe
/// cannot see a single blocking call) and by the probe after it. Where these stop being instant is where the large view
/// starts (`HOST_DIFF_BYTES`).
pub async fn diff_mode() {
    let session = Session::spawn().await;
    attach_ui(&session).await;
    session.exec(STALL_PROBE).await;
    let sizes = [
        ("32KB", 32 << 10),
        ("64KB", 64 << 10),
        ("96KB", 96 << 10),
        ("128KB", 128 << 10),
        ("192KB", 192 << 10),
        ("256KB", 256 << 10),
        ("512KB", 512 << 10),
        ("1MB", 1 << 20),
    ];
    for ((size, bytes), dense) in sizes
        .iter()
        .flat_map(|size| [(*size, false), (*size, true)])
    {
        let label = format!("{size}_{}", if dense { "dense" } else { "sparse" });
        let (original, proposal) = proposal_of(bytes, dense);
        let lines = |text: &str| json!(text.lines().collect::<Vec<_>>());
        let (mut open, mut edit) = (vec![], vec![]);
        for _ in 0..RUNS {
            session.exec("_G.stall.reset()").await;
            let took = session
                .lua_with(
                    "local old, new = ...
                     local t0 = vim.uv.hrtime()
                     vim.cmd('tabnew')
                     local left = vim.api.nvim_get_current_buf()
                     vim.bo[left].buftype = 'nofile'
                     vim.api.nvim_buf_set_lines(left, 0, -1, false, old)
                     vim.cmd('vnew')
                     vim.bo.buftype = 'nofile'
                     vim.api.nvim_buf_set_lines(0, 0, -1, false, new)
                     vim.cmd('windo diffthis')
                     vim.cmd('redraw')
                     return vim.uv.hrtime() - t0",
                    vec![lines(&original), lines(&proposal)],
                )
                .await;
            open.push(blocked(took).max(settled_stall(&session).await));
            session.exec("_G.stall.reset()").await;
            let took = session
                .lua(
                    "local t0 = vim.uv.hrtime()
                     local middle = math.floor(vim.api.nvim_buf_line_count(0) / 2)
                     vim.api.nvim_buf_set_lines(0, middle, middle + 1, false, { 'edited' })
                     vim.cmd('redraw')
                     return vim.uv.hrtime() - t0",
                )
                .await;
            edit.push(blocked(took).max(settled_stall(&session).await));
            session
                .exec("vim.cmd('windo bwipe!'); vim.cmd('silent! tabclose')")
                .await;
        }
        report(&format!("diff_mode_{label}_open_stall"), median(open), "ms");
        report(&format!("diff_mode_{label}_edit_stall"), median(edit), "ms");
    }
}

/// Nanoseconds from Lua, in milliseconds.
fn blocked(ns: serde_json::Value) -> f64 {
    ns.as_f64().unwrap() / 1e6
}

/// The probe's longest stall once Neovim has redrawn and gone quiet.
async fn settled_stall(session: &Session) -> f64 {
    let mut last = -1.0;
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let stall = session.lua("return _G.stall.max").await.as_f64().unwrap() / 1e6;
        if stall == last {
            return stall;
        }
        last = stall;
    }
}

async fn memory_under_load() {
    let session = crate::load_driver::session().await;
    let host = crate::load_driver::host_pid(&session).await;
    let idle = crate::load_driver::rss_kib(host);
    session.exec(STALL_PROBE).await;
    let started = std::time::Instant::now();
    let report_ = crate::load_driver::run(&session, 8, 10_000, 24).await;
    let elapsed = started.elapsed().as_secs_f64();
    assert_eq!(report_.answered, vec![10_000; 8]);
    let everyone_saw_every_move = report_
        .selections
        .iter()
        .all(|seen| report_.moved_to.iter().all(|row| seen.contains(row)));
    assert!(everyone_saw_every_move);
    session.wait_clients(0).await;
    let stall = session.lua("return _G.stall.max").await.as_f64().unwrap() / 1e6;
    report("host_rss_idle", idle as f64 / 1024.0, "MiB");
    report(
        "host_rss_after_load",
        crate::load_driver::rss_kib(host) as f64 / 1024.0,
        "MiB",
    );
    report(
        "load_8x10000_requests_per_second",
        80_000.0 / elapsed,
        "req/s",
    );
    report("load_longest_main_loop_stall", stall, "ms");
}

/// Host RSS while 3×1 MB and 3×4 MB `openDiff`s are opened and rejected one
/// after another, then every 100 ms for 5 s after the last one closed.
pub async fn memory_after_large_diffs() {
    let session = Session::start().await;
    let mut agent = session.connect().await;
    session.wait_clients(1).await;
    let host = crate::load_driver::host_pid(&session).await;
    let mib = || crate::load_driver::rss_kib(host) as f64 / 1024.0;
    let idle = mib();
    let mut peak = idle;
    for (run, bytes) in [1 << 20, 1 << 20, 1 << 20, 4 << 20, 4 << 20, 4 << 20]
        .into_iter()
        .enumerate()
    {
        let (original, proposal) = proposal_of(bytes, run % 2 == 1);
        let path = session.write_file(&format!("mem_{run}.rs"), &original);
        let id = agent
            .open_diff(&path, &proposal, &format!("mem-{run}"))
            .await;
        session.wait_diffs(1).await;
        peak = peak.max(mib());
        session.exec("require('pi-ide.diff').reject()").await;
        let reply = agent.response(&id).await;
        assert_eq!(crate::common::texts(&reply)[0], "DIFF_REJECTED");
        session.wait_diffs(0).await;
        peak = peak.max(mib());
    }
    let closed = mib();
    let mut samples = Vec::new();
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        samples.push(mib());
    }
    let settled_at = samples
        .iter()
        .position(|&rss| rss <= idle + 5.0)
        .map_or(f64::NAN, |at| (at + 1) as f64 * 100.0);
    let tools = agent.request("tools/list", json!({})).await;
    assert!(
        tools["result"]["tools"].is_array(),
        "the connection still answers"
    );
    report("large_diffs_host_rss_idle", idle, "MiB");
    report("large_diffs_host_rss_peak", peak, "MiB");
    report("large_diffs_host_rss_at_close", closed, "MiB");
    report("large_diffs_host_rss_after_1s", samples[9], "MiB");
    report("large_diffs_host_rss_after_5s", samples[49], "MiB");
    report(
        "large_diffs_host_rss_within_5mib_of_idle_after",
        settled_at,
        "ms",
    );
}

/// A UI, so Neovim redraws (diff mode computes its diff when it draws).
pub async fn attach_ui(session: &Session) {
    let opts = nvim_rs::Value::Map(vec![
        ("rgb".into(), false.into()),
        ("ext_linegrid".into(), true.into()),
    ]);
    session
        .nvim
        .call("nvim_ui_attach", vec![120.into(), 40.into(), opts])
        .await
        .expect("attach a UI")
        .expect("attach a UI");
}
