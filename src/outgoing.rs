//! Requests the editor sends to agents (`getSuggestions`,
//! `listSuggestionModels`) and the answers that come back for them.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;
use tokio::sync::oneshot;

use crate::hub::{ClientId, Hub};
use crate::jsonrpc;

/// A JSON-RPC `result` or `error` object.
pub type Answer = Result<Value, Value>;

#[derive(Default)]
pub struct Outgoing {
    pending: Mutex<HashMap<String, (ClientId, oneshot::Sender<Answer>)>>,
}

impl Outgoing {
    /// Sends `method` to `client`; the receiver yields its answer, or an
    /// error when the client goes away first.
    pub fn send(
        &self,
        hub: &Hub,
        client: ClientId,
        method: &str,
        params: Value,
    ) -> (String, oneshot::Receiver<Answer>) {
        let id = uuid::Uuid::new_v4().to_string();
        let (reply, answer) = oneshot::channel();
        self.lock().insert(id.clone(), (client, reply));
        if !hub.send(
            client,
            jsonrpc::request(&Value::from(id.as_str()), method, params),
        ) {
            self.lock().remove(&id);
        }
        (id, answer)
    }

    /// Routes an answer from `client`; answers to unknown ids are dropped.
    pub fn resolve(&self, client: ClientId, id: &Value, answer: Answer) {
        let Some(key) = id.as_str() else { return };
        let mut pending = self.lock();
        if pending.get(key).is_some_and(|(owner, _)| *owner == client)
            && let Some((_, reply)) = pending.remove(key)
        {
            let _ = reply.send(answer);
        }
    }

    /// Forgets a client's requests; their receivers see the client is gone.
    pub fn forget_client(&self, client: ClientId) {
        self.lock().retain(|_, (owner, _)| *owner != client);
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, (ClientId, oneshot::Sender<Answer>)>> {
        crate::locking::lock(&self.pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::ClientKind;
    use serde_json::json;

    #[test]
    fn answers_reach_the_request_that_asked_only_from_its_client() {
        let hub = Hub::default();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let client = hub.register(ClientKind::Pi, tx);
        let outgoing = Outgoing::default();
        let (id, mut answer) = outgoing.send(&hub, client, "getSuggestions", json!({"a": 1}));
        let sent: Value = serde_json::from_str(&rx.try_recv().unwrap()).unwrap();
        assert_eq!(
            (sent["id"].as_str(), sent["method"].as_str()),
            (Some(id.as_str()), Some("getSuggestions"))
        );
        outgoing.resolve(ClientId(99), &json!(id), Ok(json!("intruder")));
        assert!(answer.try_recv().is_err(), "another client cannot answer");
        outgoing.resolve(client, &json!(id), Ok(json!({"suggestions": []})));
        assert_eq!(answer.try_recv().unwrap(), Ok(json!({"suggestions": []})));

        let (_, mut orphaned) = outgoing.send(&hub, client, "x", json!({}));
        outgoing.forget_client(client);
        assert!(matches!(
            orphaned.try_recv(),
            Err(oneshot::error::TryRecvError::Closed)
        ));
    }
}
