//! The pi bridge (`pi/nvim.ts`) end to end, in both pi distributions: real
//! headless Neovims with the plugin, the real pi in `--mode rpc` loading the
//! extension, and a stub model that calls the tools the driver
//! (`tests/mcp/pi_bridge.mjs`) asks for. Seed 004's required tests: no
//! tool and no I/O at start; the saved URL tried first and never silently
//! replaced; a missing Neovim opened through a (fake) tmux and connected; a
//! failed or stale connect leaves nothing active; only the advertised
//! catalog, refreshed on reconnect; `projectPath` = pi's cwd on every call;
//! every kind of result, progress, cancellation, timeouts, collisions and
//! malformed schemas; two worktrees without leakage.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Scratch, Session, host_binary, nvim_binary, repo_root, scratch_dir};
use crate::mcp_lasting::free_port;
use crate::pi_extension::Pi;

/// Runs `scenario` of the driver in `pi` with `config`; its JSON report.
async fn drive(pi: &Pi, scenario: &str, config: Value) -> Value {
    let out = tokio::process::Command::new(&pi.node)
        .arg(repo_root().join("tests/mcp/pi_bridge.mjs"))
        .arg(scenario)
        .arg(config.to_string())
        .env("PI_CLI", &pi.cli)
        .env("PI_NODE", &pi.node)
        .kill_on_drop(true)
        .output()
        .await
        .expect("run node");
    assert!(
        out.status.success(),
        "pi_bridge.mjs {scenario} in {} failed ({}):\n{}\n{}",
        pi.name,
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn names(report: &Value, key: &str) -> Vec<String> {
    report[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {report}"))
        .iter()
        .map(|n| n.as_str().unwrap().to_owned())
        .collect()
}

fn nvim_names(report: &Value, key: &str) -> Vec<String> {
    names(report, key)
        .into_iter()
        .filter(|n| n.starts_with("nvim_"))
        .collect()
}

fn said<'a>(report: &'a Value, key: &str) -> &'a str {
    report[key]
        .as_str()
        .unwrap_or_else(|| panic!("no {key} in {report}"))
}

/// The text of a tool call the model made (`pi.call` in the driver).
fn result<'a>(report: &'a Value, key: &str) -> &'a str {
    report[key]["result"]
        .as_str()
        .unwrap_or_else(|| panic!("no {key}.result in {report}"))
}

/// Runs `$test(pi)` as one test per pi distribution.
macro_rules! in_both_pis {
    ($test:ident) => {
        mod $test {
            #[tokio::test]
            async fn in_the_older_pi() {
                super::$test(&crate::pi_extension::older_pi()).await;
            }
            #[tokio::test]
            async fn in_the_newest_pi() {
                super::$test(&crate::pi_extension::newest_pi()).await;
            }
        }
    };
}

// ---------------------------------------------------------------------------
// A fake tmux and nvim on PATH
// ---------------------------------------------------------------------------

/// `tmux` and `nvim` stand-ins that record their arguments. tmux runs the
/// pane's command (in its `-c` directory) unless `no-nvim` exists; nvim
/// starts a real headless Neovim with the plugin set up with `opts`.
struct FakeLauncher {
    bin: Scratch,
    records: Scratch,
    /// The fake Neovim's stdpath("state"), kept until the test ends.
    _state: Scratch,
}

impl FakeLauncher {
    fn new(opts: &str) -> FakeLauncher {
        let bin = scratch_dir("fake-bin");
        let records = scratch_dir("fake-records");
        let state = scratch_dir("fake-nvim-state");
        let r = records.display();
        write_script(
            &bin.join("tmux"),
            &format!(
                r#"#!/bin/sh
# pi itself asks tmux about the terminal: only panes are recorded.
[ "$1" = split-window ] || exit 0
printf '%s\n' "$@" > '{r}/tmux.'$$
dir=
while [ $# -gt 0 ]; do
  case "$1" in
    split-window|-h) shift ;;
    -c) dir=$2; shift 2 ;;
    -t) shift 2 ;;
    -e) export "$2"; shift 2 ;;
    *) break ;;
  esac
