//! At most one call into Neovim per key at a time. Callers that arrive
//! while a call runs share the next one, so a flood of identical requests
//! (pi asks for diagnostics before every model call, from every session)
//! never queues hundreds of calls on Neovim's main loop, and every caller
//! still gets an answer computed after it asked.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

pub struct Batched<K, V> {
    waiting: Mutex<HashMap<K, Vec<oneshot::Sender<V>>>>,
}

impl<K, V> Default for Batched<K, V> {
    fn default() -> Self {
        Batched {
            waiting: Mutex::new(HashMap::new()),
        }
    }
}

impl<K, V> Batched<K, V>
where
    K: Eq + Hash + Clone + Send + 'static,
    V: Clone + Send + 'static,
{
    /// Joins the next call for `key`, starting one if none is running.
    /// `None` only if the call's task died.
    pub async fn run<F, Fut>(self: &Arc<Self>, key: K, call: F) -> Option<V>
    where
        F: Fn() -> Fut + Send + 'static,
        Fut: Future<Output = V> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let start = {
            let mut waiting = self.lock();
            match waiting.get_mut(&key) {
                // A call is running: wait for the next one.
                Some(queue) => {
                    queue.push(reply);
                    false
                }
                None => {
                    waiting.insert(key.clone(), vec![reply]);
                    true
                }
            }
        };
        if start {
            tokio::spawn(self.clone().calls(key, call));
        }
        answer.await.ok()
    }

    /// Runs calls while callers are waiting; each call answers the callers
    /// that were waiting when it started.
    async fn calls<F, Fut>(self: Arc<Self>, key: K, call: F)
    where
        F: Fn() -> Fut,
        Fut: Future<Output = V>,
    {
        loop {
            let callers = {
                let mut waiting = self.lock();
                let Some(queue) = waiting.get_mut(&key) else {
                    return;
                };
                if queue.is_empty() {
                    waiting.remove(&key);
                    return;
                }
                std::mem::take(queue)
            };
            let value = call().await;
            for caller in callers {
                let _ = caller.send(value.clone());
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<K, Vec<oneshot::Sender<V>>>> {
        crate::locking::lock(&self.waiting)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn a_flood_shares_calls_and_everyone_is_answered_after_asking() {
        let batched: Arc<Batched<&'static str, usize>> = Arc::new(Batched::default());
        let calls = Arc::new(AtomicUsize::new(0));
        let call = {
            let calls = calls.clone();
            move || {
                let calls = calls.clone();
                async move {
                    tokio::task::yield_now().await;
                    calls.fetch_add(1, Ordering::SeqCst) + 1
                }
            }
        };
        let answers =
            futures_util::future::join_all((0..100).map(|_| batched.run("all", call.clone())))
                .await;
        assert!(answers.iter().all(Option::is_some));
        let made = calls.load(Ordering::SeqCst);
        assert!(made <= 2, "100 callers, {made} calls");
        // A caller arriving after a call finished gets a new call.
        let later = batched.run("all", call.clone()).await.unwrap();
        assert_eq!(later, made + 1);
        assert_eq!(
            batched.run("other", call).await,
            Some(made + 2),
            "keys do not share calls"
        );
    }
}
