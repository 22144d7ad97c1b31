//! Agents that stop reading (Ctrl-Z on `claude`) cost the host nothing:
//! while the cursor moves over a large selection the host's memory stays
//! bounded, a stopped agent that resumes gets the latest selection rather
//! than a backlog, and one that stays behind past its outbox bound is
//! disconnected with a log line while the others are served.

use serde_json::{Value, json};

use crate::common::{Agent, Session, eventually};

/// Lines in the file whose selection every move sends (~300 KB of text).
const LINES: usize = 5_000;
/// Cursor moves, each a new selection: unbounded outboxes would queue
/// LINES × MOVES × 60 bytes ≈ 90 MB for a stopped agent.
const MOVES: usize = 300;
/// Host memory allowed (VmRSS): what it needs to serve, far below what a
/// backlog of MOVES selections takes.
const RSS_BOUND_KB: u64 = 60 * 1024;

fn rss_kb(pid: i64) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// The last line of a selection, 0-based.
fn end_line(params: &Value) -> i64 {
    params["selection"]["end"]["line"].as_i64().unwrap()
}

#[tokio::test]
async fn stopped_agents_cost_bounded_memory_and_get_the_latest_selection_or_are_dropped() {
    let session = Session::start_with("{ selection = { debounce_ms = 0 } }").await;
    let (port, lock) = session.lockfile().await;
    let token = lock["authToken"].as_str().unwrap().to_owned();
    let text: String = (1..=LINES)
        .map(|n| format!("line {n:05} {}\n", "x".repeat(48)))
        .collect();
    let path = session.write_file("large.txt", &text);
    session
        .exec(&format!("vim.cmd.edit('{}')", path.display()))
        .await;
    let mut reading = session.connect().await;
    // Two Claude agents that stop reading after initialize: one resumes
    // later, one stays stopped.
    let mut resumes = stopped_claude(port, &token).await;
    let _stays_stopped = stopped_claude(port, &token).await;
    session.wait_clients(3).await;
    let host = session
        .lua("return require('pi-ide').status().pid")
        .await
        .as_i64()
        .unwrap();

    session.input("ggVG").await;
    let mut expected = LINES as i64 - 1;
    reading
        .notification("selection_changed", |p| {
            end_line(p) == expected && p["selection"]["isEmpty"] == false
        })
        .await;
    let mut most = 0;
    for n in 0..MOVES {
        session.input("k").await;
        expected -= 1;
        // The agent that reads sees each selection: the host made them all.
        reading
            .notification("selection_changed", |p| end_line(p) == expected)
            .await;
        reading.forget_backlog();
        if n % 10 == 0 {
            most = most.max(rss_kb(host));
        }
    }
    most = most.max(rss_kb(host));
    assert!(
        most < RSS_BOUND_KB,
        "host memory grew to {most} kB with stopped agents"
    );

    // The one that resumes reads what the kernel buffered, then the latest.
    let mut seen = vec![];
    loop {
        let message = resumes.read().await.expect("still connected");
        if message["method"] == "selection_changed" {
            seen.push(end_line(&message["params"]));
            if *seen.last().unwrap() == expected {
                break;
            }
        }
    }
    assert!(
        seen.len() < MOVES / 4,
        "a backlog of {} selections: {seen:?}",
        seen.len()
    );

    // Messages that are not a latest value pile up for the stopped one
    // only until its bound; then it is dropped, and the others stay.
    let mention = json!({"filePath": path, "lineStart": 0, "lineEnd": 0});
    session
        .lua_with(
            "local mention, n = ...
             for _ = 1, n do require('pi-ide.seam').notify('mention', mention) end",
            vec![mention, json!(pi_ide::limits::OUTBOX_MAX_MESSAGES + 100)],
        )
        .await;
    session.wait_clients(2).await;
    let log = eventually("the log line", || async {
        let log = std::fs::read_to_string(session.state_dir.join("nvim/pi-ide.log")).ok()?;
        log.contains("stopped reading").then_some(log)
    })
    .await;
    assert!(log.contains("disconnecting it"), "{log}");
    assert!(reading.request("tools/list", json!({})).await["result"]["tools"].is_array());
    let mentioned = resumes.notification("at_mentioned", |_| true).await;
    assert_eq!(mentioned["filePath"], path.to_str().unwrap());
    assert!(rss_kb(host) < RSS_BOUND_KB);
}

/// A Claude agent that initializes, then is never read again by the test.
async fn stopped_claude(port: u16, token: &str) -> Agent {
    let mut agent = Agent::connect(port, "x-claude-code-ide-authorization", token, Some("mcp"))
        .await
        .expect("connect");
    agent.initialize("claude-code").await;
    agent
}
