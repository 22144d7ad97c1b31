//! opencode started by `:PiIde agent opencode`: its TUI runs its server on
//! a loopback port Lua chose, answering only to a password Lua chose
//! (`OPENCODE_SERVER_PASSWORD`), with edits set to ask. The host follows
//! the server's `/global/event` stream: each `permission.asked` for an edit is
//! shown in the review and answered at `POST /permission/:id/reply`
//! (`once`, or `reject` with the person's reason); one answered in
//! opencode's own prompt first (`permission.replied`) closes its diffs.
//! `:PiIde ask` goes in through `/tui/append-prompt` and
//! `/tui/submit-prompt`. (Its context comes over the WebSocket: opencode
//! reads Claude Code's lockfiles.)
//!
//! The follower stops when opencode's process is gone, or when its server
//! has not answered for [`GIVE_UP`] (reaching it again ever more slowly).
//!
//! * [`client`]     – requests to the server (hyper's HTTP/1 client).
//! * [`owner`]      – whose server a connection reached.
//! * [`events`]     – the event stream (server-sent events) read.
//! * [`permission`] – an edit asked, reviewed, answered.

pub mod client;
pub mod events;
pub mod owner;
pub mod permission;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::task::{AbortHandle, JoinSet};

use crate::nvim::seam::{LuaCall, OpencodePrompt, OpencodeServer};
use crate::state::State;
use client::Server;

/// How long opencode's server may not answer (while it starts, or after
/// its stream dropped) before the follower gives up.
const GIVE_UP: Duration = Duration::from_secs(120);
/// The first wait between attempts to reach the server; each next one is
/// twice as long, up to [`LONGEST_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(250);
const LONGEST_RETRY: Duration = Duration::from_secs(4);
/// Reviews of one opencode's edits open at once; an edit asked past them
/// is left to opencode's own prompt.
pub const MAX_OPEN_REVIEWS: usize = 8;
/// opencode sends a heartbeat every 10 s: a stream silent this long is
/// stale (an instance gone), and is opened again.
const SILENCE: Duration = Duration::from_secs(30);

/// The opencodes followed, by agent id.
#[derive(Default)]
pub struct Followed {
    servers: HashMap<u64, (Arc<Server>, AbortHandle)>,
}

impl Followed {
    /// Follows the opencode `server` describes until it is forgotten.
    pub fn follow(&mut self, state: &Arc<State>, server: OpencodeServer) {
        tracing::info!("following opencode {} on port {}", server.id, server.port);
        let endpoint = Arc::new(Server::new(server.port, &server.password));
        let followed = Follower {
            id: server.id,
            pid: server.pid,
            cwd: server.cwd,
        };
        let task = crate::task::spawn(follow(state.clone(), endpoint.clone(), followed));
        if let Some((_, old)) = self
            .servers
            .insert(server.id, (endpoint, task.abort_handle()))
        {
            old.abort();
        }
    }

    /// Opencode `id` exited: its open reviews close.
    pub fn forget(&mut self, id: u64) {
        if let Some((_, task)) = self.servers.remove(&id) {
            tracing::info!("stopped following opencode {id}: it exited");
            task.abort();
        }
    }

    /// `:PiIde ask` into opencode `prompt.id`'s prompt.
    pub fn prompt(&self, prompt: OpencodePrompt) {
        let Some((server, _)) = self.servers.get(&prompt.id) else {
            tracing::warn!("no opencode {} to ask", prompt.id);
            return;
        };
        let server = server.clone();
        crate::task::spawn(async move {
            let appended = server
                .post("/tui/append-prompt", &json!({"text": prompt.text}))
                .await;
            let submitted = match (&appended, prompt.submit) {
                (Ok(_), true) => server.post("/tui/submit-prompt", &json!({})).await,
                (answer, _) => answer.clone(),
            };
            if let Err(error) = submitted {
                tracing::warn!("cannot put the text into opencode's prompt: {error}");
            }
        });
    }
}

impl Drop for Followed {
    fn drop(&mut self) {
        for (_, task) in self.servers.values() {
            task.abort();
        }
    }
}

/// Which opencode a follower follows.
struct Follower {
    /// Its agent id in Lua.
    id: u64,
    /// Its process, while it runs.
    pid: Option<u32>,
    cwd: String,
}