done
[ -e '{r}/no-nvim' ] && exit 0
cd "$dir" || exit 1
"$@" </dev/null >/dev/null 2>&1 &
exit 0
"#
            ),
        );
        let s = state.display();
        write_script(
            &bin.join("nvim"),
            &format!(
                r#"#!/bin/sh
printf '%s\n' "$@" > '{r}/nvim.'$$
pwd > '{r}/nvim-cwd.'$$
echo $$ > '{r}/launched.'$$
export XDG_STATE_HOME='{s}' XDG_DATA_HOME='{s}/data' XDG_CONFIG_HOME='{s}/config' CLAUDE_CONFIG_DIR='{s}/claude' QWEN_HOME='{s}/qwen'
mkdir -p '{s}/tmp' && unset TMPDIR && export TMP='{s}/tmp'
exec '{nvim}' --headless -u NONE -i NONE -n --cmd 'set rtp^={plugin}' --cmd 'runtime plugin/pi-ide.lua' \
  -c "lua require('pi-ide').setup({opts})"
"#,
                nvim = nvim_binary(),
                plugin = repo_root().display(),
            ),
        );
        FakeLauncher {
            bin,
            records,
            _state: state,
        }
    }

    /// pi's environment: inside "tmux", the fakes first on PATH.
    fn env(&self) -> Value {
        let path = format!("{}:{}", self.bin.display(), std::env::var("PATH").unwrap());
        json!({"PATH": path, "TMUX": "/tmp/tmux-fake/default,1,0", "TMUX_PANE": "%7"})
    }

    /// The argument lists `program` was called with, oldest first.
    fn calls(&self, program: &str) -> Vec<Vec<String>> {
        self.records_of(program)
            .into_iter()
            .map(|text| text.lines().map(str::to_owned).collect())
            .collect()
    }

    fn records_of(&self, prefix: &str) -> Vec<String> {
        let mut found: Vec<(std::time::SystemTime, String)> = std::fs::read_dir(&*self.records)
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with(&format!("{prefix}.")))
            })
            .map(|e| {
                let when = e.metadata().unwrap().modified().unwrap();
                (when, std::fs::read_to_string(e.path()).unwrap())
            })
            .collect();
        found.sort();
        found.into_iter().map(|(_, text)| text).collect()
    }
}

impl Drop for FakeLauncher {
    /// The Neovims the fake opened end with the test.
    fn drop(&mut self) {
        for pid in self.records_of("launched") {
            if let Ok(pid) = pid.trim().parse::<i32>() {
                let _ = std::process::Command::new("kill")
                    .arg(pid.to_string())
                    .status();
            }
        }
    }
}

fn write_script(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap()
}

// ---------------------------------------------------------------------------
// Start-up
// ---------------------------------------------------------------------------

async fn starts_with_no_tools_and_no_io(pi: &Pi) {
    let home = scratch_dir("pi-bridge-home");
    let project = scratch_dir("pi-bridge-project");
    let fake = FakeLauncher::new("{}");
    let report = drive(
        pi,
        "startup",
        json!({"cwd": canonical(&project), "home": &*home, "env": fake.env()}),
    )
    .await;
    // pi answered at all: it never read the lockfile (a FIFO would block it).
    assert_eq!(report["extensionErrors"], json!([]), "{report}");
    assert!(nvim_names(&report, "toolsAtStart").is_empty(), "{report}");
    assert!(
        names(&report, "toolsAtStart").iter().any(|n| n == "read"),
        "{report}"
    );
    let status = said(&report, "status");
    assert!(status.contains("Neovim bridge: disconnected"), "{status}");
    assert_eq!(report["footer"], json!([]), "{report}");
    assert_eq!(report["dialogs"], json!([]), "{report}");
    assert!(fake.calls("tmux").is_empty(), "tmux ran at start-up");
}
in_both_pis!(starts_with_no_tools_and_no_io);

// ---------------------------------------------------------------------------
// The main path
// ---------------------------------------------------------------------------

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
    // Longer than any bound the bridge puts on reads: edits have none.
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

