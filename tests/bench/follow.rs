//! Buffers following the disk (group `watch`: UI time is that of every
//! reload, which run in slices of 8 ms) and the statusline
//! string (group `statusline`).

use serde_json::json;

use crate::common::{Session, eventually};
use crate::editor::STALL_PROBE;
use crate::stamped::now_ns;
use crate::{median, report};

const RUNS: usize = 5;

/// Neovim with 500 of 2,000 files loaded (4 directories); files_changed
/// timed from inside (UI time) and the reloads stamped.
async fn loaded_500() -> (Session, Vec<std::path::PathBuf>, Vec<String>) {
    let session = Session::start().await;
    session.lockfile().await;
    let mut paths = vec![];
    for dir in 0..4 {
        std::fs::create_dir_all(session.work_dir.join(format!("d{dir}"))).unwrap();
        for file in 0..500 {
            let text: String = (0..40).map(|n| format!("line {n} of {file}\n")).collect();
            paths.push(session.write_file(&format!("d{dir}/f{file}.rs"), &text));
        }
    }
    let loaded: Vec<String> = paths
        .iter()
        .step_by(4)
        .map(|p| p.display().to_string())
        .collect();
    session
        .lua_with(
            "for _, name in ipairs(...) do vim.fn.bufload(vim.fn.bufadd(name)) end
             _G.watch = { ui_ns = 0, pushes = 0, done_at = 0 }
             local calls = require('pi-ide.seam').calls
             local files_changed = calls.files_changed
             local function timed(inner)
               return function(...)
                 local t0 = vim.uv.hrtime()
                 local result = inner(...)
                 local t1 = vim.uv.hrtime()
                 _G.watch.ui_ns = _G.watch.ui_ns + (t1 - t0)
                 _G.watch.done_at = t1
                 return result
               end
             end
             calls.files_changed = function(...)
               _G.watch.pushes = _G.watch.pushes + 1
               return files_changed(...)
             end
             -- The reloads run in slices after the call returns.
             local reload = require('pi-ide.follow.reload')
             reload.sync = timed(reload.sync)",
            vec![json!(loaded)],
        )
        .await;
    session.exec(STALL_PROBE).await;
    (session, paths, loaded)
}

pub async fn watch() {
    let (session, paths, loaded) = loaded_500().await;
    // The watch is in place once one rewrite shows.
    let probe = &paths[0];
    let mut written = 0;
    eventually("the watch", || {
        written += 1;
        if written % 50 == 1 {
            std::fs::write(probe, "probe\n").unwrap();
        }
        let session = &session;
        async move {
            let first = session
                .lua_with(
                    "return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, 1, false)[1]",
                    vec![json!(probe)],
                )
                .await;
            (first == "probe").then_some(())
        }
    })
    .await;
    let (mut one, mut burst_ui, mut burst_total, mut burst_stall, mut pushes) =
        (vec![], vec![], vec![], vec![], vec![]);
    for run in 0..RUNS {
        // One file written by another process, to its buffer showing it.
        session.exec("_G.watch.done_at = 0").await;
        let at = now_ns();
        std::fs::write(probe, format!("probe {run}\n")).unwrap();
        let done = eventually("the one reload", || async {
            let done = session
                .lua("return _G.watch.done_at")
                .await
                .as_u64()
                .unwrap();
            (done > at).then_some(done)
        })
        .await;
        one.push((done - at) as f64 / 1e6);

        // A checkout-like burst: all 2,000 files rewritten, 500 loaded.
        session
            .exec("_G.watch.ui_ns, _G.watch.pushes, _G.watch.done_at = 0, 0, 0; _G.stall.reset()")
            .await;
        let at = now_ns();
        for (i, path) in paths.iter().enumerate() {
            let text: String = (0..40)
                .map(|n| format!("line {n} of {i}, run {run}\n"))
                .collect();
            std::fs::write(path, text).unwrap();
        }
        let wanted = format!("line 0 of {}, run {run}", 4 * 499);
        let last = loaded.last().unwrap().clone();
        eventually("the burst's reloads", || async {
            let first = session
                .lua_with(
                    "return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, 1, false)[1]",
                    vec![json!(last)],
                )
                .await;
            (first == wanted.as_str()).then_some(())
        })
        .await;
        // Later pushes of the same burst still count.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let figures = session.lua("return { _G.watch, _G.stall.max }").await;
        burst_ui.push(figures[0]["ui_ns"].as_f64().unwrap() / 1e6);
        burst_total.push((figures[0]["done_at"].as_u64().unwrap().saturating_sub(at)) as f64 / 1e6);
        pushes.push(figures[0]["pushes"].as_f64().unwrap());
        burst_stall.push(figures[1].as_f64().unwrap() / 1e6);
    }
    report("watch_one_write_to_reloaded", median(one), "ms");
    report(
        "watch_burst_2000_files_500_loaded_ui_time",
        median(burst_ui),
        "ms",
    );
    report(
        "watch_burst_2000_files_500_loaded_pushes",
        median(pushes),
        "calls",
    );
    report(
        "watch_burst_2000_files_500_loaded_longest_stall",
        median(burst_stall),
        "ms",
    );
    report(
        "watch_burst_2000_files_500_loaded_until_reloaded",
        median(burst_total),
        "ms",
    );
}

pub async fn statusline() {
    let session = Session::start().await;
    let _agent = session.connect().await;
    session.wait_clients(1).await;
    let mut per_call = vec![];
    for _ in 0..RUNS {
        let ns = session
            .lua(
                "local statusline = require('pi-ide').statusline
                 statusline()
                 local t0 = vim.uv.hrtime()
                 for _ = 1, 100000 do statusline() end
                 return vim.uv.hrtime() - t0",
            )
            .await;
        per_call.push(ns.as_f64().unwrap() / 1e5 / 1e3);
    }
    let text = session.lua("return require('pi-ide').statusline()").await;
    assert_eq!(text, "pi", "the statusline names the connected agent");
    report("statusline_per_call", median(per_call), "µs");
}
