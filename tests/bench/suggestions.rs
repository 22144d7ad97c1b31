//! Suggestion figures: UI-thread time per keystroke and per trigger, time
//! from trigger to `getSuggestions` on the wire, payload size.

use serde_json::{Value, json};

use crate::common::Session;
use crate::stamped::StampedAgent;
use crate::{median, report};

const SAMPLE: &str = include_str!("../fixtures/outline/sample.rs");
const BROKEN: &str = include_str!("../fixtures/outline/broken.rs");
const RUNS: usize = 7;
const KEYSTROKES: usize = 300;

/// `lines` lines of Rust made of copies of `unit`.
fn source(unit: &str, lines: usize) -> String {
    unit.lines()
        .cycle()
        .take(lines)
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// `lines` lines of valid Rust with one broken copy in the middle.
fn source_with_one_error(lines: usize) -> String {
    let half = source(SAMPLE, lines / 2);
    let rest = source(SAMPLE, lines - lines / 2 - BROKEN.lines().count());
    format!("{half}{BROKEN}{rest}")
}

async fn session_with_agent(opts: &str) -> (Session, StampedAgent) {
    let session = Session::start_with(opts).await;
    let (port, lock) = session.lockfile().await;
    let agent = StampedAgent::connect(port, lock["authToken"].as_str().unwrap()).await;
    session.wait_clients(1).await;
    (session, agent)
}

pub async fn run() {
    keystrokes().await;
    trigger_to_wire("2k", &source(SAMPLE, 2_000)).await;
    trigger_to_wire("60k", &source(SAMPLE, 60_000)).await;
    trigger_to_wire("60k_one_syntax_error", &source_with_one_error(60_000)).await;
    trigger_to_wire("60k_syntax_error_every_39_lines", &source(BROKEN, 60_000)).await;
}

/// Time spent in the plugin's insert-mode autocmds per typed character.
async fn keystrokes() {
    let (session, _agent) = session_with_agent("{ suggestion = { debounce_ms = 150 } }").await;
    let path = session.write_file("typing.rs", &source(SAMPLE, 2_000));
    session
        .exec(&format!(
            "vim.cmd.edit('{}'); vim.api.nvim_win_set_cursor(0, {{1000, 0}})",
            path.display()
        ))
        .await;
    // Replace the plugin's insert-mode autocmds by timed calls of the same handlers.
    session
        .exec(
            "_G.bench = { ns = 0 }
             local uv = vim.uv
             local suggest, selection = require('pi-ide.suggest'), require('pi-ide.selection')
             vim.api.nvim_clear_autocmds({ group = 'PiIde', event = { 'TextChangedI', 'CursorMovedI' } })
             vim.api.nvim_create_autocmd({ 'TextChangedI', 'CursorMovedI' }, { group = 'PiIde', callback = function()
               local t = uv.hrtime(); selection.on_event(); suggest.on_typing()
               _G.bench.ns = _G.bench.ns + uv.hrtime() - t
             end })",
        )
        .await;
    session.input("o").await;
    let mut per_key = Vec::new();
    for _ in 0..RUNS {
        session.exec("_G.bench.ns = 0").await;
        for i in 0..KEYSTROKES {
            session.input(if i % 10 == 9 { " " } else { "x" }).await;
            session.lua("return 1").await;
        }
        let ns = session.lua("return _G.bench.ns").await.as_f64().unwrap();
        per_key.push(ns / KEYSTROKES as f64 / 1000.0);
    }
    report("suggest_ui_per_keystroke", median(per_key), "us");

    // What Neovim pays per buffer change once the host mirrors the buffer.
    let change = "local t = vim.uv.hrtime()
                  for i = 1, 2000 do vim.api.nvim_buf_set_text(0, 999, 0, 999, 0, { 'y' }) end
                  return (vim.uv.hrtime() - t) / 2000 / 1000";
    let mut attached = Vec::new();
    let mut detached = Vec::new();
    for _ in 0..RUNS {
        attached.push(session.lua(change).await.as_f64().unwrap());
    }
    session.exec("vim.cmd('enew'); vim.bo.buftype = ''; vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.fn['repeat']({''}, 1000))").await;
    for _ in 0..RUNS {
        detached.push(session.lua(change).await.as_f64().unwrap());
    }
    report("buffer_change_mirrored", median(attached), "us");
    report("buffer_change_not_mirrored", median(detached), "us");
}

/// Trigger → `getSuggestions` on the wire, cold (fresh buffer: attach + full
/// parse) and after a one-character edit (incremental reparse).
async fn trigger_to_wire(label: &str, text: &str) {
    // The 60k-line sources are over the default `max_file_size` (1 MiB).
    let (session, mut agent) = session_with_agent(
        "{ suggestion = { auto_trigger = false, max_file_size = 16 * 1024 * 1024 } }",
    )
    .await;
    let path = session.write_file(&format!("big_{label}.rs"), text);
    // A `    x: i32,` line near the middle: typing there keeps the syntax valid.
    let row = text
        .lines()
        .enumerate()
        .skip(text.lines().count() / 2)
        .find(|(_, l)| *l == "    x: i32,")
        .map_or(1, |(i, _)| i + 1);
    let trigger = "local t0 = vim.uv.hrtime(); require('pi-ide.suggest').trigger(); return { t0, vim.uv.hrtime() - t0 }";
    let (mut cold, mut warm, mut ui_cold, mut ui_warm, mut bytes) =
        (vec![], vec![], vec![], vec![], 0);
    for _ in 0..RUNS {
        session
            .exec(&format!(
                "vim.cmd('silent! %bwipeout!'); vim.cmd.edit('{}')",
                path.display()
            ))
            .await;
        session.place_cursor(row as u64, 4).await;
        for (wire, ui) in [(&mut cold, &mut ui_cold), (&mut warm, &mut ui_warm)] {
            let started = session.lua(trigger).await;
            let frame = agent.request("getSuggestions").await;
            wire.push((frame.at_ns as f64 - started[0].as_f64().unwrap()) / 1e6);
            ui.push(started[1].as_f64().unwrap() / 1e3);
            bytes = frame.bytes;
            agent.reply(&frame.message["id"], json!({"suggestions": []}));
            // After the cursor, so it stays where the next trigger expects it.
            let _: Value = session
                .lua(&format!(
                    "vim.api.nvim_buf_set_text(0, {}, 5, {}, 5, {{ 'x' }})",
                    row - 1,
                    row - 1
                ))
                .await;
        }
    }
    report(
        &format!("suggest_trigger_to_wire_{label}_cold"),
        median(cold),
        "ms",
    );
    report(
        &format!("suggest_trigger_to_wire_{label}_after_edit"),
        median(warm),
        "ms",
    );
    report(
        &format!("suggest_trigger_ui_{label}_cold"),
        median(ui_cold),
        "us",
    );
    report(
        &format!("suggest_trigger_ui_{label}_after_edit"),
        median(ui_warm),
        "us",
    );
    report(&format!("suggest_payload_{label}"), bytes as f64, "bytes");
}