async fn calls_neovim_and_sees_unsaved_text(pi: &Pi) {
    let session = Session::start().await;
    let (_, lock) = session.lockfile().await;
    let url = lock["mcpUrl"].as_str().expect("an mcpUrl").to_owned();
    session.write_file("a.txt", "saved one\nsaved two\n");
    session
        .exec(
            "vim.cmd.edit('a.txt')
             vim.api.nvim_buf_set_lines(0, 1, 2, false, { 'UNSAVED in Neovim' })",
        )
        .await;
    let cwd = canonical(&session.work_dir);
    let home = scratch_dir("pi-bridge-home");
    let fake = FakeLauncher::new("{}");
    let config = json!({
        "cwd": cwd, "lockDir": &session.lock_dir, "home": &*home, "url": url, "env": fake.env(),
    });
    let (report, diffs_after_abort) =
        tokio::join!(drive(pi, "main", config), review_the_edits(&session, &home));

    assert_eq!(report["extensionErrors"], json!([]), "{report}");
    let status = said(&report, "statusBefore");
    assert!(status.contains("Neovim bridge: disconnected"), "{status}");
    assert!(status.contains(&format!("Saved URL: {url}")), "{status}");

    // The saved URL connects; nothing was opened for it.
    let connect = said(&report, "connect");
    assert!(
        connect.starts_with("Connected to Neovim (pi-ide.nvim "),
        "{connect}"
    );
    assert!(connect.contains(&url), "{connect}");
    assert!(
        !connect.contains("saved"),
        "the URL was already saved: {connect}"
    );
    assert!(
        fake.calls("tmux").is_empty(),
        "a saved URL needs no launcher"
    );
    assert_eq!(
        report["footer"],
        json!(["nvim: connecting…", "nvim: connected"])
    );
    assert_eq!(report["settings"]["nvim"]["url"], url.as_str());
    assert_eq!(report["settings"]["nvim"]["note"], "kept");
    assert_eq!(report["settings"]["unrelatedKey"]["kept"], true);

    let tools = names(&report["read"], "tools");
    for wanted in [
        "nvim_get_file_text_by_path",
        "nvim_get_file_problems",
        "nvim_find_references",
        "read",
    ] {
        assert!(
            tools.iter().any(|n| n == wanted),
            "{wanted} not in {tools:?}"
        );
    }
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
    // One guide for every tool, once in the system prompt, rooted at pi's cwd.
    let system = said(&report, "systemPrompt");
    let guide = format!(
        "Paths in nvim_* arguments and results are relative to {}",
        cwd.display()
    );
    assert_eq!(system.matches(&guide).count(), 1, "{system}");
    assert_eq!(
        system
            .matches("wait for the user to review them in Neovim")
            .count(),
        1,
        "{system}"
    );

    // The model's call went to Neovim and came back with the buffer's text.
    assert_eq!(result(&report, "read"), "saved one\nUNSAVED in Neovim");
    assert_eq!(report["read"]["isError"], false, "{report}");
    assert_eq!(
        report["read"]["end"]["result"]["details"]["structuredContent"]["fromBuffer"],
        true
    );

    // The edit waited for the person, then reached the file and pi.
    assert_eq!(report["edit"]["isError"], false, "{report}");
    assert!(result(&report, "edit").contains("a.txt"), "{report}");

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
    assert_eq!(diffs_after_abort, json!([]), "{report}");
    assert_eq!(
        std::fs::read_to_string(session.work_dir.join("a.txt")).unwrap(),
        "saved one\nEDITED in Neovim\n"
    );

    let status = said(&report, "statusConnected");
    assert!(status.contains("Neovim bridge: connected"), "{status}");
    assert!(status.contains(&format!("Endpoint: {url}")), "{status}");
    assert!(status.contains("Server: pi-ide.nvim"), "{status}");
    let listing = said(&report, "tools");
    assert!(
        listing.contains("nvim_get_file_text_by_path [active]"),
        "{listing}"
    );

    // Disconnected: the tools are gone from the model's list, the URL stays.
    assert!(
        said(&report, "disconnect").starts_with("Disconnected from Neovim"),
        "{report}"
    );
    let after = names(&report, "toolsAfterDisconnect");
    assert!(!after.iter().any(|n| n.starts_with("nvim_")), "{after:?}");
    assert!(after.iter().any(|n| n == "read"), "{after:?}");
    let status = said(&report, "statusAfter");
    assert!(status.contains("Neovim bridge: disconnected"), "{status}");
    assert!(status.contains(&format!("Saved URL: {url}")), "{status}");

    // Reconnected; Neovim's refusal reaches the model as a tool error.
    assert!(said(&report, "reconnect").starts_with("Connected to Neovim"));
    let outside = result(&report, "outside");
    assert!(outside.contains("failed"), "{outside}");
    assert!(outside.contains("outside the project root"), "{outside}");

    // Neovim gone: the call says so and what to do, the tools go off.
    let gone = result(&report, "gone");
    assert!(gone.contains("Neovim is not reachable"), "{gone}");
    assert!(gone.contains("/nvim connect"), "{gone}");
    assert!(said(&report, "lostNotice").contains(&url), "{report}");
    assert_eq!(report["footerAfterLoss"], json!(["nvim: failed"]));
    assert!(nvim_names(&report, "toolsAfterLoss").is_empty(), "{report}");

    // The saved URL is stale: pi offers to open Neovim (declined here),
    // then says what to run; nothing is active and the URL stays saved.
    let stale = said(&report, "connectStale");
    assert!(
        stale.contains(&format!("The saved URL {url}")) && stale.contains("is stale"),
        "{stale}"
    );
    assert!(
        stale.contains(&format!("cd {:?} && nvim", cwd.display().to_string())),
        "{stale}"
    );
    assert!(stale.contains("/nvim connect"), "{stale}");
    let dialogs = report["dialogsWhenStale"].as_array().unwrap();
    assert_eq!(dialogs.len(), 1, "{dialogs:?}");
    assert_eq!(dialogs[0]["method"], "confirm", "{dialogs:?}");
    assert!(fake.calls("tmux").is_empty(), "declined: nothing opened");
    assert_eq!(
        report["footerWhenStale"],
        json!(["nvim: connecting…", "nvim: failed"])
    );
    assert_eq!(report["settingsAtEnd"]["nvim"]["url"], url.as_str());
    assert!(said(&report, "connectRemote").contains("not a loopback address"));
}
in_both_pis!(calls_neovim_and_sees_unsaved_text);

