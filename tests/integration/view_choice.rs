//! Which view a diff opens in: Neovim's diff mode only where it stays
//! within a frame, the host's large-file view (no `'diff'` windows) for
//! everything larger or changed more densely.

use serde_json::{Value, json};

use crate::common::{Session, eventually, texts};

/// `lines` numbered lines of about 64 bytes, and the same with every
/// `every`th one changed.
fn changed_every(lines: usize, every: usize) -> (String, String) {
    let original: String = (0..lines)
        .map(|i| format!("let value_{i:07} = compute(previous, next); // ordinary code\n"))
        .collect();
    let proposal = original
        .lines()
        .enumerate()
        .map(|(i, l)| match i % every == every / 2 {
            true => format!("{l} // changed\n"),
            false => format!("{l}\n"),
        })
        .collect();
    (original, proposal)
}

/// For each window of the diff's tab: `'diff'`, and whether the winbar
/// names the large-file view; and whether the host's hunks are drawn.
const VIEW: &str = "local d = require('pi-ide.diff').list()[1]
  local windows = vim.tbl_map(function(w)
    return { diff = vim.wo[w].diff, large = vim.wo[w].winbar:find('large-file view', 1, true) ~= nil }
  end, vim.api.nvim_tabpage_list_wins(d.tabpage))
  return { windows = windows, host_hunks = require('pi-ide.diff.hunks').hunks(d.proposed_buf) ~= nil }";

/// Opens `proposal` of `original` as a Claude Code agent does and returns
/// the view once the diff has loaded; then rejects it.
async fn view_of(name: &str, original: &str, proposal: &str) -> Value {
    let session = Session::start().await;
    let mut agent = session.connect_claude().await;
    let path = session.write_file(name, original);
    let id = agent.open_diff(&path, proposal, name).await;
    session.wait_diffs(1).await;
    // Diff mode is set in the step that shows the loaded text.
    let view = eventually("the view", || async {
        let view = session.lua(VIEW).await;
        let diff_mode = view["windows"]
            .as_array()?
            .iter()
            .all(|w| w["diff"] == true);
        (diff_mode || view["host_hunks"] == true).then_some(view)
    })
    .await;
    session.exec("require('pi-ide.diff').reject()").await;
    assert_eq!(texts(&agent.response(&id).await)[0], "DIFF_REJECTED");
    view
}

/// The large-file view: no window in diff mode, the left one's winbar
/// naming the view, the host's hunks drawn.
fn host_view() -> Value {
    json!({
        "windows": [{ "diff": false, "large": true }, { "diff": false, "large": false }],
        "host_hunks": true,
    })
}

#[tokio::test]
async fn a_1mb_proposal_opens_without_diff_mode() {
    let (original, proposal) = changed_every((1 << 20) / 64, 200);
    assert_eq!(view_of("large.rs", &original, &proposal).await, host_view());
}

#[tokio::test]
async fn a_small_file_changed_densely_opens_without_diff_mode() {
    // 100 KB: diff mode would fold 1,600 lines around 533 hunks.
    let (original, proposal) = changed_every(1600, 3);
    assert_eq!(view_of("dense.rs", &original, &proposal).await, host_view());
}

#[tokio::test]
async fn a_small_file_changed_here_and_there_keeps_diff_mode() {
    let (original, proposal) = changed_every(1600, 200);
    let window = json!({ "diff": true, "large": false });
    assert_eq!(
        view_of("sparse.rs", &original, &proposal).await,
        json!({ "windows": [window.clone(), window], "host_hunks": false })
    );
}
