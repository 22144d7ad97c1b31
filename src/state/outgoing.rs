//! Requests the editor sends to agents (`getSuggestions`,
//! `listSuggestionModels`), one map of them with what each is for, so
//! cancelling one and telling its waiter why it ended happen in one place.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::clients::Clients;
use crate::client::ClientId;
use crate::jsonrpc;

/// A JSON-RPC `result` or `error` object.
pub type Answer = Result<Value, Value>;

/// Why a request ended without an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Neovim no longer wants it (the person typed on).
    Cancelled,
    /// The agent disconnected (or could not be reached).
    AgentGone,
}

impl Ended {
    pub fn message(self) -> &'static str {
        match self {
            Ended::Cancelled => "cancelled",
            Ended::AgentGone => "the agent disconnected",
        }
    }
}

/// What a request's waiter receives.
pub type Outcome = Result<Answer, Ended>;

/// A request reserved with [`Outgoing::reserve`], not yet sent.
pub struct Ticket {
    id: String,
    pub answer: oneshot::Receiver<Outcome>,
}

/// One request in the map.
struct Request {
    /// Lua's token for suggestion requests, which Lua cancels by token.
    token: Option<u64>,
    /// Where it went; `None` while the host still builds its params.
    client: Option<ClientId>,
    reply: oneshot::Sender<Outcome>,
}

#[derive(Default)]
pub struct Outgoing {
    requests: Mutex<HashMap<String, Request>>,
}

impl Outgoing {
    /// Reserves a request, so a cancel that arrives while its params are
    /// still being built is not lost.
    pub fn reserve(&self, token: Option<u64>) -> Ticket {
        let id = uuid::Uuid::new_v4().to_string();
        let (reply, answer) = oneshot::channel();
        let request = Request {
            token,
            client: None,
            reply,
        };
        self.lock().insert(id.clone(), request);
        Ticket { id, answer }
    }

    /// Sends a reserved request to `client`; false when it was cancelled
    /// meanwhile or the client is gone (its waiter is told which).
    pub fn send(
        &self,
        clients: &Clients,
        ticket: &Ticket,
        client: ClientId,
        method: &str,
        params: Value,
    ) -> bool {
        {
            let mut requests = self.lock();
            let Some(request) = requests.get_mut(&ticket.id) else {
                return false;
            };
            request.client = Some(client);
        }
        let message = jsonrpc::request(&jsonrpc::Id::from(ticket.id.as_str()), method, params);
        if clients.send(client, message) {
            return true;
        }
        self.end(&ticket.id, Ended::AgentGone);
        false
    }

    /// Reserves and sends at once.
    pub fn request(
        &self,
        clients: &Clients,
        client: ClientId,
        method: &str,
        params: Value,
    ) -> oneshot::Receiver<Outcome> {
        let ticket = self.reserve(None);
        self.send(clients, &ticket, client, method, params);
        ticket.answer
    }

    /// Forgets a reserved request that will not be sent.
    pub fn withdraw(&self, ticket: Ticket) {
        self.lock().remove(&ticket.id);
    }

    /// Routes an answer from `client`; answers to unknown ids are dropped.
    pub fn resolve(&self, client: ClientId, id: &jsonrpc::Id, answer: Answer) {
        let Some(id) = id.as_str() else { return };
        let mut requests = self.lock();
        if requests.get(id).is_some_and(|r| r.client == Some(client))
            && let Some(request) = requests.remove(id)
        {
            let _ = request.reply.send(Ok(answer));
        }
    }

    /// Lua cancelled request `token`: its waiter hears so and, if it was
    /// sent, its agent gets `request_cancelled`.
    pub fn cancel(&self, clients: &Clients, token: u64) {
        let found = {
            let mut requests = self.lock();
            let id = requests
                .iter()
                .find(|(_, request)| request.token == Some(token))
                .map(|(id, _)| id.clone());
            id.and_then(|id| requests.remove(&id).map(|request| (id, request)))
        };
        let Some((id, request)) = found else { return };
        if let Some(client) = request.client {
            clients.send(
                client,
                jsonrpc::notification("request_cancelled", json!({"id": id})),
            );
        }
        let _ = request.reply.send(Err(Ended::Cancelled));
    }