// ---------------------------------------------------------------------------
// What Neovim advertises, through a recording proxy
// ---------------------------------------------------------------------------

async fn carries_what_neovim_advertises(pi: &Pi) {
    let session = Session::start().await;
    let (_, _) = session.lockfile().await;
    session.write_file("a.txt", "alpha\n");
    let lock = std::fs::read_dir(&session.lock_dir)
        .unwrap()
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "lock"))
        .unwrap()
        .path();
    let cwd = canonical(&session.work_dir);
    let home = scratch_dir("pi-bridge-home");
    let report = drive(
        pi,
        "proxy",
        json!({"cwd": cwd, "home": &*home, "neovimLock": lock}),
    )
    .await;
    assert_eq!(report["extensionErrors"], json!([]), "{report}");
    let connect = said(&report, "connect");
    assert!(connect.starts_with("Connected to Neovim"), "{connect}");
    // The URL the trusted project names connects, and is not copied into
    // pi's own settings; the footer uses the Nerd Font icon asked for.
    let proxy = said(&report, "proxyUrl");
    assert!(
        connect.contains(proxy) && !connect.contains("saved"),
        "{connect}"
    );
    let project_settings = cwd.join(".pi/settings.json");
    assert!(
        said(&report, "status").contains(&format!(
            "Saved URL: {proxy} ({})",
            project_settings.display()
        )),
        "{report}"
    );
    assert_eq!(report["globalSettings"], json!({"nvim": {"icons": "nerd"}}));
    assert_eq!(
        report["footer"],
        json!(["\u{f36f} connecting…", "\u{f36f} connected"])
    );
    // Malformed schemas are left out and said so; the rest is exposed.
    assert!(
        connect.contains("bad_schema: inputSchema has type \"string\""),
        "{connect}"
    );
    assert!(
        connect.contains("bad_required: required property ghost"),
        "{connect}"
    );
    let mut expected: Vec<String> = names(&report, "advertised")
        .iter()
        .filter(|n| !n.starts_with("bad_"))
        .map(|n| format!("nvim_{}", n.replace('.', "_")))
        .collect();
    // The collision gets a deterministic suffix.
    let collided = expected
        .iter()
        .rposition(|n| n == "nvim_get_file_text_by_path")
        .unwrap();
    expected[collided] = "nvim_get_file_text_by_path_2".into();
    let mut offered = nvim_names(&report, "offered");
    offered.sort();
    expected.sort();
    assert_eq!(offered, expected);
    // Each name reaches its own remote tool.
    assert_eq!(result(&report, "collision"), "the colliding one");
    assert_eq!(report["collision"]["isError"], false, "{report}");

    // Text, images, errors, legacy results.
    assert_eq!(result(&report, "text"), "alpha");
    let image = &report["image"]["end"]["result"]["content"];
    assert_eq!(image[1]["type"], "image", "{image}");
    assert_eq!(image[1]["mimeType"], "image/png", "{image}");
    assert!(result(&report, "fails").contains("Neovim's fails failed: the file is gone"));
    assert_eq!(report["fails"]["isError"], true);
    let refused = result(&report, "rpcError");
    assert!(
        refused.contains("bad arguments: line must be positive (JSON-RPC -32602)"),
        "{refused}"
    );
    assert!(
        result(&report, "legacy").contains("\"answer\": 42"),
        "{report}"
    );
    // Progress reaches pi while the call runs.
    let updates: Vec<&str> = report["progress"]["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|u| u["partialResult"]["content"][0]["text"].as_str())
        .collect();
    assert!(updates.iter().any(|u| u.ends_with("step 3")), "{updates:?}");
    assert_eq!(result(&report, "progress"), "done after progress");
    // Escape ends the call in pi and cancels it in Neovim.
    assert_eq!(report["cancelled"]["isError"], true, "{report}");
    assert_eq!(report["cancelSent"]["reason"], "cancelled by the user");
    // A search gets its own timeout plus grace, then a clear message.
    let timeout = result(&report, "timeout");
    assert!(
        timeout.contains("Neovim did not answer search_in_files_by_text within 5 s"),
        "{timeout}"
    );
    assert!(timeout.contains("narrow it"), "{timeout}");
    // Every call carried pi's cwd, exactly, as projectPath.
    let cwd_text = cwd.display().to_string();
    let paths = report["projectPaths"].as_array().unwrap();
    assert!(paths.len() >= 9, "{paths:?}");
    for call in paths {
        assert_eq!(call[1], cwd_text.as_str(), "{call}");
    }

    // Reconnect: a removed tool is not revived, a new one appears.
    assert!(said(&report, "reconnect").starts_with("Connected to Neovim"));
    let after = nvim_names(&report, "offeredAfterReconnect");
    assert!(after.iter().any(|n| n == "nvim_extra_tool"), "{after:?}");
    assert!(
        !after.iter().any(|n| n == "nvim_find_definition"),
        "{after:?}"
    );
    assert!(!said(&report, "toolList").contains("nvim_find_definition"));
    assert_eq!(result(&report, "extra"), "extra");

    // Disconnect ends the MCP session; pi's own tools stay.
    assert_eq!(report["deletes"], 1, "{report}");
    let tools = names(&report, "toolsAfterDisconnect");
    assert!(!tools.iter().any(|n| n.starts_with("nvim_")), "{tools:?}");
    assert!(tools.iter().any(|n| n == "read"), "{tools:?}");

    // Something that is not pi-ide.nvim is refused.
    let not_ours = said(&report, "notOurs");
    assert!(
        not_ours.contains("is not pi-ide.nvim's MCP endpoint")
            && not_ours.contains("some-other-server"),
        "{not_ours}"
    );
    assert_eq!(
        report["footerNotOurs"],
        json!(["\u{f36f} connecting…", "\u{f36f} failed"])
    );
    assert_eq!(report["toolsNotOurs"], json!([]), "{report}");
}
in_both_pis!(carries_what_neovim_advertises);

