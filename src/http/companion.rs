//! What a Gemini CLI / Qwen Code session adds to the endpoint's handler:
//! `openDiff`/`closeDiff` ([`crate::ide_companion`]), and the session as a
//! client of the shared state from `initialized` until it ends (closed, or
//! its event stream gone); what the state queues for it goes out as
//! notifications on its event stream.

use std::sync::{Arc, Mutex, OnceLock};

use rmcp::RoleServer;
use rmcp::model::{CustomNotification, ErrorData, ServerNotification};
use rmcp::service::{NotificationContext, Peer};
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::client::{ClientId, ClientKind, Protocol};
use crate::mutex::lock;
use crate::state::State;
use crate::state::outbox::{OutboxReceiver, outbox};
use crate::tools::{Caller, Offered, Refusal};

/// One companion session; rmcp makes a handler per session, and its
/// clones share this.
#[derive(Clone)]
pub struct Companion(Arc<Session>);

/// The session as a client of the state; it leaves when the last handler
/// of the session goes.
struct Session {
    state: Arc<State>,
    kind: ClientKind,
    client: OnceLock<ClientId>,
    /// Sends the client's outbox as notifications.
    sender: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(sender) = lock(&self.sender).take() {
            sender.abort();
        }
        if let Some(client) = self.client.get() {
            tracing::info!("{} session {} ended", self.kind.as_str(), client.0);
            self.state.client_gone(*client);
        }
    }
}

impl Companion {
    pub fn new(state: Arc<State>, kind: ClientKind) -> Self {
        Companion(Arc::new(Session {
            state,
            kind,
            client: OnceLock::new(),
            sender: Mutex::new(None),
        }))
    }

    /// The session becomes a client of the state, is sent its outbox and
    /// the current context.
    pub fn initialized(&self, context: &NotificationContext<RoleServer>) {
        let session = &self.0;
        let state = &session.state;
        let (sender, receiver) = outbox();
        let client = state.client_connected(session.kind, Protocol::Companion, sender);
        if session.client.set(client).is_err() {
            // A second `initialized`: the session is that client already.
            state.client_gone(client);
            return;
        }
        if let Some(info) = context.peer.peer_info() {
            state.client_named(client, info.client_info.name.clone());
        }
        tracing::info!("{} session {} initialized", session.kind.as_str(), client.0);
        *lock(&session.sender) = Some(crate::task::spawn(send_outbox(
            receiver,
            context.peer.clone(),
        )));
        let current = state.clone();
        crate::task::spawn(async move {
            crate::ide_companion::context::send_current(&current, client).await
        });
    }

    /// The tools a companion session has besides the endpoint's.
    pub fn tools() -> Vec<Value> {
        crate::tools::list(crate::ide_companion::TOOLS, None)
    }

    /// The companion's own tool called `name`, if there is one.
    pub fn own(name: &str) -> Option<&'static dyn Offered> {
        crate::ide_companion::TOOLS
            .iter()
            .copied()
            .find(|tool| tool.spec().name == name)
    }

    /// Runs one of the companion's own tools for this session's client.
    pub async fn call(
        &self,
        tool: &'static dyn Offered,
        arguments: Value,
    ) -> Result<Value, ErrorData> {
        let caller = Caller {
            client: Some(self.client()?),
            connection: None,
        };
        let outcome = crate::tools::call(tool, &self.0.state, caller, arguments).await;
        Ok(outcome.unwrap_or_else(Refusal::into_result))
    }

    /// The client this session is, once it initialized.
    fn client(&self) -> Result<ClientId, ErrorData> {
        self.0
            .client
            .get()
            .copied()
            .ok_or_else(|| ErrorData::invalid_request("initialize the session first", None))
    }
}

/// Sends each queued message (a JSON-RPC notification) to the client.
async fn send_outbox(mut receiver: OutboxReceiver, peer: Peer<RoleServer>) {
    while let Some(message) = receiver.recv().await {
        let Ok(mut message) = serde_json::from_str::<Value>(&message) else {
            continue;
        };
        let Some(method) = message["method"].as_str().map(str::to_owned) else {
            continue;
        };
        let params = message.get_mut("params").map(Value::take);
        let notification = CustomNotification::new(method, params);
        if let Err(error) = peer
            .send_notification(ServerNotification::CustomNotification(notification))
            .await
        {
            tracing::debug!("companion notification not sent: {error}");
            return;
        }
    }
}
