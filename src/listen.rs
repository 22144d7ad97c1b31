//! What every listener shares, in mini-redis's shape: a [`Listener`]
//! accepts from its [`Source`] under a cap on open connections (a
//! semaphore permit per connection) with backoff when accepting fails
//! (`EMFILE`: out of file descriptors), and gives each connection its own
//! [`Handler`] task. A transport supplies only its source (or uses
//! [`HttpPort`]) and its handler. [`Listeners`] starts them and stops them
//! all at shutdown.
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

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
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

    /// Accepts from `listener` until a connection comes; failures back off
    /// (10 ms doubling to 1 s), so a process out of descriptors does not
    /// spin. Cancel-safe when the listener's `accept` is.
    pub async fn next<S: Source>(&mut self, source: &mut S) -> Admission<S::Accepted> {
        loop {
            match source.accept().await {
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

/// Where a listener's connections come from, and what one over the cap
/// hears.
pub trait Source: Send + 'static {
    /// An accepted connection and what its handler needs to know of it.
    type Accepted: Send + 'static;
    /// The next connection. Cancel-safe: shutdown drops it at any await.
    fn accept(&mut self) -> impl Future<Output = io::Result<Self::Accepted>> + Send;
    /// Over the cap: tells the client, if the protocol can, before it goes.
    fn refuse(&self, accepted: Self::Accepted);
    /// After the last accept, before shutdown counts this listener done.
    fn stop(self)
    where
        Self: Sized,
    {
    }
}

/// A loopback TCP port whose clients speak HTTP first (the WebSocket
/// upgrade, MCP): one over the cap reads a 503.
pub struct HttpPort(pub TcpListener);

impl Source for HttpPort {
    type Accepted = TcpStream;

    async fn accept(&mut self) -> io::Result<TcpStream> {
        Ok(self.0.accept().await?.0)
    }

    fn refuse(&self, stream: TcpStream) {
        let _ = stream.try_write(HTTP_BUSY);
    }
}

/// One listener: connections from `source`, at most `cap` open at once
/// (handshakes included), each served by the handler `handler` makes.
pub struct Listener<S, F> {
    /// For log lines: `WebSocket`, `MCP`, `socket`.
    pub name: &'static str,
    pub cap: usize,
    pub source: S,
    pub handler: F,
}

/// Serves one connection until it ends or `shutdown` changes (then it
/// sends what is queued and closes, within its transport's limits).
pub trait Handler: Send + 'static {
    fn run(self, shutdown: watch::Receiver<bool>) -> impl Future<Output = ()> + Send;
}

/// The running listeners: every one, and every connection, holds a clone
/// of `done`, so its receiver closes once the last has finished.
pub struct Listeners {
    shutdown: watch::Sender<bool>,
    done: mpsc::Sender<()>,
    all_done: mpsc::Receiver<()>,
}

impl Default for Listeners {
    fn default() -> Self {
        let (done, all_done) = mpsc::channel(1);
        Listeners {
            shutdown: watch::channel(false).0,
            done,
            all_done,
        }
    }
}

impl Listeners {
    /// Accepts on `listener`, in a task of its own, until [`Listeners::stop`].
    pub fn serve<S, H, F>(&self, listener: Listener<S, F>)
    where
        S: Source,
        H: Handler,
        F: FnMut(S::Accepted) -> H + Send + 'static,
    {
        crate::task::spawn(accept_loop(
            listener,
            self.shutdown.subscribe(),
            self.done.clone(),
        ));
    }

    /// Stops accepting, tells every connection, and waits up to `grace`
    /// for the last to finish.
    pub async fn stop(self, grace: Duration) {
        let Listeners {
            shutdown,
            done,
            mut all_done,
        } = self;
        drop(done);
        let _ = shutdown.send(true);
        let _ = tokio::time::timeout(grace, all_done.recv()).await;
    }
}

async fn accept_loop<S, H, F>(
    listener: Listener<S, F>,
    mut shutdown: watch::Receiver<bool>,
    done: mpsc::Sender<()>,
) where
    S: Source,
    H: Handler,
    F: FnMut(S::Accepted) -> H + Send + 'static,
{
    let Listener {
        name,
        cap,
        mut source,
        mut handler,
    } = listener;
    let mut gate = Gate::new(name, cap);
    loop {
        tokio::select! {
            admitted = gate.next(&mut source) => match admitted {
                Admission::Admitted(accepted, slot) => {
                    let handler = handler(accepted);
                    let (shutdown, done) = (shutdown.clone(), done.clone());
                    crate::task::spawn(async move {
                        handler.run(shutdown).await;
                        drop((slot, done));
                    });
                }
                Admission::Refused(accepted) => source.refuse(accepted),
            },
            _ = shutdown.changed() => break,
        }
    }
    source.stop();
}

/// What an HTTP client over the cap reads before the connection closes.
const HTTP_BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n\
Content-Type: text/plain\r\nContent-Length: 42\r\nConnection: close\r\n\r\n\
Too many connections to Neovim; try again\n";

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails its first `failures` accepts with `EMFILE`, then accepts.
    struct Failing {
        attempts: u32,
        failures: u32,
    }

    impl Source for Failing {
        type Accepted = ();
        async fn accept(&mut self) -> io::Result<()> {
            self.attempts += 1;
            match self.attempts <= self.failures {
                true => Err(io::Error::from_raw_os_error(libc::EMFILE)),
                false => Ok(()),
            }
        }
        fn refuse(&self, (): ()) {}
    }

    #[tokio::test(start_paused = true)]
    async fn failed_accepts_back_off_exponentially_up_to_a_second() {
        let mut gate = Gate::new("test", 1);
        let mut listener = Failing {
            attempts: 0,
            failures: 10,
        };
        let started = Instant::now();
        let admitted = gate.next(&mut listener).await;
        assert!(matches!(admitted, Admission::Admitted((), _)));
        // 10 + 20 + 40 + … + 640 ms, then 1 s three times: 4.27 s of waiting,
        // where retrying every 50 ms would have been 0.5 s.
        assert_eq!(listener.attempts, 11);
        assert_eq!(started.elapsed(), Duration::from_millis(4270));
    }

    #[tokio::test]
    async fn connections_over_the_cap_are_refused_until_a_slot_frees() {
        let mut gate = Gate::new("test", 2);
        let mut ok = Failing {
            attempts: 0,
            failures: 0,
        };
        let Admission::Admitted((), first) = gate.next(&mut ok).await else {
            panic!("under the cap")
        };
        let Admission::Admitted((), _second) = gate.next(&mut ok).await else {
            panic!("at the cap")
        };
        assert!(matches!(gate.next(&mut ok).await, Admission::Refused(())));
        drop(first);
        assert!(matches!(
            gate.next(&mut ok).await,
            Admission::Admitted((), _)
        ));
    }
}