// ---------------------------------------------------------------------------
// Failed connects
// ---------------------------------------------------------------------------

async fn a_failed_connect_leaves_nothing_active(pi: &Pi) {
    let mine = Session::start().await;
    let other = Session::start().await;
    let (_, _) = mine.lockfile().await;
    let (other_port, other_lock) = other.lockfile().await;
    // pi finds the other Neovim's lockfile too (its token with it).
    std::fs::write(
        mine.lock_dir.join(format!("{other_port}.lock")),
        other_lock.to_string(),
    )
    .unwrap();
    mine.write_file("a.txt", "mine\n");
    let home = scratch_dir("pi-bridge-home");
    let cwd = canonical(&mine.work_dir);
    let other_url = other_lock["mcpUrl"].as_str().unwrap();
    let report = drive(
        pi,
        "failed",
        json!({"cwd": cwd, "lockDir": &mine.lock_dir, "home": &*home, "otherUrl": other_url}),
    )
    .await;
    assert_eq!(report["extensionErrors"], json!([]), "{report}");
    assert!(said(&report, "connect").starts_with("Connected to Neovim"));
    assert!(
        !nvim_names(&report, "toolsConnected").is_empty(),
        "{report}"
    );
    let saved = report["settingsConnected"]["nvim"]["url"].clone();
    assert!(saved.is_string(), "{report}");

    // A Neovim for another project: refused with its reason, all torn down.
    let refused = said(&report, "otherProject");
    assert!(refused.contains("is not for this project"), "{refused}");
    assert!(
        refused.contains(other.work_dir.to_str().unwrap()),
        "{refused}"
    );
    assert_eq!(
        report["footerOtherProject"],
        json!(["nvim: connecting…", "nvim: failed"])
    );
    assert_eq!(report["toolsOtherProject"], json!([]), "{report}");
    assert_eq!(report["callWhileFailed"]["isError"], true, "{report}");
    assert_eq!(report["settingsOtherProject"]["nvim"]["url"], saved);
    let status = said(&report, "statusOtherProject");
    assert!(status.contains("Neovim bridge: failed"), "{status}");
    assert!(status.contains("Last error: "), "{status}");

    // A URL no Neovim announces: stale, torn down, nothing saved.
    let stale = said(&report, "unknownUrl");
    assert!(stale.contains("http://127.0.0.1:1/mcp is stale"), "{stale}");
    assert!(stale.contains("/nvim connect <url>"), "{stale}");
    assert_eq!(
        report["footerUnknownUrl"],
        json!(["nvim: connecting…", "nvim: failed"])
    );
    assert_eq!(report["toolsUnknownUrl"], json!([]), "{report}");
    assert_eq!(report["settingsAtEnd"]["nvim"]["url"], saved);
}
in_both_pis!(a_failed_connect_leaves_nothing_active);

