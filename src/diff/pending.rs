//! Pending `openDiff` requests: each waits on a oneshot until the person
//! decides in Neovim, the agent closes the tab, or the client goes away.
//! Every pending diff is answered exactly once: whoever `take`s it answers it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use tokio::sync::oneshot;

use crate::client::{ClientId, Requester};

/// How a diff ended.
#[derive(Debug, Clone, PartialEq)]
pub enum DiffOutcome {
    /// The person accepted; the text is the proposal buffer's final contents.
    Accepted(String),
    /// Rejected by the person, closed by the agent, or impossible to show.
    Rejected { reason: Option<String> },
    /// Rejected by the person, who said why (for agents that pass it on).
    Declined(String),
    /// The person closed the diff without deciding (its tab, a side's last
    /// window, a side's buffer wiped): a rejection to every client but the
    /// IDE companion's, which hears `ide/diffClosed`.
    Closed,
}

impl DiffOutcome {
    pub fn rejected(reason: impl Into<String>) -> Self {
        DiffOutcome::Rejected {
            reason: Some(reason.into()),
        }
    }
}

/// One diff waiting for an answer.
#[derive(Debug)]
pub struct PendingDiff {
    pub id: u64,
    pub tab_name: String,
    pub requester: Requester,
    reply: oneshot::Sender<DiffOutcome>,
}

impl PendingDiff {
    /// Wakes the `openDiff` request with its answer.
    pub fn answer(self, outcome: DiffOutcome) {
        let _ = self.reply.send(outcome);
    }
}

#[derive(Default)]
pub struct PendingDiffs {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next_id: u64,
    pending: BTreeMap<u64, PendingDiff>,
}

/// What [`PendingDiffs::begin`] hands back.
pub struct Begun {
    pub id: u64,
    pub answer: oneshot::Receiver<DiffOutcome>,
    /// The diff with the same tab name that this one replaces, whichever
    /// agent opened it (a name identifies one diff, for `:PiIde accept NAME`);
    /// the caller answers it and closes its windows.
    pub replaced: Option<PendingDiff>,
}

impl PendingDiffs {
    pub fn begin(&self, requester: impl Into<Requester>, tab_name: &str) -> Begun {
        let requester = requester.into();
        let mut inner = self.lock();
        let replaced_id = inner
            .pending
            .values()
            .find(|diff| diff.tab_name == tab_name)
            .map(|diff| diff.id);
        let replaced = replaced_id.and_then(|id| inner.pending.remove(&id));
        inner.next_id += 1;
        let id = inner.next_id;
        let (reply, answer) = oneshot::channel();
        inner.pending.insert(
            id,
            PendingDiff {
                id,
                tab_name: tab_name.to_owned(),
                requester,
                reply,
            },
        );
        Begun {
            id,
            answer,
            replaced,
        }
    }

    /// Whether diff `id` still waits for a decision.
    pub fn is_pending(&self, id: u64) -> bool {
        self.lock().pending.contains_key(&id)
    }

    pub fn take(&self, id: u64) -> Option<PendingDiff> {
        self.lock().pending.remove(&id)
    }

    pub fn take_tab(&self, requester: impl Into<Requester>, tab_name: &str) -> Option<PendingDiff> {
        let requester = requester.into();
        let mut inner = self.lock();
        let id = inner
            .pending
            .values()
            .find(|diff| diff.requester == requester && diff.tab_name == tab_name)?
            .id;
        inner.pending.remove(&id)
    }

    /// The id of `client`'s diff named `tab_name`, left pending.
    pub fn find_tab(&self, requester: impl Into<Requester>, tab_name: &str) -> Option<u64> {
        let requester = requester.into();
        let inner = self.lock();
        let found = inner
            .pending
            .values()
            .find(|diff| diff.requester == requester && diff.tab_name == tab_name);
        found.map(|diff| diff.id)
    }

    pub fn take_client(&self, client: ClientId) -> Vec<PendingDiff> {
        self.take_where(|diff| diff.requester == Requester::Client(client))
    }

    pub fn take_all(&self) -> Vec<PendingDiff> {
        self.take_where(|_| true)
    }

    fn take_where(&self, keep: impl Fn(&PendingDiff) -> bool) -> Vec<PendingDiff> {
        let mut inner = self.lock();
        let ids: Vec<u64> = inner
            .pending
            .values()
            .filter(|diff| keep(diff))
            .map(|diff| diff.id)
            .collect();
        ids.iter()
            .filter_map(|id| inner.pending.remove(id))
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        crate::mutex::lock(&self.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_diff_is_answered_once_by_whoever_takes_it() {
        let diffs = PendingDiffs::default();
        let (a, b) = (ClientId(1), ClientId(2));
        let first = diffs.begin(a, "t1");
        assert!(first.replaced.is_none());
        let other = diffs.begin(b, "t1");
        let replaced = other
            .replaced
            .expect("a tab name names one diff, whichever agent opened it");
        assert_eq!(replaced.id, first.id);
        replaced.answer(DiffOutcome::rejected("replaced"));
        let mut first_answer = first.answer;
        assert_eq!(
            first_answer.try_recv().unwrap(),
            DiffOutcome::rejected("replaced")
        );
        let again = diffs.begin(a, "t1");
        assert_eq!(again.replaced.map(|diff| diff.id), Some(other.id));
        assert!(diffs.begin(b, "t2").replaced.is_none(), "other names stay");

        assert!(diffs.take_tab(a, "nope").is_none());
        assert!(
            diffs.take_tab(b, "t1").is_none(),
            "close_tab closes only the agent's own diff"
        );
        diffs
            .take(again.id)
            .unwrap()
            .answer(DiffOutcome::Accepted("x".into()));
        let mut again_answer = again.answer;
        assert_eq!(
            again_answer.try_recv().unwrap(),
            DiffOutcome::Accepted("x".into())
        );
        assert!(
            diffs.take(again.id).is_none(),
            "a second take finds nothing"
        );

        assert_eq!(diffs.take_client(b).len(), 1);
        assert!(diffs.take_all().is_empty());
    }
}