    /// A client left: every request sent to it ends.
    pub fn forget_client(&self, client: ClientId) {
        let gone: Vec<Request> = {
            let mut requests = self.lock();
            let ids: Vec<String> = requests
                .iter()
                .filter(|(_, request)| request.client == Some(client))
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| requests.remove(id)).collect()
        };
        for request in gone {
            let _ = request.reply.send(Err(Ended::AgentGone));
        }
    }

    fn end(&self, id: &str, why: Ended) {
        if let Some(request) = self.lock().remove(id) {
            let _ = request.reply.send(Err(why));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Request>> {
        crate::mutex::lock(&self.requests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{ClientKind, Protocol};
    use crate::state::outbox::{OutboxReceiver, outbox};

    fn connected() -> (Clients, ClientId, OutboxReceiver) {
        let clients = Clients::default();
        let (tx, rx) = outbox();
        let client = clients.register(ClientKind::Pi, Protocol::IdeWebSocket, tx);
        (clients, client, rx)
    }

    fn sent(rx: &mut OutboxReceiver) -> Value {
        serde_json::from_str(&rx.try_recv().expect("a message was sent")).unwrap()
    }

    #[test]
    fn answers_reach_the_request_that_asked_only_from_its_client() {
        let (clients, client, mut rx) = connected();
        let outgoing = Outgoing::default();
        let mut answer = outgoing.request(&clients, client, "getSuggestions", json!({"a": 1}));
        let request = sent(&mut rx);
        assert_eq!(request["method"], "getSuggestions");
        let id = jsonrpc::Id::from(request["id"].as_str().unwrap());
        outgoing.resolve(ClientId(99), &id, Ok(json!("intruder")));
        assert!(answer.try_recv().is_err(), "another client cannot answer");
        outgoing.resolve(client, &id, Ok(json!({"suggestions": []})));
        assert_eq!(
            answer.try_recv().unwrap(),
            Ok(Ok(json!({"suggestions": []})))
        );
        outgoing.resolve(client, &id, Ok(json!("twice")));
        assert!(
            outgoing.lock().is_empty(),
            "answered requests are forgotten"
        );
    }

    #[test]
    fn a_client_leaving_ends_its_requests_as_agent_gone() {
        let (clients, client, _rx) = connected();
        let outgoing = Outgoing::default();
        let mut orphaned = outgoing.request(&clients, client, "x", json!({}));
        outgoing.forget_client(client);
        assert_eq!(orphaned.try_recv().unwrap(), Err(Ended::AgentGone));
        clients.unregister(client);
        let mut unsent = outgoing.request(&clients, client, "x", json!({}));
        assert_eq!(unsent.try_recv().unwrap(), Err(Ended::AgentGone));
    }

    #[test]
    fn cancelling_tells_the_agent_once_it_was_sent_and_always_the_waiter() {
        let (clients, client, mut rx) = connected();
        let outgoing = Outgoing::default();

        let mut ticket = outgoing.reserve(Some(1));
        outgoing.cancel(&clients, 1);
        assert_eq!(ticket.answer.try_recv().unwrap(), Err(Ended::Cancelled));
        assert!(
            !outgoing.send(&clients, &ticket, client, "getSuggestions", json!({})),
            "cancelled before it was sent: never sent"
        );
        assert!(rx.try_recv().is_err(), "the agent heard nothing");

        let mut ticket = outgoing.reserve(Some(2));
        assert!(outgoing.send(&clients, &ticket, client, "getSuggestions", json!({})));
        let id = jsonrpc::Id::from(sent(&mut rx)["id"].as_str().unwrap());
        outgoing.cancel(&clients, 2);
        let cancelled = sent(&mut rx);
        assert_eq!(cancelled["method"], "request_cancelled");
        assert_eq!(cancelled["params"]["id"].as_str(), id.as_str());
        assert_eq!(ticket.answer.try_recv().unwrap(), Err(Ended::Cancelled));
        outgoing.resolve(client, &id, Ok(json!({"suggestions": ["late"]})));
        outgoing.cancel(&clients, 3);
        assert!(rx.try_recv().is_err(), "unknown tokens send nothing");
    }
}