// ---------------------------------------------------------------------------
// No Neovim: one opened in tmux
// ---------------------------------------------------------------------------

async fn opens_neovim_in_tmux_when_none_runs(pi: &Pi) {
    let project = scratch_dir("pi-bridge-project");
    std::fs::write(project.join("a.txt"), "opened\n").unwrap();
    let cwd = canonical(&project);
    let lock_dir = scratch_dir("pi-bridge-locks");
    let home = scratch_dir("pi-bridge-home");
    // A fixed port: the saved URL survives the Neovim restart.
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let fake = FakeLauncher::new(&format!(
        "{{ bin = '{}', mcp = {{ port = {port} }} }}",
        host_binary().display()
    ));
    let mut env = fake.env();
    env["PI_IDE_LOCK_DIR"] = json!(&*lock_dir);
    let report = drive(
        pi,
        "launch",
        json!({
            "cwd": cwd, "lockDir": &*lock_dir, "home": &*home, "url": url, "env": env,
            "recordDir": &*fake.records, "noNvim": fake.records.join("no-nvim"),
        }),
    )
    .await;
    assert_eq!(report["extensionErrors"], json!([]), "{report}");
    let connect = said(&report, "connect");
    assert!(connect.starts_with("Connected to Neovim"), "{connect}");
    assert!(connect.contains(&url), "{connect}");
    // Asked first, then waited for, with the footer saying so.
    let dialogs = report["dialogs"].as_array().unwrap();
    assert_eq!(dialogs[0]["method"], "confirm", "{dialogs:?}");
    assert!(
        dialogs[0]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("The saved URL {url}")),
        "{dialogs:?}"
    );
    assert_eq!(dialogs[1]["method"], "select", "{dialogs:?}");
    assert_eq!(
        report["footer"],
        json!([
            "nvim: connecting…",
            "nvim: waiting for Neovim…",
            "nvim: connected"
        ])
    );
    // tmux once, with fixed arguments: the exact cwd, pi's pane, the lock
    // directory, and nvim from PATH as its own argument.
    assert_eq!(report["tmuxCalls"], 1, "{report}");
    let cwd_text = cwd.display().to_string();
    let lock_env = format!("PI_IDE_LOCK_DIR={}", lock_dir.display());
    let nvim = fake.bin.join("nvim").display().to_string();
    assert_eq!(
        fake.calls("tmux")[0],
        [
            "split-window",
            "-h",
            "-c",
            &cwd_text,
            "-t",
            "%7",
            "-e",
            &lock_env,
            &nvim,
            "--"
        ]
    );
    assert_eq!(fake.calls("nvim")[0], ["--"]);
    assert_eq!(fake.records_of("nvim-cwd")[0].trim(), cwd_text);
    // The saved URL was the one that connected: kept as it was.
    assert_eq!(report["settings"]["nvim"]["url"], url.as_str());
    assert!(!connect.contains("Saved URL updated"), "{connect}");
    assert_eq!(result(&report, "read"), "opened");

    // Neovim never comes: the person stops waiting; nothing is active.
    let stopped = said(&report, "stopped");
    assert!(stopped.contains("Stopped waiting for Neovim"), "{stopped}");
    assert_eq!(
        report["footerStopped"],
        json!([
            "nvim: connecting…",
            "nvim: waiting for Neovim…",
            "nvim: failed"
        ])
    );
    assert_eq!(report["toolsStopped"], json!([]), "{report}");
}
in_both_pis!(opens_neovim_in_tmux_when_none_runs);

