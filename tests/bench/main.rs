//! Benchmark: starts real headless Neovim with the plugin and prints one line
//! per figure, `name: value unit`, each the median of repeated runs.
//!
//! `cargo bench --bench figures` (all), or `cargo bench --bench figures -- editor`
//! (or `suggest`, `diagnostics`, `diff_mode`, `diff_memory`, `large_diff`, `mcp_tools`,
//! `lsp_references`, `watch`, `statusline`, `side_by_side`, `changes`, `chat`, `codex`,
//! `soak`) to run one group. `soak` runs only when asked for by name (an accelerated day:
//! `PI_IDE_SOAK_HOURS` simulated hours, default 8).

use pi_ide_test_support as common;
use pi_ide_test_support::load_driver;

mod changes;
mod chat;
mod chat_codecompanion;
mod codex;
mod diagnostics;
mod editor;
mod follow;
mod large_diff;
mod mcp_client;
mod mcp_tools;
mod references;
mod side_by_side;
mod soak;
mod stamped;
mod suggestions;

/// Prints one figure.
pub fn report(name: &str, value: f64, unit: &str) {
    println!("{name}: {value:.3} {unit}");
}

/// The median of a sample.
pub fn median(mut sample: Vec<f64>) -> f64 {
    sample.sort_by(f64::total_cmp);
    let n = sample.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        sample[n / 2]
    } else {
        (sample[n / 2 - 1] + sample[n / 2]) / 2.0
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let runs = |group: &str| wanted.is_empty() || wanted.iter().any(|w| group.contains(w.as_str()));
    if runs("editor") {
        editor::run().await;
    }
    if runs("diff_mode") {
        editor::diff_mode().await;
    }
    if runs("diff_memory") {
        editor::memory_after_large_diffs().await;
    }
    if runs("large_diff") {
        large_diff::run().await;
    }
    if runs("suggest") {
        suggestions::run().await;
    }
    if runs("diagnostics") {
        diagnostics::run().await;
    }
    if runs("mcp_tools") {
        mcp_tools::run().await;
    }
    if runs("lsp_references") {
        references::run().await;
    }
    if runs("watch") {
        follow::watch().await;
    }
    if runs("statusline") {
        follow::statusline().await;
    }
    if runs("chat") {
        chat::run().await;
    }
    if runs("side_by_side") {
        side_by_side::run().await;
    }
    if runs("changes") {
        changes::run().await;
    }
    if runs("codex") {
        codex::run().await;
    }
    if wanted.iter().any(|w| w == "soak") {
        soak::run().await;
    }
}