/// Reads `server`'s events until this task is aborted, opencode's process
/// is gone or its server has not answered for [`GIVE_UP`]: reconnecting
/// while it starts, and after a dropped stream.
async fn follow(state: Arc<State>, server: Arc<Server>, followed: Follower) {
    let id = followed.id;
    let cwd = followed.cwd.as_str();
    let mut reviews: JoinSet<()> = JoinSet::new();
    let mut open: HashMap<String, AbortHandle> = HashMap::new();
    let mut unanswered = tokio::time::Instant::now();
    let mut retry = FIRST_RETRY;
    let mut connected = false;
    loop {
        if let Some(pid) = followed.pid
            && !crate::lockfile::process_alive(pid)
        {
            tracing::info!("stopped following opencode {id}: its process {pid} is gone");
            return;
        }
        let stream = match server.events().await {
            Ok(stream) => stream,
            Err(error) => {
                tracing::debug!("opencode's events: {error}");
                if unanswered.elapsed() > GIVE_UP {
                    tracing::warn!(
                        "stopped following opencode {id}: its server did not answer for {} s ({error})",
                        GIVE_UP.as_secs()
                    );
                    let message = format!(
                        "opencode's server did not answer for {} s: its edits are no longer reviewed in Neovim (opencode asks in its own prompt)",
                        GIVE_UP.as_secs()
                    );
                    state.editor().push(LuaCall::Refused { message });
                    return;
                }
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(LONGEST_RETRY);
                continue;
            }
        };
        retry = FIRST_RETRY;
        if !connected {
            tracing::info!("following opencode {id}'s events");
            connected = true;
        }
        // What was asked before the stream was there (opencode's TUI takes
        // prompts before its server answers everything).
        match server.get("/permission").await {
            Ok(Value::Array(pending)) => {
                for asked in pending {
                    let event = json!({"type": "permission.asked", "properties": asked});
                    handle(&state, &server, cwd, event, &mut reviews, &mut open);
                }
            }
            Ok(_) => {}
            Err(error) => tracing::warn!("cannot list opencode's permission requests: {error}"),
        }
        let mut stream = stream;
        loop {
            tokio::select! {
                event = tokio::time::timeout(SILENCE, stream.next()) => match event {
                    Ok(Some(event)) => handle(&state, &server, cwd, event, &mut reviews, &mut open),
                    Ok(None) => break,
                    Err(_) => {
                        tracing::info!("opencode's events went silent; following them again");
                        break;
                    }
                },
                Some(_) = reviews.join_next(), if !reviews.is_empty() => {}
            }
        }
        unanswered = tokio::time::Instant::now();
        tokio::time::sleep(retry).await;
    }
}

/// One event: an edit asked starts its review, one answered elsewhere
/// ends it.
fn handle(
    state: &Arc<State>,
    server: &Arc<Server>,
    cwd: &str,
    event: Value,
    reviews: &mut JoinSet<()>,
    open: &mut HashMap<String, AbortHandle>,
) {
    open.retain(|_, task| !task.is_finished());
    // `/global/event` wraps each instance's event with its directory.
    let (directory, event) = match event.get("payload") {
        Some(payload) => (event["directory"].as_str().unwrap_or(cwd), payload),
        None => (cwd, &event),
    };
    let properties = &event["properties"];
    match event["type"].as_str() {
        Some("permission.asked") if properties["permission"] == "edit" => {
            let Some(id) = properties["id"].as_str() else {
                return;
            };
            if open.contains_key(id) {
                return;
            }
            if open.len() >= MAX_OPEN_REVIEWS {
                tracing::info!(
                    "opencode's edit left to its own prompt: {MAX_OPEN_REVIEWS} are in review"
                );
                let message = format!(
                    "opencode asks for another edit while {MAX_OPEN_REVIEWS} of its edits wait in Neovim's review: decide it in opencode's own prompt"
                );
                state.editor().push(LuaCall::Refused { message });
                return;
            }
            tracing::info!(
                "opencode asks to edit {}",
                properties["metadata"]["filepath"].as_str().unwrap_or("?")
            );
            let asked = properties.clone();
            let (state, server, directory) = (state.clone(), server.clone(), directory.to_owned());
            let task = reviews.spawn(async move {
                permission::review(&state, &server, &directory, &asked).await;
            });
            open.insert(id.to_owned(), task);
        }
        Some("permission.replied") => {
            let id = properties["requestID"]
                .as_str()
                .or_else(|| properties["permissionID"].as_str());
            if let Some(task) = id.and_then(|id| open.remove(id)) {
                // Answered in opencode itself: its diffs close.
                task.abort();
            }
        }
        _ => {}
    }
}
