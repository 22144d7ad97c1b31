//! One client's queue of messages to send, bounded. What only matters as its
//! latest value (the selection, the context socket's `context`) takes one place in the
//! queue however often it changes: a client that stopped reading gets the
//! newest one when it resumes, not a backlog. A client that falls further
//! behind than the bound is given up on: its connection closes.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// Most messages queued for one client (its latest values not counted).
pub const MAX_QUEUED: usize = 1024;
/// Most bytes queued for one client (its latest values not counted): room
/// for several large `openDiff` answers.
pub const MAX_QUEUED_BYTES: usize = 64 << 20;

/// A message that only matters as its latest value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Latest {
    Selection,
    Context,
}

impl Latest {
    fn slot(self) -> usize {
        match self {
            Latest::Selection => 0,
            Latest::Context => 1,
        }
    }
}

/// Why a message was not queued.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// The connection has ended.
    Gone,
    /// The client is too far behind; its connection is being closed.
    Behind { queued: usize, bytes: usize },
}

/// A new outbox: the sending half for the shared state, the receiving half
/// for the connection's writer.
pub fn outbox() -> (OutboxSender, OutboxReceiver) {
    let shared = Arc::new(Shared::default());
    (
        OutboxSender {
            shared: shared.clone(),
        },
        OutboxReceiver { shared },
    )
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    /// Something was queued (or the client fell behind).
    ready: Notify,
}

#[derive(Default)]
struct Queue {
    entries: VecDeque<Entry>,
    /// The value of each [`Latest`] kind waiting in `entries`.
    latest: [Option<String>; 2],
    /// Bytes of the `Message` entries.
    bytes: usize,
    /// The receiver was dropped.
    closed: bool,
    /// The bound was passed; nothing more is sent.
    behind: bool,
}

enum Entry {
    Message(String),
    Latest(Latest),
}

#[derive(Clone)]
pub struct OutboxSender {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for OutboxSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutboxSender").finish_non_exhaustive()
    }
}

impl OutboxSender {
    /// Queues `message` after those already queued.
    pub fn send(&self, message: String) -> Result<(), Refused> {
        let mut queue = self.lock();
        queue.usable()?;
        if queue.entries.len() >= MAX_QUEUED || queue.bytes + message.len() > MAX_QUEUED_BYTES {
            queue.behind = true;
            let refused = Refused::Behind {
                queued: queue.entries.len(),
                bytes: queue.bytes,
            };
            // Nothing of it will be sent: hand the memory back now.
            queue.entries = VecDeque::new();
            queue.latest = Default::default();
            queue.bytes = 0;
            drop(queue);
            self.shared.ready.notify_one();
            return Err(refused);
        }
        queue.bytes += message.len();
        queue.entries.push_back(Entry::Message(message));
        drop(queue);
        self.shared.ready.notify_one();
        Ok(())
    }

    /// Queues `message` as the latest value of `kind`: it replaces one
    /// still waiting, in that one's place.
    pub fn send_latest(&self, kind: Latest, message: String) -> Result<(), Refused> {
        let mut queue = self.lock();
        queue.usable()?;
        let waiting = queue.latest[kind.slot()].replace(message).is_some();
        if !waiting {
            queue.entries.push_back(Entry::Latest(kind));
        }
        drop(queue);
        self.shared.ready.notify_one();
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        crate::mutex::lock(&self.shared.queue)
    }
}

impl Queue {
    fn usable(&self) -> Result<(), Refused> {
        match (self.closed, self.behind) {
            (true, _) | (_, true) => Err(Refused::Gone),
            _ => Ok(()),
        }
    }

    fn pop(&mut self) -> Option<String> {
        match self.entries.pop_front()? {
            Entry::Message(message) => {
                self.bytes -= message.len();
                Some(message)
            }
            Entry::Latest(kind) => self.latest[kind.slot()].take(),
        }
    }
}

pub struct OutboxReceiver {
    shared: Arc<Shared>,
}

impl OutboxReceiver {
    /// The next message; `None` once the client fell behind (close it).
    pub async fn recv(&mut self) -> Option<String> {
        loop {
            match self.try_recv() {
                Ok(message) => return Some(message),
                Err(Empty::Behind) => return None,
                Err(Empty::Waiting) => self.shared.ready.notified().await,
            }
        }
    }

    /// The next message if one is queued.
    pub fn try_recv(&mut self) -> Result<String, Empty> {
        let mut queue = crate::mutex::lock(&self.shared.queue);
        if queue.behind {
            return Err(Empty::Behind);
        }
        queue.pop().ok_or(Empty::Waiting)
    }

    /// Resolves once the client fell behind, e.g. while a write to it blocks.
    pub async fn fell_behind(&self) {
        loop {
            if crate::mutex::lock(&self.shared.queue).behind {
                return;
            }
            self.shared.ready.notified().await;
        }
    }
}

/// Why [`OutboxReceiver::try_recv`] had nothing.
#[derive(Debug, PartialEq, Eq)]
pub enum Empty {
    Waiting,
    Behind,
}

impl Drop for OutboxReceiver {
    fn drop(&mut self) {
        let mut queue = crate::mutex::lock(&self.shared.queue);
        queue.closed = true;
        queue.entries.clear();
        queue.latest = Default::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latest_values_keep_one_place_and_their_newest_value() {
        let (tx, mut rx) = outbox();
        tx.send("reply 1".into()).unwrap();
        for n in 0..10_000 {
            tx.send_latest(Latest::Selection, format!("selection {n}"))
                .unwrap();
        }
        tx.send_latest(Latest::Context, "context".into()).unwrap();
        tx.send("reply 2".into()).unwrap();
        let drained: Vec<_> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
        assert_eq!(drained, ["reply 1", "selection 9999", "context", "reply 2"]);
        tx.send_latest(Latest::Selection, "again".into()).unwrap();
        assert_eq!(rx.try_recv().unwrap(), "again", "a new place once sent");
    }

    #[test]
    fn a_client_past_the_bound_is_given_up_and_its_queue_freed() {
        let (tx, mut rx) = outbox();
        for n in 0..MAX_QUEUED {
            tx.send(format!("m{n}")).unwrap();
        }
        let refused = tx.send("one too many".into()).unwrap_err();
        assert!(matches!(
            refused,
            Refused::Behind {
                queued: MAX_QUEUED,
                ..
            }
        ));
        assert_eq!(rx.try_recv(), Err(Empty::Behind));
        assert_eq!(tx.send("later".into()), Err(Refused::Gone));
        assert_eq!(
            tx.send_latest(Latest::Context, "c".into()),
            Err(Refused::Gone)
        );
        let (tx, _rx) = outbox();
        tx.send("x".repeat(MAX_QUEUED_BYTES)).unwrap();
        assert!(matches!(
            tx.send("y".into()),
            Err(Refused::Behind { queued: 1, .. })
        ));
    }

    #[tokio::test]
    async fn the_receiver_wakes_for_messages_and_for_falling_behind() {
        let (tx, mut rx) = outbox();
        let sender = crate::task::spawn(async move {
            tx.send("hello".into()).unwrap();
            tx
        });
        assert_eq!(rx.recv().await.as_deref(), Some("hello"));
        let tx = sender.await.unwrap();
        for _ in 0..=MAX_QUEUED {
            let _ = tx.send("m".into());
        }
        rx.fell_behind().await;
        assert_eq!(rx.recv().await, None);
        drop(rx);
        assert_eq!(tx.send("after".into()), Err(Refused::Gone));
    }
}