// ---------------------------------------------------------------------------
// Two worktrees, one Neovim
// ---------------------------------------------------------------------------

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// Waits on the host: `projectPath` may name any directory inside a root.
async fn two_worktrees_never_see_each_other(pi: &Pi) {
    let session = Session::start().await;
    let (_, _) = session.lockfile().await;
    let repo = canonical(&session.work_dir);
    std::fs::write(repo.join("a.txt"), "main checkout\n").unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "a.txt"]);
    git(&repo, &["commit", "-qm", "a"]);
    let mut worktrees = vec![];
    for name in ["a", "b"] {
        let dir = repo.join("wt").join(name);
        git(
            &repo,
            &["worktree", "add", "-q", "-b", name, dir.to_str().unwrap()],
        );
        std::fs::write(dir.join("a.txt"), format!("worktree {name}\n")).unwrap();
        std::fs::write(
            dir.join(format!("only-{name}.txt")),
            format!("MARKER_{name}\n"),
        )
        .unwrap();
        worktrees.push(dir);
    }
    let home = scratch_dir("pi-bridge-home");
    let escape_from = json!({
        worktrees[0].to_str().unwrap(): "../b/only-b.txt",
        worktrees[1].to_str().unwrap(): "../a/only-a.txt",
    });
    let report = drive(
        pi,
        "worktrees",
        json!({
            "worktrees": worktrees, "lockDir": &session.lock_dir, "home": &*home,
            "escapeFrom": escape_from,
        }),
    )
    .await;
    for (one, name) in report["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .zip(["a", "b"])
    {
        let other = if name == "a" { "b" } else { "a" };
        assert_eq!(one["extensionErrors"], json!([]), "{one}");
        assert!(
            said(one, "connect").starts_with("Connected to Neovim"),
            "{one}"
        );
        assert_eq!(result(one, "read"), format!("worktree {name}"), "{one}");
        let search = result(one, "search");
        assert!(search.contains(&format!("MARKER_{name}")), "{search}");
        assert!(!search.contains(&format!("MARKER_{other}")), "{search}");
        let glob = result(one, "glob");
        assert!(glob.contains(&format!("only-{name}.txt")), "{glob}");
        assert!(!glob.contains(&format!("only-{other}.txt")), "{glob}");
        assert!(
            !glob.contains("wt/"),
            "paths relative to the worktree: {glob}"
        );
        assert_eq!(one["escape"]["isError"], true, "{one}");
        assert!(
            !result(one, "escape").contains(&format!("MARKER_{other}"))
                && !result(one, "escape").contains(&format!("worktree {other}")),
            "{one}"
        );
    }
}
in_both_pis!(two_worktrees_never_see_each_other);
