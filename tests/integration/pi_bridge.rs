//! The pi bridge (`pi/nvim.ts`) end to end: real headless Neovim with the
//! plugin, the real pi in `--mode rpc` loading the extension, and a stub
//! model (`tests/mcp/pi_bridge.mjs`) that calls `nvim_get_file_text_by_path`.
//! The answer must be the buffer's unsaved text, which only Neovim has.
//! Edits wait for the person in Neovim; one aborted in pi is withdrawn there.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::common::{Session, repo_root, scratch_dir};
use crate::pi_extension::require_node_deps;

/// Runs the driver against `session` with `home` as its scratch directory;
/// its JSON report.
async fn drive_pi(session: &Session, home: &Path) -> Value {
    require_node_deps();
    // pi runs below Neovim's project root, as many start it; the bridge
    // still answers for that root.
    let cwd = session.work_dir.canonicalize().unwrap().join("src");
    std::fs::create_dir_all(&cwd).unwrap();
    let out = tokio::process::Command::new("node")
        .arg(repo_root().join("tests/mcp/pi_bridge.mjs"))
        .arg(&cwd)
        .arg(&session.lock_dir)
        .arg(home)
        .output()
        .await
        .expect("run node");
    assert!(
        out.status.success(),
        "pi_bridge.mjs failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// Waits until Neovim shows one loaded diff.
async fn wait_for_a_diff(session: &Session) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let list = session.lua("return require('pi-ide.diff').list()").await;
        if list
            .as_array()
            .is_some_and(|l| l.len() == 1 && l[0]["loading"] == false)
        {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no diff for the edit: {list}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Plays the person: accepts the first edit after a while; for the
/// second, tells the driver its diff is shown (it aborts the call in pi)
/// and returns the diffs still open a few seconds later.
async fn review_the_edits(session: &Session, home: &Path) -> Value {
    wait_for_a_diff(session).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    session
        .exec("vim.cmd('PiIde diff') vim.cmd('PiIde accept')")
        .await;
    wait_for_a_diff(session).await;
    // Long enough for pi to collect garbage several times while it waits.
    tokio::time::sleep(Duration::from_secs(1)).await;
    std::fs::write(home.join("diff-shown"), "").unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(4);
    loop {
        let list = session.lua("return require('pi-ide.diff').list()").await;
        if list.as_array().is_some_and(Vec::is_empty) || tokio::time::Instant::now() > deadline {
            return list;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn names(report: &Value, key: &str) -> Vec<String> {
    report[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {report}"))
        .iter()
        .map(|n| n.as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn pi_calls_neovim_through_the_bridge_and_sees_unsaved_text() {
    let session = Session::start().await;
    let (_, lock) = session.lockfile().await;
    let url = lock["mcpUrl"]
        .as_str()
        .expect("an mcpUrl in the lockfile")
        .to_owned();
    session.write_file("a.txt", "saved one\nsaved two\n");
    session
        .exec(
            "vim.cmd.edit('a.txt')
             vim.api.nvim_buf_set_lines(0, 1, 2, false, { 'UNSAVED in Neovim' })",
        )
        .await;

    let home = scratch_dir("pi-bridge-home");
    let (report, diffs_after_abort) =
        tokio::join!(drive_pi(&session, &home), review_the_edits(&session, &home));

    assert_eq!(report["extensionErrors"], serde_json::json!([]), "{report}");
    // Nothing of Neovim's before /nvim connect.
    let status = report["statusBefore"].as_str().unwrap();
    assert!(status.contains("Neovim bridge: disconnected"), "{status}");
    assert!(status.contains("Saved URL: none"), "{status}");
    assert!(
        !names(&report, "toolsBeforeConnect")
            .iter()
            .any(|n| n.starts_with("nvim_")),
        "{report}"
    );

    // Connected to this project's Neovim, found through its lockfile.
    let connect = report["connect"].as_str().unwrap();
    assert!(
        connect.starts_with("Connected to Neovim (pi-ide.nvim "),
        "{connect}"
    );
    assert!(connect.contains(&url), "{connect}");
    assert_eq!(
        report["footer"],
        serde_json::json!(["nvim: connecting…", "nvim: connected"])
    );
    // The URL saved, every other setting kept.
    assert_eq!(report["settings"]["nvim"]["url"], url.as_str());
    assert_eq!(report["settings"]["nvim"]["note"], "kept");
    assert_eq!(report["settings"]["unrelatedKey"]["kept"], true);

    let tools = names(&report, "toolsAfterConnect");
    for wanted in [
        "nvim_get_file_text_by_path",
        "nvim_get_file_problems",
        "nvim_find_references",
    ] {
        assert!(
            tools.iter().any(|n| n == wanted),
            "{wanted} not in {tools:?}"
        );
    }
    assert!(
        tools.iter().any(|n| n == "read"),
        "pi's own tools stay: {tools:?}"
    );
    // projectPath is the bridge's business, not the model's.
    let schema = &report["readSchema"]["parameters"];
    assert!(
        schema["properties"]["pathInProject"].is_object(),
        "{schema}"
    );
    assert!(
        schema["properties"].get("projectPath").is_none(),
        "{schema}"
    );

    // The model's call went to Neovim and came back with the buffer's text.
    assert_eq!(report["toolResult"], "saved one\nUNSAVED in Neovim");
    assert_eq!(report["toolEnd"]["isError"], false, "{report}");
    assert_eq!(
        report["toolEnd"]["result"]["details"]["structuredContent"]["fromBuffer"],
        true
    );

    // The edit waited for the person, then reached the file and pi.
    assert_eq!(report["editEnd"]["isError"], false, "{report}");
    let edit = report["editResult"].as_str().unwrap();
    assert!(edit.contains("a.txt"), "{edit}");
    assert_eq!(
        std::fs::read_to_string(session.work_dir.join("a.txt")).unwrap(),
        "saved one\nEDITED in Neovim\n"
    );

    // The second edit, aborted in pi while its diff was shown: pi ends the
    // call at once, Neovim withdraws the diff, the file stays as it was.
    assert_eq!(report["abortEnd"]["isError"], true, "{report}");
    let aborted = report["abortEnd"]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(aborted.contains("cancelled"), "{aborted}");
    assert!(
        report["abortEndMs"].as_u64().is_some_and(|ms| ms < 2_000),
        "{report}"
    );
    assert_eq!(diffs_after_abort, serde_json::json!([]), "{report}");
    assert_eq!(
        std::fs::read_to_string(session.work_dir.join("a.txt")).unwrap(),
        "saved one\nEDITED in Neovim\n"
    );

    let status = report["statusConnected"].as_str().unwrap();
    assert!(status.contains("Neovim bridge: connected"), "{status}");
    assert!(status.contains(&format!("Endpoint: {url}")), "{status}");
    assert!(status.contains("Server: pi-ide.nvim"), "{status}");
    assert!(status.contains(&format!("Saved URL: {url}")), "{status}");
    let listing = report["tools"].as_str().unwrap();
    assert!(
        listing.contains("nvim_get_file_text_by_path [active]"),
        "{listing}"
    );

    // Disconnected: the tools are gone from the model's list, the URL stays.
    assert!(
        report["disconnect"]
            .as_str()
            .unwrap()
            .starts_with("Disconnected from Neovim"),
        "{report}"
    );
    let after = names(&report, "toolsAfterDisconnect");
    assert!(!after.iter().any(|n| n.starts_with("nvim_")), "{after:?}");
    assert!(after.iter().any(|n| n == "read"), "{after:?}");
    let status = report["statusAfter"].as_str().unwrap();
    assert!(status.contains("Neovim bridge: disconnected"), "{status}");
    assert!(status.contains(&format!("Saved URL: {url}")), "{status}");

    // Reconnected; Neovim's refusal reaches the model as a tool error.
    let reconnect = report["reconnect"].as_str().unwrap();
    assert!(reconnect.starts_with("Connected to Neovim"), "{reconnect}");
    let outside = report["outsideResult"].as_str().unwrap();
    assert!(outside.contains("failed"), "{outside}");
    assert!(outside.contains("outside the project root"), "{outside}");

    // Neovim gone: the call says so and what to do, the tools go off.
    let gone = report["goneResult"].as_str().unwrap();
    assert!(gone.contains("Neovim is not reachable"), "{gone}");
    assert!(gone.contains("/nvim connect"), "{gone}");
    assert!(
        report["lostNotice"]
            .as_str()
            .is_some_and(|n| n.contains(&url)),
        "{report}"
    );
    assert_eq!(
        report["footerAfterLoss"],
        serde_json::json!(["nvim: failed"])
    );
    let after = names(&report, "toolsAfterLoss");
    assert!(!after.iter().any(|n| n.starts_with("nvim_")), "{after:?}");
    // No live lockfile announces the saved URL any more.
    let stale = report["connectStale"].as_str().unwrap();
    assert!(
        stale.contains(&format!("The saved URL {url} is stale")),
        "{stale}"
    );
    let remote = report["connectRemote"].as_str().unwrap();
    assert!(remote.contains("not a loopback address"), "{remote}");
}
