//! The review of changes on a 50,000-file checkout (group `changes`): what
//! a baseline costs the first time (a store that knows nothing yet) and
//! then with nothing, 3 or 500 files changed since the last one; how long
//! `:PiIde changes` takes to list 3 changed files; `git status` on the same
//! tree for scale (it reads the same stat data). Timed from Lua, as the
//! person's Neovim sees them, with the longest stall of Neovim's loop while
//! each ran. Outside git the same, on a second tree without a repository.

use std::path::Path;
use std::time::Instant;

use crate::common::{Session, eventually, fresh_dir, git};
use crate::editor::STALL_PROBE;
use crate::{median, report};

const RUNS: usize = 5;
/// 50 × 20 directories of 50 files, 40 lines each: 50,000 files, 100 MB.
const TOP: usize = 50;
const MIDDLE: usize = 20;
const LEAVES: usize = 50;

fn file_at(top: usize, middle: usize, leaf: usize) -> String {
    format!("src/m{top}/s{middle}/f{leaf}.txt")
}

fn write_tree(dir: &Path) {
    for top in 0..TOP {
        for middle in 0..MIDDLE {
            std::fs::create_dir_all(dir.join(format!("src/m{top}/s{middle}"))).unwrap();
            for leaf in 0..LEAVES {
                let text: String = (0..40)
                    .map(|line| format!("line {line} of {top}/{middle}/{leaf}\n"))
                    .collect();
                std::fs::write(dir.join(file_at(top, middle, leaf)), text).unwrap();
            }
        }
    }
}

/// Rewrites `n` files spread over the tree (round `round` makes each
/// rewrite new).
fn change(dir: &Path, n: usize, round: usize) {
    for i in 0..n {
        let at = i * (TOP * MIDDLE * LEAVES / n);
        let (top, rest) = (at / (MIDDLE * LEAVES), at % (MIDDLE * LEAVES));
        let path = dir.join(file_at(top, rest / LEAVES, rest % LEAVES));
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(&format!("changed in round {round}\n"));
        std::fs::write(path, text).unwrap();
    }
}

/// Takes a baseline through the public API: (ms until `on_ready`, longest
/// stall in ms).
async fn baseline(session: &Session) -> (f64, f64) {
    session
        .exec(
            "_G.took = nil; _G.stall.reset()
             local t0 = vim.uv.hrtime()
             require('pi-ide.changes').start({ quiet = true, on_ready = function(r)
               _G.took = { ms = (vim.uv.hrtime() - t0) / 1e6, ok = r.ok, error = r.error, stall = _G.stall.max / 1e6 }
             end })",
        )
        .await;
    let took = eventually("the baseline", || async {
        let took = session.lua("return _G.took").await;
        took.is_object().then_some(took)
    })
    .await;
    assert_eq!(took["ok"], true, "{took}");
    (
        took["ms"].as_f64().unwrap(),
        took["stall"].as_f64().unwrap(),
    )
}

/// `:PiIde changes` until its listing arrives (ms), the files kept after.
async fn listing(session: &Session, files: usize) -> f64 {
    session
        .exec(
            "_G.listed, _G.reviewed = nil, nil
             local t0 = vim.uv.hrtime()
             require('pi-ide.changes').review({
               on_listed = function(l) _G.listed = { ms = (vim.uv.hrtime() - t0) / 1e6, n = #l.files } end,
               on_done = function(r) _G.reviewed = r end,
             })",
        )
        .await;
    let listed = eventually("the listing", || async {
        let listed = session.lua("return _G.listed").await;
        listed.is_object().then_some(listed)
    })
    .await;
    assert_eq!(listed["n"], files, "{listed}");
    session.wait_diffs(files).await;
    session
        .exec("for _, d in ipairs(require('pi-ide.diff').list()) do require('pi-ide.diff').accept(d.tab_name) end")
        .await;
    eventually("the review's end", || async {
        session
            .lua("return _G.reviewed ~= nil")
            .await
            .as_bool()
            .filter(|done| *done)
    })
    .await;
    listed["ms"].as_f64().unwrap()
}

fn git_status_ms(dir: &Path) -> f64 {
    let start = Instant::now();
    git(dir, &["status", "--porcelain"]);
    start.elapsed().as_secs_f64() * 1e3
}

/// A fresh store: the next baseline is a first one.
fn forget_store(session: &Session) {
    let _ = std::fs::remove_dir_all(session.state_dir.join("nvim/pi-ide/changes"));
}

async fn measure(session: &Session, dir: &Path, label: &str, in_git: bool) {
    let mut first = vec![];
    for _ in 0..if in_git { 3 } else { 1 } {
        forget_store(session);
        first.push(baseline(session).await.0);
    }
    report(
        &format!("changes_{label}_first_baseline"),
        median(first),
        "ms",
    );
    let mut round = 0;
    for (n, name) in [(0, "unchanged"), (3, "3_changed"), (500, "500_changed")] {
        let (mut took, mut stalls) = (vec![], vec![]);
        for _ in 0..RUNS {
            round += 1;
            change(dir, n, round);
            let (ms, stall) = baseline(session).await;
            took.push(ms);
            stalls.push(stall);
        }
        report(
            &format!("changes_{label}_baseline_{name}"),
            median(took),
            "ms",
        );
        report(
            &format!("changes_{label}_baseline_{name}_longest_stall"),
            median(stalls),
            "ms",
        );
    }
    let mut listed = vec![];
    for _ in 0..RUNS {
        round += 1;
        change(dir, 3, round);
        listed.push(listing(session, 3).await);
    }
    report(
        &format!("changes_{label}_listing_3_changed"),
        median(listed),
        "ms",
    );
}

pub async fn run() {
    let dir = fresh_dir("changes-50k");
    write_tree(&dir);
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-qm", "50,000 files"]);
    let session = Session::start_in(dir.clone(), &[], "{ agent = { baseline = false } }").await;
    session.lockfile().await;
    session.exec(STALL_PROBE).await;
    measure(&session, &dir, "50k_git", true).await;
    let status: Vec<f64> = (0..RUNS).map(|_| git_status_ms(&dir)).collect();
    report("changes_50k_git_status_for_scale", median(status), "ms");
    drop(session);

    let plain = fresh_dir("changes-50k-plain");
    write_tree(&plain);
    let session = Session::start_in(plain.clone(), &[], "{ agent = { baseline = false } }").await;
    session.lockfile().await;
    session.exec(STALL_PROBE).await;
    measure(&session, &plain, "50k_plain", false).await;
    assert!(!plain.join(".git").exists());
}
