//! What every listener shares: a cap on open connections (a semaphore
//! permit per connection, as in mini-redis) and backoff when accepting
//! fails (`EMFILE`: out of file descriptors).
//!
//! A connection over the cap is accepted and closed at once instead of left
//! in the kernel's backlog: clients already connected never notice, a
//! refused client hears so immediately and can retry, and the backlog never
//! holds stale connects ahead of the next client once a slot is free.
//! Connections that never finish their handshake hold a slot only until
//! their transport's handshake timeout.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// First wait after a failed accept; doubled on each failure in a row.
const BACKOFF_FIRST: Duration = Duration::from_millis(10);
/// Longest wait between accepts that keep failing.
const BACKOFF_MAX: Duration = Duration::from_secs(1);
/// Refusals are logged at most this often (a flood must not fill the log).
const REFUSAL_LOG_EVERY: Duration = Duration::from_secs(10);

/// What [`Gate::next`] let through.
pub enum Admission<S> {
    /// A connection under the cap; the permit is its slot until dropped.
    Admitted(S, OwnedSemaphorePermit),
    /// Over the cap: the transport tells the client (if it can) and drops it.
    Refused(S),
}

/// One listener's cap and accept backoff.
pub struct Gate {
    /// For log lines: `WebSocket`, `MCP`, `socket`.
    name: &'static str,
    cap: usize,
    slots: Arc<Semaphore>,
    /// The next wait after a failed accept.
    backoff: Duration,
    /// Refusals not logged yet, and when the last log line was written.
    unlogged_refusals: u64,
    last_refusal_log: Option<Instant>,
}

impl Gate {
    pub fn new(name: &'static str, cap: usize) -> Gate {
        Gate {
            name,
            cap,
            slots: Arc::new(Semaphore::new(cap)),
            backoff: BACKOFF_FIRST,
            unlogged_refusals: 0,
            last_refusal_log: None,
        }
    }

    /// Accepts with `accept` until a connection comes; failures back off
    /// (10 ms doubling to 1 s), so a process out of descriptors does not
    /// spin. Cancel-safe when `accept`'s future is.
    pub async fn next<S, F, A>(&mut self, mut accept: F) -> Admission<S>
    where
        F: FnMut() -> A,
        A: Future<Output = io::Result<S>>,
    {
        loop {
            match accept().await {
                Ok(stream) => {
                    self.backoff = BACKOFF_FIRST;
                    return match self.slots.clone().try_acquire_owned() {
                        Ok(permit) => Admission::Admitted(stream, permit),
                        Err(_) => {
                            self.note_refusal();
                            Admission::Refused(stream)
                        }
                    };
                }
                Err(error) => {
                    tracing::warn!(
                        "{}: accept failed ({error}); retrying in {} ms",
                        self.name,
                        self.backoff.as_millis()
                    );
                    tokio::time::sleep(self.backoff).await;
                    self.backoff = (self.backoff * 2).min(BACKOFF_MAX);
                }
            }
        }
    }

    fn note_refusal(&mut self) {
        self.unlogged_refusals += 1;
        let now = Instant::now();
        if self
            .last_refusal_log
            .is_none_or(|last| now - last >= REFUSAL_LOG_EVERY)
        {
            tracing::warn!(
                "{}: {} connections open (the cap); refused {} more",
                self.name,
                self.cap,
                self.unlogged_refusals
            );
            self.unlogged_refusals = 0;
            self.last_refusal_log = Some(now);
        }
    }
}

/// What an HTTP client over the cap reads before the connection closes.
pub const HTTP_BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n\
Content-Type: text/plain\r\nContent-Length: 42\r\nConnection: close\r\n\r\n\
Too many connections to Neovim; try again\n";

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn failed_accepts_back_off_exponentially_up_to_a_second() {
        let mut gate = Gate::new("test", 1);
        let attempts = Cell::new(0u32);
        let started = Instant::now();
        let admitted = gate
            .next(|| {
                attempts.set(attempts.get() + 1);
                let fail = attempts.get() <= 10;
                async move {
                    match fail {
                        true => Err(io::Error::from_raw_os_error(libc::EMFILE)),
                        false => Ok(()),
                    }
                }
            })
            .await;
        assert!(matches!(admitted, Admission::Admitted((), _)));
        // 10 + 20 + 40 + … + 640 ms, then 1 s three times: 4.27 s of waiting,
        // where retrying every 50 ms would have been 0.5 s.
        assert_eq!(attempts.get(), 11);
        assert_eq!(started.elapsed(), Duration::from_millis(4270));
    }

    #[tokio::test]
    async fn connections_over_the_cap_are_refused_until_a_slot_frees() {
        let mut gate = Gate::new("test", 2);
        let ok = || async { Ok::<_, io::Error>(()) };
        let Admission::Admitted((), first) = gate.next(ok).await else {
            panic!("under the cap")
        };
        let Admission::Admitted((), _second) = gate.next(ok).await else {
            panic!("at the cap")
        };
        assert!(matches!(gate.next(ok).await, Admission::Refused(())));
        drop(first);
        assert!(matches!(gate.next(ok).await, Admission::Admitted((), _)));
    }
}
