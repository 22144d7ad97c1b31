//! The Agent Client Protocol, client side: the transport of the chat.
//! Where the other transports wait for agents to connect, this one starts
//! them: each chat is one agent process (argv, no shell; cwd = the project
//! root) and one ACP session over its stdio, spoken with the
//! `agent-client-protocol` crate. What the agent asks of the editor goes
//! through the same layers as every other transport's requests: files are
//! confined and read from buffers ([`fs`]), writes open the two-pane
//! review, permission is asked in Neovim ([`permission`]), commands run in
//! terminal buffers ([`terminal`]). Lua only renders ([`updates`]).
//!
//! * [`session`]     – one chat: start, initialize, authenticate, the
//!   session, then the person's prompts, cancels and modes until it ends.
//! * [`spawn`]       – the agent process; its stderr into the log.
//! * [`framing`]     – its stdio as bounded JSON-RPC lines.
//! * [`updates`]     – what Lua draws, batched to one call a frame.
//! * [`fs`], [`permission`], [`terminal`] – the client's duties.
//! * [`mcp_servers`] – this Neovim's `/mcp` endpoint, handed to the agent.
//! * [`mcp_stdio`]   – `pi-ide mcp-stdio`: that endpoint as a stdio MCP
//!   server, for agents that take no HTTP ones.

mod framing;
mod fs;
mod mcp_servers;
pub mod mcp_stdio;
mod permission;
mod session;
mod spawn;
mod terminal;
mod updates;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value as Json;
use tokio::sync::mpsc;

use crate::nvim::seam::{ChatOp, PermissionAnswer, TerminalExit};
use crate::state::State;
pub use mcp_servers::Endpoint;
use updates::Outbox;

/// Commands waiting for one chat's session; more are refused with a notice.
const MAX_COMMANDS: usize = 32;

/// Every chat of this Neovim.
pub struct Chats {
    chats: Mutex<HashMap<u64, Arc<Chat>>>,
    /// Terminals agents created, by id, across chats.
    terminals: Arc<terminal::Terminals>,
    /// The `/mcp` endpoint handed to agents, when it listens.
    endpoint: Option<Endpoint>,
}

/// One chat: its agent, its session's inbox and what it waits for.
pub struct Chat {
    pub id: u64,
    pub agent: String,
    /// The project root: the agent's cwd and the session's.
    pub cwd: String,
    commands: mpsc::Sender<Command>,
    outbox: Arc<Outbox>,
    /// Permission requests waiting for the person, by id.
    permissions: Mutex<HashMap<u64, permission::Waiting>>,
    /// Writes the person approved in a permission's diff: path → (the
    /// agent's text, the person's final text).
    approved: Mutex<HashMap<String, (String, String)>>,
}

/// What the person asks of a running session.
#[derive(Debug)]
pub enum Command {
    Prompt(Json),
    Cancel,
    Mode(String),
    Config { option: String, value: String },
    Auth(String),
    Close,
}

/// Numbers permission requests and terminals, across chats.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

impl Chats {
    pub fn new(endpoint: Option<Endpoint>) -> Chats {
        Chats {
            chats: Mutex::default(),
            terminals: Arc::default(),
            endpoint,
        }
    }

    /// Does what Lua asked of a chat; never waits for the agent.
    pub fn handle(&self, state: &Arc<State>, op: ChatOp) {
        let id = op.chat();
        let command = match op {
            ChatOp::Open {
                chat,
                agent,
                cmd,
                env,
                cwd,
                load,
            } => {
                let (commands, inbox) = mpsc::channel(MAX_COMMANDS);
                let outbox = Arc::new(Outbox::new(chat));
                let opened = Arc::new(Chat {
                    id: chat,
                    agent,
                    cwd,
                    commands,
                    outbox: outbox.clone(),
                    permissions: Mutex::default(),
                    approved: Mutex::default(),
                });
                if let Some(old) = crate::mutex::lock(&self.chats).insert(chat, opened.clone()) {
                    old.send(Command::Close);
                }
                let editor = state.editor().clone();
                crate::task::spawn(async move { outbox.send_to(editor).await });
                let start = session::Start {
                    state: state.clone(),
                    chat: opened,
                    cmd,
                    env,
                    load,
                    terminals: self.terminals.clone(),
                    endpoint: self.endpoint.clone(),
                };
                crate::task::spawn(session::run(start, inbox));
                return;
            }
            ChatOp::Prompt { prompt, .. } => Command::Prompt(crate::nvim::seam::list(prompt)),
            ChatOp::Cancel { .. } => Command::Cancel,
            ChatOp::Mode { mode, .. } => Command::Mode(mode),
            ChatOp::Config { option, value, .. } => Command::Config { option, value },
            ChatOp::Auth { method, .. } => Command::Auth(method),
            ChatOp::Close { .. } => Command::Close,
        };
        let chat = crate::mutex::lock(&self.chats).get(&id).cloned();
        match chat {
            Some(chat) => {
                if matches!(command, Command::Cancel) {
                    // At once, ahead of anything queued.
                    chat.cancel_waiting();
                }
                chat.send(command);
            }
            None => tracing::info!("chat {id} is gone; {command:?} dropped"),
        }
    }

    /// The person answered permission request `answer.id`.
    pub fn permission(&self, answer: PermissionAnswer) {
        let chats: Vec<Arc<Chat>> = crate::mutex::lock(&self.chats).values().cloned().collect();
        for chat in chats {
            let waiting = crate::mutex::lock(&chat.permissions).remove(&answer.id);
            if let Some(waiting) = waiting {
                waiting.answer(answer.option);
                return;
            }
        }
        tracing::info!("permission {} was answered already", answer.id);
    }

    pub fn terminal_exit(&self, exit: TerminalExit) {
        self.terminals.exited(exit);
    }

    /// Neovim is closing: every agent is stopped.
    pub fn stop_all(&self) {
        let chats: Vec<Arc<Chat>> = crate::mutex::lock(&self.chats)
            .drain()
            .map(|(_, c)| c)
            .collect();
        for chat in chats {
            chat.cancel_waiting();
            chat.send(Command::Close);
        }
    }
}

impl Chat {
    fn send(&self, command: Command) {
        if let Err(error) = self.commands.try_send(command) {
            let why = match error {
                mpsc::error::TrySendError::Full(_) => {
                    "the agent is still busy with earlier requests"
                }
                mpsc::error::TrySendError::Closed(_) => "the agent's session has ended",
            };
            self.outbox.notice("warn", format!("not sent: {why}"));
        }
    }

    /// Every permission request waiting for the person is answered
    /// `cancelled` (`session/cancel`'s rule), its diff closed.
    fn cancel_waiting(&self) {
        let waiting: Vec<permission::Waiting> = crate::mutex::lock(&self.permissions)
            .drain()
            .map(|(_, w)| w)
            .collect();
        for request in waiting {
            request.answer(None);
        }
    }
}
