//! Connected clients and their outboxes. A transport registers a client and
//! drains its outbox; everything else sends through here without knowing
//! which socket (or which kind of transport) is behind it. A client too far
//! behind is logged here once; its transport then closes it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::outbox::{Latest, OutboxSender, Refused};
use crate::client::{ClientId, ClientKind, Protocol};

/// What is known about one client.
#[derive(Debug, Clone)]
pub struct ClientEntry {
    pub kind: ClientKind,
    pub protocol: Protocol,
    /// `clientInfo.name` from `initialize`, once it arrived.
    pub name: Option<String>,
    /// The agent's process id from Claude's `ide_connected`, so Lua can
    /// tell which terminal runs it.
    pub pid: Option<u32>,
    /// The last state push sent with [`Clients::push_changed`], so an
    /// identical one is not sent again.
    last_pushed: Option<String>,
    /// Serialized messages for the connection's writer.
    outbox: OutboxSender,
}

impl ClientEntry {
    /// Whether the client speaks pi's and Claude's JSON-RPC (MCP over the
    /// WebSocket) and so may get notifications like `selection_changed`.
    pub fn speaks_jsonrpc(&self) -> bool {
        self.protocol == Protocol::IdeWebSocket
    }

    /// Its name in Lua's client list and the diff's winbar: the agent's,
    /// or `socket` for pi's context socket (only pi's WebSocket client
    /// takes suggestions and mentions).
    pub fn label(&self) -> &'static str {
        match self.protocol {
            Protocol::ContextSocket => "socket",
            Protocol::IdeWebSocket | Protocol::Companion => self.kind.as_str(),
        }
    }
}

#[derive(Default)]
pub struct Clients {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next_id: u64,
    clients: BTreeMap<ClientId, ClientEntry>,
}

impl Clients {
    pub fn register(&self, kind: ClientKind, protocol: Protocol, outbox: OutboxSender) -> ClientId {
        let mut inner = self.lock();
        inner.next_id += 1;
        let id = ClientId(inner.next_id);
        inner.clients.insert(
            id,
            ClientEntry {
                kind,
                protocol,
                name: None,
                pid: None,
                last_pushed: None,
                outbox,
            },
        );
        id
    }

    pub fn unregister(&self, id: ClientId) -> Option<ClientEntry> {
        self.lock().clients.remove(&id)
    }

    pub fn set_name(&self, id: ClientId, name: String) {
        if let Some(entry) = self.lock().clients.get_mut(&id) {
            entry.name = Some(name);
        }
    }

    pub fn set_pid(&self, id: ClientId, pid: u32) {
        if let Some(entry) = self.lock().clients.get_mut(&id) {
            entry.pid = Some(pid);
        }
    }

    /// What is known about one client, if it is still connected.
    pub fn entry(&self, id: ClientId) -> Option<ClientEntry> {
        self.lock().clients.get(&id).cloned()
    }

    pub fn kind(&self, id: ClientId) -> Option<ClientKind> {
        self.lock().clients.get(&id).map(|entry| entry.kind)
    }

    /// The most recently connected client of `kind` on the WebSocket.
    pub fn latest(&self, kind: ClientKind) -> Option<ClientId> {
        self.lock()
            .clients
            .iter()
            .rev()
            .find(|(_, entry)| entry.kind == kind && entry.speaks_jsonrpc())
            .map(|(id, _)| *id)
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.lock().clients.is_empty()
    }

    /// Whether any client speaks JSON-RPC (see [`ClientEntry::speaks_jsonrpc`]).
    pub fn any_jsonrpc(&self) -> bool {
        self.lock()
            .clients
            .values()
            .any(ClientEntry::speaks_jsonrpc)
    }

    /// Whether any client speaks the IDE companion protocol.
    pub fn any_companion(&self) -> bool {
        self.lock()
            .clients
            .values()
            .any(|entry| entry.protocol == Protocol::Companion)
    }

    /// Queues `message` as the latest `kind` of every companion client.
    pub fn broadcast_companion(&self, kind: Latest, message: &str) {
        for (id, entry) in &self.lock().clients {
            if entry.protocol == Protocol::Companion {
                queued(*id, entry.outbox.send_latest(kind, message.to_owned()));
            }
        }
    }

    /// Queues a message for one client; false when it is gone.
    pub fn send(&self, id: ClientId, message: String) -> bool {
        self.lock()
            .clients
            .get(&id)
            .is_some_and(|entry| queued(id, entry.outbox.send(message)))
    }

    /// Queues `message` as one client's latest `kind`.
    pub fn send_latest(&self, id: ClientId, kind: Latest, message: String) -> bool {
        self.lock()
            .clients
            .get(&id)
            .is_some_and(|entry| queued(id, entry.outbox.send_latest(kind, message)))
    }

    /// Queues a JSON-RPC message as the latest `kind` of every client that
    /// speaks JSON-RPC.
    pub fn broadcast_latest(&self, kind: Latest, message: &str) {
        for (id, entry) in &self.lock().clients {
            if entry.speaks_jsonrpc() {
                queued(*id, entry.outbox.send_latest(kind, message.to_owned()));
            }
        }
    }

    /// Queues `message` as the latest `context` of every client of the
    /// context socket whose last push differs; how many got it.
    pub fn push_context(&self, message: &str) -> usize {
        let mut inner = self.lock();
        inner
            .clients
            .iter_mut()
            .filter(|(_, entry)| entry.protocol == Protocol::ContextSocket)
            .map(|(id, entry)| push_if_changed(*id, entry, message))
            .filter(|&sent| sent)
            .count()
    }

