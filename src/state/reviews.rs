//! The review session a client asked for: at most one at a time, owned by
//! the client that asked, ended exactly once.

use std::sync::Mutex;

use crate::client::ClientId;

#[derive(Default)]
pub struct Reviews {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next_id: u64,
    open: Option<(u64, ClientId)>,
}

impl Reviews {
    /// Opens a review for `client` and returns its id; `None` while
    /// another one is open.
    pub fn begin(&self, client: ClientId) -> Option<u64> {
        let mut inner = crate::mutex::lock(&self.inner);
        if inner.open.is_some() {
            return None;
        }
        inner.next_id += 1;
        let id = inner.next_id;
        inner.open = Some((id, client));
        Some(id)
    }

    /// Ends review `id`: the client that asked, or `None` when it is no
    /// longer open (already answered, or its client left).
    pub fn finish(&self, id: u64) -> Option<ClientId> {
        let mut inner = crate::mutex::lock(&self.inner);
        match inner.open {
            Some((open, client)) if open == id => {
                inner.open = None;
                Some(client)
            }
            _ => None,
        }
    }

    /// Whether review `id` is still open (not answered, its client still here).
    pub fn is_open(&self, id: u64) -> bool {
        crate::mutex::lock(&self.inner)
            .open
            .is_some_and(|(open, _)| open == id)
    }

    /// Ends the review `client` asked for, if any; its id.
    pub fn take_client(&self, client: ClientId) -> Option<u64> {
        let mut inner = crate::mutex::lock(&self.inner);
        match inner.open {
            Some((id, owner)) if owner == client => {
                inner.open = None;
                Some(id)
            }
            _ => None,
        }
    }

    /// Ends whatever review is open: its id and client.
    pub fn take(&self) -> Option<(u64, ClientId)> {
        crate::mutex::lock(&self.inner).open.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_review_at_a_time_ended_once() {
        let reviews = Reviews::default();
        let id = reviews.begin(ClientId(1)).unwrap();
        assert!(reviews.is_open(id));
        assert_eq!(reviews.begin(ClientId(2)), None, "one is open");
        assert_eq!(reviews.take_client(ClientId(2)), None, "not theirs");
        assert_eq!(reviews.finish(id + 1), None, "another id");
        assert_eq!(reviews.finish(id), Some(ClientId(1)));
        assert!(!reviews.is_open(id));
        assert_eq!(reviews.finish(id), None, "answered once");
        let next = reviews.begin(ClientId(2)).unwrap();
        assert_ne!(next, id);
        assert_eq!(reviews.take_client(ClientId(2)), Some(next));
        assert_eq!(reviews.finish(next), None);
        let last = reviews.begin(ClientId(3)).unwrap();
        assert_eq!(reviews.take(), Some((last, ClientId(3))));
        assert_eq!(reviews.take(), None);
    }
}
