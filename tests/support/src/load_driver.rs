//! Drives the load scenario shared by the load test and the benchmark:
//! several agents flood the host with requests while a scripted person moves
//! the cursor and types in Neovim.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use futures_util::SinkExt;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

use crate::{Agent, Session, eventually};

/// Requests each agent keeps in flight.
const WINDOW: usize = 100;

/// What the agents saw.
pub struct LoadReport {
    /// Responses per agent, each matched to its request id.
    pub answered: Vec<usize>,
    /// Rows of the `selection_changed` notifications each agent received.
    pub selections: Vec<BTreeSet<u64>>,
    /// Rows the person moved to (0-based).
    pub moved_to: Vec<u64>,
}

/// `agents` agents each send `requests` requests (tools/list and
/// getDiagnostics, alternating) while the person visits `moves` lines.
pub async fn run(session: &Session, agents: usize, requests: usize, moves: u64) -> LoadReport {
    let mut connected = Vec::new();
    for _ in 0..agents {
        connected.push(session.connect().await);
    }
    session.wait_clients(agents).await;
    let selections: Arc<Mutex<Vec<BTreeSet<u64>>>> =
        Arc::new(Mutex::new(vec![BTreeSet::new(); agents]));
    let person_done = Arc::new(AtomicBool::new(false));
    let flood = futures_util::future::join_all(
        connected
            .into_iter()
            .enumerate()
            .map(|(n, agent)| flood(n, agent, requests, selections.clone(), person_done.clone())),
    );
    let person = async {
        let mut moved_to = Vec::new();
        for row in 1..=moves {
            session.input(&format!("{}G", row + 1)).await;
            if row % 4 == 0 {
                session.input("Atyped<Esc>").await;
            }
            moved_to.push(row);
            eventually(&format!("every agent to see row {row}"), || async {
                selections
                    .lock()
                    .unwrap()
                    .iter()
                    .all(|seen| seen.contains(&row))
                    .then_some(())
            })
            .await;
        }
        person_done.store(true, Ordering::SeqCst);
        moved_to
    };
    let (answered, moved_to) = tokio::join!(flood, person);
    let selections = selections.lock().unwrap().clone();
    LoadReport {
        answered,
        selections,
        moved_to,
    }
}

async fn flood(
    n: usize,
    mut agent: Agent,
    requests: usize,
    selections: Arc<Mutex<Vec<BTreeSet<u64>>>>,
    person_done: Arc<AtomicBool>,
) -> usize {
    let mut answered = 0;
    let mut next = 0;
    let mut open = BTreeSet::new();
    while answered < requests {
        while next < requests && open.len() < WINDOW {
            let (method, params) = if next % 2 == 0 {
                ("tools/list", json!({}))
            } else {
                (
                    "tools/call",
                    json!({"name": "getDiagnostics", "arguments": {}}),
                )
            };
            let id = format!("{n}-{next}");
            let text =
                json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
            agent.ws.feed(Message::text(text)).await.unwrap();
            open.insert(id);
            next += 1;
        }
        agent.ws.flush().await.unwrap();
        let message = agent.read().await.expect("the host closed the connection");
        if message["method"] == "selection_changed" {
            if let Some(row) = message["params"]["selection"]["start"]["line"].as_u64() {
                selections.lock().unwrap()[n].insert(row);
            }
        } else if let Some(id) = message["id"].as_str()
            && message.get("result").is_some()
            && open.remove(id)
        {
            answered += 1;
        }
    }
    // Keep listening until the person is done moving.
    while !person_done.load(Ordering::SeqCst) {
        let Ok(Some(message)) =
            tokio::time::timeout(std::time::Duration::from_millis(20), agent.read()).await
        else {
            continue;
        };
        if message["method"] == "selection_changed"
            && let Some(row) = message["params"]["selection"]["start"]["line"].as_u64()
        {
            selections.lock().unwrap()[n].insert(row);
        }
    }
    answered
}

/// Neovim editing a 300-line file, with a short selection debounce so the
/// person's moves reach the agents quickly.
pub async fn session() -> Session {
    let session = Session::start_with("{ selection = { debounce_ms = 20 } }").await;
    let text: String = (0..300).map(|i| format!("line {i}\n")).collect();
    let path = session.write_file("load.txt", &text);
    session
        .exec(&format!("vim.cmd.edit('{}')", path.display()))
        .await;
    session.wait_clients(0).await;
    session
}

/// Resident memory of a process, in KiB.
pub fn rss_kib(pid: i64) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Pid of the host process the session's Neovim started (once it runs:
/// `setup()` starts it after `VimEnter`).
pub async fn host_pid(session: &Session) -> i64 {
    eventually("the host to run", || async {
        session
            .lua("return require('pi-ide').status().pid")
            .await
            .as_i64()
    })
    .await
}