    /// Queues `message` for one client unless it was its last push.
    pub fn push_changed_to(&self, id: ClientId, message: &str) -> bool {
        self.lock()
            .clients
            .get_mut(&id)
            .is_some_and(|entry| push_if_changed(id, entry, message))
    }

    /// Queues a JSON-RPC message for every WebSocket client of `kind`; how
    /// many there were.
    pub fn broadcast_to(&self, kind: ClientKind, message: &str) -> usize {
        let inner = self.lock();
        let of_kind = inner
            .clients
            .iter()
            .filter(|(_, entry)| entry.kind == kind && entry.speaks_jsonrpc());
        of_kind
            .filter(|(id, entry)| queued(**id, entry.outbox.send(message.to_owned())))
            .count()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        crate::mutex::lock(&self.inner)
    }
}

fn push_if_changed(id: ClientId, entry: &mut ClientEntry, message: &str) -> bool {
    if entry.last_pushed.as_deref() == Some(message) {
        return false;
    }
    entry.last_pushed = Some(message.to_owned());
    queued(
        id,
        entry
            .outbox
            .send_latest(Latest::Context, message.to_owned()),
    )
}

/// Whether a message was queued; logs the moment a client fell behind.
fn queued(id: ClientId, outcome: Result<(), Refused>) -> bool {
    match outcome {
        Ok(()) => true,
        Err(Refused::Gone) => false,
        Err(Refused::Behind { queued, bytes }) => {
            tracing::warn!(
                "client {} stopped reading: {queued} messages ({bytes} bytes) waiting for it; disconnecting it",
                id.0
            );
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::outbox::outbox;
    use super::*;

    #[test]
    fn routes_to_one_or_all_and_forgets_the_gone() {
        let clients = Clients::default();
        let (tx_a, mut rx_a) = outbox();
        let (tx_b, mut rx_b) = outbox();
        let a = clients.register(ClientKind::Pi, Protocol::IdeWebSocket, tx_a);
        let b = clients.register(ClientKind::Claude, Protocol::IdeWebSocket, tx_b);
        assert_ne!(a, b);
        assert!(clients.send(a, "one".into()));
        clients.broadcast_latest(Latest::Selection, "all");
        assert_eq!(rx_a.try_recv().unwrap(), "one");
        assert_eq!(rx_a.try_recv().unwrap(), "all");
        assert_eq!(rx_b.try_recv().unwrap(), "all");
        assert!(rx_b.try_recv().is_err());
        assert_eq!(clients.broadcast_to(ClientKind::Claude, "claude only"), 1);
        assert_eq!(rx_b.try_recv().unwrap(), "claude only");
        assert!(rx_a.try_recv().is_err(), "pi clients do not get it");
        clients.set_name(b, "claude-code".into());
        assert_eq!(clients.latest(ClientKind::Claude), Some(b));
        assert_eq!(clients.kind(b), Some(ClientKind::Claude));
        clients.set_pid(b, 4242);
        assert_eq!(clients.entry(b).unwrap().pid, Some(4242));
        clients.unregister(a);
        assert!(!clients.send(a, "late".into()));
        assert!(!clients.is_empty());
        assert_eq!(
            clients.unregister(b).unwrap().name.as_deref(),
            Some("claude-code")
        );
        assert!(clients.is_empty());
    }

    #[test]
    fn socket_clients_get_pushes_once_and_no_jsonrpc() {
        let clients = Clients::default();
        let (tx_pi, mut rx_pi) = outbox();
        let (tx_a, mut rx_a) = outbox();
        let (tx_b, mut rx_b) = outbox();
        let pi = clients.register(ClientKind::Pi, Protocol::IdeWebSocket, tx_pi);
        let a = clients.register(ClientKind::Pi, Protocol::ContextSocket, tx_a);
        assert!(clients.any_jsonrpc());
        clients.broadcast_latest(Latest::Selection, "rpc");
        assert_eq!(rx_pi.try_recv().unwrap(), "rpc");
        assert!(rx_a.try_recv().is_err(), "no JSON-RPC on the socket");
        assert!(clients.push_changed_to(a, "x"));
        assert!(!clients.push_changed_to(a, "x"), "identical: not resent");
        let b = clients.register(ClientKind::Pi, Protocol::ContextSocket, tx_b);
        assert_eq!(
            clients.latest(ClientKind::Pi),
            Some(pi),
            "pi on the WebSocket"
        );
        assert_eq!(clients.broadcast_to(ClientKind::Pi, "rpc"), 1);
        assert_eq!(rx_pi.try_recv().unwrap(), "rpc");
        assert_eq!(clients.push_context("x"), 1, "only b");
        assert_eq!(rx_b.try_recv().unwrap(), "x");
        assert_eq!(clients.push_context("y"), 2);
        assert_eq!(clients.push_context("z"), 2);
        assert_eq!(rx_a.try_recv().unwrap(), "z", "unread: only the latest");
        assert!(rx_a.try_recv().is_err());
        assert_eq!(rx_b.try_recv().unwrap(), "z");
        assert!(rx_pi.try_recv().is_err(), "pushes go to their kind only");
        assert!(!clients.push_changed_to(ClientId(99), "w"));
        clients.unregister(b);
    }
}
