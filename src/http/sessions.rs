//! The MCP sessions of one endpoint, kept from piling up. rmcp's
//! `LocalSessionManager` keeps a session until its client sends `DELETE`,
//! and a crashed agent or a script never does; its own idle timeout also
//! closes a session whose client is listening on an open event stream.
//! Here a session counts as idle only while none of its streams is open
//! (the `GET` for notifications, a call's answer still coming): past
//! [`MAX_SESSIONS`] the idle one used longest ago is closed for the new
//! one (its client's next request gets 404, and the MCP clients then
//! initialize again), and one idle for the endpoint's idle time is closed.
//! With every session busy, a new one is refused with a reason.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::mutex::lock;

/// Most sessions open at once on one endpoint. Each agent holds one (a
/// few while it reconnects); a session costs about 60 KiB.
pub const MAX_SESSIONS: usize = 64;
/// How long a session may sit idle, no stream open, by default.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(4 * 60 * 60);
/// Longest wait between two looks for expired sessions.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// Why a session was not made.
#[derive(Debug)]
pub enum SessionsError {
    /// Every session is in use: none may be closed for a new one.
    AllBusy,
    Local(LocalSessionManagerError),
}

impl std::fmt::Display for SessionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionsError::AllBusy => write!(
                f,
                "{MAX_SESSIONS} MCP sessions are open and every one has a stream open: \
                 end one (DELETE) or retry later"
            ),
            SessionsError::Local(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for SessionsError {}

impl From<LocalSessionManagerError> for SessionsError {
    fn from(error: LocalSessionManagerError) -> Self {
        SessionsError::Local(error)
    }
}

/// When a session was last used and how many of its streams are open.
struct Use {
    last: Instant,
    streams: usize,
}

type Uses = Arc<Mutex<HashMap<SessionId, Use>>>;

/// rmcp's sessions, with a cap and an idle time that spare open streams.
pub struct Sessions {
    inner: LocalSessionManager,
    uses: Uses,
    /// `None`: idle sessions stay (until the cap needs their place).
    idle: Option<Duration>,
    /// How many are open, for the person (`:checkhealth`).
    open: watch::Sender<usize>,
}

impl Sessions {
    pub fn new(inner: LocalSessionManager, idle: Option<Duration>) -> Self {
        Sessions {
            inner,
            uses: Uses::default(),
            idle,
            open: watch::Sender::new(0),
        }
    }

    /// The number of open sessions, as it changes.
    pub fn watch_open(&self) -> watch::Receiver<usize> {
        self.open.subscribe()
    }

    fn touch(&self, id: &SessionId) {
        if let Some(used) = lock(&self.uses).get_mut(id) {
            used.last = Instant::now();
        }
    }

    /// `stream` of session `id`, counted as open until it is dropped.
    fn tracked<S>(
        &self,
        id: &SessionId,
        stream: S,
    ) -> impl Stream<Item = ServerSseMessage> + Send + Sync + 'static
    where
        S: Stream<Item = ServerSseMessage> + Send + Sync + 'static,
    {
        if let Some(used) = lock(&self.uses).get_mut(id) {
            used.streams += 1;
            used.last = Instant::now();
        }
        let open = OpenStream {
            uses: self.uses.clone(),
            id: id.clone(),
        };
        stream.map(move |message| {
            let _ = &open;
            message
        })
    }

    fn counted(&self) {
        let open = lock(&self.uses).len();
        self.open.send_replace(open);
    }

    /// Closes the sessions idle (no stream open) for the idle time or
    /// more; how many.
    pub async fn expire(&self) -> usize {
        let Some(idle) = self.idle else { return 0 };
        let expired: Vec<SessionId> = lock(&self.uses)
            .iter()
            .filter(|(_, used)| used.streams == 0 && used.last.elapsed() >= idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            tracing::info!("MCP session closed after {idle:?} idle");
            let _ = self.close_session(id).await;
        }
        if !expired.is_empty() {
            crate::memory::release_soon();
        }
        expired.len()
    }

    /// How long to wait between two looks for expired sessions.
    fn sweep_every(&self) -> Option<Duration> {
        let idle = self.idle?;
        Some((idle / 4).clamp(Duration::from_millis(10), SWEEP_EVERY))
    }
}

/// Closes the expired sessions of `sessions` until they are gone.
pub async fn expire_idle(sessions: Weak<Sessions>) {
    let Some(every) = sessions.upgrade().and_then(|s| s.sweep_every()) else {
        return;
    };
    loop {
        tokio::time::sleep(every).await;
        let Some(sessions) = sessions.upgrade() else {
            return;
        };
        sessions.expire().await;
    }
}

/// One open stream of a session; its end is the session's last use.
struct OpenStream {
    uses: Uses,
    id: SessionId,
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        if let Some(used) = lock(&self.uses).get_mut(&self.id) {
            used.streams = used.streams.saturating_sub(1);
            used.last = Instant::now();
        }
    }
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let evicted = {
            let uses = lock(&self.uses);
            if uses.len() < MAX_SESSIONS {
                None
            } else {
                let idle = uses
                    .iter()
                    .filter(|(_, used)| used.streams == 0)
                    .min_by_key(|(_, used)| used.last)
                    .map(|(id, _)| id.clone());
                Some(idle.ok_or(SessionsError::AllBusy)?)
            }
        };
        if let Some(id) = evicted {
            tracing::info!("{MAX_SESSIONS} MCP sessions open: the one idle longest closed");
            let _ = self.close_session(&id).await;
            crate::memory::release_soon();
        }
        let (id, transport) = self.inner.create_session().await?;
        lock(&self.uses).insert(
            id.clone(),
            Use {
                last: Instant::now(),
                streams: 0,
            },
        );
        self.counted();
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let known = lock(&self.uses).remove(id).is_some();
        if known {
            self.counted();
        }
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.inner.create_stream(id, message).await?;
        Ok(self.tracked(id, stream))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.inner.create_standalone_stream(id).await?;
        Ok(self.tracked(id, stream))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.inner.resume(id, last_event_id).await?;
        Ok(self.tracked(id, stream))
    }
}

/// How long the count waits for more changes before Lua hears it: 500
/// clients arriving at once are a few calls into Neovim, not 500.
const TELL_QUIET: Duration = Duration::from_millis(200);

/// Tells Lua how many sessions endpoint `name` has open, as it changes.
pub async fn tell_open_sessions(
    editor: crate::nvim::editor::Editor,
    name: &'static str,
    mut open: watch::Receiver<usize>,
) {
    while open.changed().await.is_ok() {
        tokio::time::sleep(TELL_QUIET).await;
        let count = *open.borrow_and_update();
        let call = crate::nvim::seam::LuaCall::Sessions {
            endpoint: name.to_owned(),
            open: count,
        };
        if let Err(error) = editor.call(call).await {
            tracing::debug!("the session count not told: {error}");
        }
    }
}
