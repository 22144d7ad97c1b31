//! Accepts connections on loopback, under the cap, and serves each with
//! hyper. A request reaches rmcp only with the lockfile's token as a bearer
//! token, the right path and a body under the cap; rmcp itself refuses a
//! `Host` or an `Origin` that is not loopback (DNS rebinding, web pages).
//! A refused request closes its connection, so a client without the token
//! cannot hold a slot; headers (the first ones, and the next request's on
//! a kept-alive connection) must arrive within [`HEADER_TIMEOUT`].

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::header::{
    AUTHORIZATION, CONNECTION, CONTENT_LENGTH, HeaderMap, HeaderValue, WWW_AUTHENTICATE,
};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::PATH;

use super::handler::{Handler, Peers, announce_tool_changes};
use super::sessions::{Sessions, expire_idle, tell_open_sessions};
use crate::client::ClientKind;
use crate::listen::{HttpPort, Listener};
use crate::peer::Connection as PeerConnection;
use crate::state::State;

/// Most connections open at once; more get a 503. HTTP clients keep a few
/// connections alive each.
pub const MAX_CONNECTIONS: usize = 128;
/// A request's headers must arrive within this; it also closes a
/// connection that never sends a byte, or idles between requests (longer
/// than the npm and Python SDKs keep idle connections, so they close first).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest request body; a larger one gets 413 (from its `Content-Length`
/// before any of it is read, else once the cap is passed).
pub const MAX_BODY_BYTES: usize = 16 << 20;
/// The only `Origin`s (browsers send one) let through: loopback pages.
const LOOPBACK_ORIGINS: &[&str] = &[
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

type Body = BoxBody<Bytes, Infallible>;

/// What a listener serves.
#[derive(Debug, Clone, Copy)]
pub enum Serving {
    /// The MCP endpoint every MCP client may use.
    Mcp,
    /// The IDE companion protocol for one CLI (Gemini CLI, Qwen Code): the
    /// same tools plus its own; a session ends when its event stream does.
    Companion(ClientKind),
}

/// The MCP endpoint, or one companion CLI's port. A session idle for
/// `session_idle` with no stream open is closed; `None`: only when the
/// cap needs its place (see [`super::sessions`]).
pub fn listener(
    port: TcpListener,
    state: Arc<State>,
    session_idle: Option<Duration>,
    serving: Serving,
) -> Listener<HttpPort, impl FnMut(TcpStream) -> Connection + Send + 'static> {
    let mut sessions = LocalSessionManager::default();
    // rmcp's own idle timeout would close a session whose client listens
    // on an open stream: ours spares those.
    sessions.session_config.keep_alive = None;
    let mut config = service_config();
    if let Serving::Companion(_) = serving {
        // The SDK Gemini CLI and Qwen Code bundle parses every event's data
        // as JSON: an SSE priming event (empty data) breaks its connection.
        sessions.session_config.sse_retry = None;
        config = config.with_sse_retry(None);
    }
    let sessions = Arc::new(Sessions::new(sessions, session_idle));
    let token: Arc<str> = state.token().into();
    let peers = Peers::default();
    let name = match serving {
        Serving::Mcp => "MCP",
        Serving::Companion(kind) => kind.as_str(),
    };
    let ended = Ended {
        sessions: config.cancellation_token.clone(),
        tasks: vec![
            crate::task::spawn(announce_tool_changes(state.clone(), peers.clone())),
            crate::task::spawn(expire_idle(Arc::downgrade(&sessions))),
            crate::task::spawn(tell_open_sessions(
                state.editor().clone(),
                name,
                sessions.watch_open(),
            )),
        ],
    };
    let handler = Handler {
        state,
        peers,
        companion: None,
    };
    // A companion session ends when its event stream does.
    let close_on_stream_end = match serving {
        Serving::Mcp => None,
        Serving::Companion(_) => Some(sessions.clone()),
    };
    let service = StreamableHttpService::new(
        move || {
            Ok(match serving {
                Serving::Mcp => handler.clone(),
                Serving::Companion(kind) => handler.for_companion(kind),
            })
        },
        sessions,
        config,
    );
    Listener {
        name,
        cap: MAX_CONNECTIONS,
        source: HttpPort(port),
        handler: move |stream| {
            // Dropped with the listener, once it accepts no more.
            let _ = &ended;
            Connection {
                stream,
                service: service.clone(),
                token: token.clone(),
                close_on_stream_end: close_on_stream_end.clone(),
            }
        },
    }
}

/// Ends rmcp's sessions and the endpoint's tasks (tool-change
/// announcements, expiry, the count for the person) when the listener
/// stops.
struct Ended {
    sessions: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Ended {
    fn drop(&mut self) {
        self.sessions.cancel();
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// rmcp's settings: loopback `Host`s (its default) and `Origin`s, the body cap.
pub fn service_config() -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default()
        .with_allowed_origins(LOOPBACK_ORIGINS.iter().copied())
        .with_max_request_body_bytes(MAX_BODY_BYTES)
}

/// One HTTP connection, served by hyper; every request screened first.
/// With `close_on_stream_end`, a session ends when its event stream (the
/// `GET` that carries notifications) does.
pub struct Connection {
    stream: TcpStream,
    service: StreamableHttpService<Handler, Sessions>,
    token: Arc<str>,
    close_on_stream_end: Option<Arc<Sessions>>,
}

impl crate::listen::Handler for Connection {
    async fn run(self, shutdown: watch::Receiver<bool>) {
        let Connection {
            stream,
            service,
            token,
            close_on_stream_end,
        } = self;
        let _ = stream.set_nodelay(true);
        serve_connection(stream, service, token, close_on_stream_end, shutdown).await;
    }
}

async fn serve_connection(
    stream: TcpStream,
    service: StreamableHttpService<Handler, Sessions>,
    token: Arc<str>,
    close_on_stream_end: Option<Arc<Sessions>>,
    mut shutdown: watch::Receiver<bool>,
) {
    // Which process asks, for the tools that need it (an edit's diffs go
    // back to the agent terminal that asked).
    let caller = match (stream.peer_addr(), stream.local_addr()) {
        (Ok(peer), Ok(local)) => Some(PeerConnection { peer, local }),
        _ => None,
    };
    let serve = hyper::service::service_fn(move |mut request: Request<Incoming>| {
        if let Some(caller) = caller {
            request.extensions_mut().insert(caller);
        }
        let service = service.clone();
        let token = token.clone();
        let close_on_stream_end = close_on_stream_end.clone();
        async move {
            let closing = request.method() == hyper::Method::DELETE;
            let stream_of = close_on_stream_end
                .filter(|_| opens_event_stream(&request))
                .zip(session_id(&request));
            let mut response = match refusal(&request, &token) {
                Some(response) => response,
                None => service.handle(request).await,
            };
            if let Some((sessions, id)) = stream_of
                && response.status() == StatusCode::OK
            {
                response = super::stream_end::close_session_after(response, sessions, id);
            }
            // rmcp answers a closed session 202; the Python SDK
            // warns on anything but 200 or 204.
            if closing && response.status() == StatusCode::ACCEPTED {
                *response.status_mut() = StatusCode::NO_CONTENT;
            }
            // Refused: the connection goes (nothing left to read of a
            // too-large body, no slot kept by a client without the token).
            if response.status().is_client_error() {
                response
                    .headers_mut()
                    .insert(CONNECTION, HeaderValue::from_static("close"));
            }
            Ok::<_, Infallible>(response)
        }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(stream), serve);
    tokio::select! {
        result = connection => if let Err(error) = result {
            tracing::debug!("mcp connection ended: {error}");
        },
        _ = shutdown.changed() => {}
    }
}

/// What the endpoint answers `request` with (its status) before any tool
/// runs: our checks, then rmcp's, in front of a handler that serves
/// nothing. For the fuzz targets.
#[cfg(feature = "fuzzing")]
pub async fn screen<B>(request: Request<B>, token: &str) -> u16
where
    B: hyper::body::Body + Send + 'static,
    B::Error: std::fmt::Display,
{
    #[derive(Clone)]
    struct Nothing;
    impl rmcp::ServerHandler for Nothing {}
    if let Some(response) = refusal(&request, token) {
        return response.status().as_u16();
    }
    let service: StreamableHttpService<Nothing, LocalSessionManager> =
        StreamableHttpService::new(|| Ok(Nothing), Default::default(), service_config());
    service.handle(request).await.status().as_u16()
}

/// Why a request is refused before rmcp sees it, as the response.
fn refusal<B>(request: &Request<B>, token: &str) -> Option<Response<Body>> {
    let headers = request.headers();
    if !authorized(headers, token) {
        let mut response = plain(
            StatusCode::UNAUTHORIZED,
            "Unauthorized: send Authorization: Bearer <authToken of the lockfile>",
        );
        response.headers_mut().insert(
            WWW_AUTHENTICATE,
            hyper::header::HeaderValue::from_static("Bearer"),
        );
        return Some(response);
    }
    if request.uri().path() != PATH {
        return Some(plain(
            StatusCode::NOT_FOUND,
            "Not Found: the endpoint is /mcp",
        ));
    }
    if declared_length(headers).is_some_and(|length| length > MAX_BODY_BYTES as u64) {
        return Some(plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            "Payload Too Large: requests are at most 16 MiB",
        ));
    }
    None
}

/// Whether `request` opens (or resumes) a session's event stream, the one
/// that carries notifications: a `GET` without `Last-Event-ID`, or
/// resuming an event of that stream (`<index>`). A `GET` resuming a
/// request's own stream (`<index>/<request>`, as the npm SDK does a few
/// seconds after `initialize`) is not it, and its end ends nothing.
fn opens_event_stream<B>(request: &Request<B>) -> bool {
    if request.method() != hyper::Method::GET {
        return false;
    }
    match request.headers().get("last-event-id") {
        None => true,
        Some(id) => !id.as_bytes().contains(&b'/'),
    }
}

/// The `mcp-session-id` a request names.
fn session_id<B>(request: &Request<B>) -> Option<Arc<str>> {
    let value = request.headers().get("mcp-session-id")?.to_str().ok()?;
    Some(value.into())
}

/// The body length a request announces, if it does.
fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// `Authorization: Bearer <token>`, the scheme in any case.
fn authorized(headers: &HeaderMap, token: &str) -> bool {
    let Some(value) = headers.get(AUTHORIZATION) else {
        return false;
    };
    let value = value.as_bytes();
    let Some(space) = value.iter().position(|b| *b == b' ') else {
        return false;
    };
    let (scheme, rest) = value.split_at(space);
    let given = rest.trim_ascii();
    scheme.eq_ignore_ascii_case(b"bearer") && crate::auth::tokens_match(token, given)
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive_and_the_token_exact() {
        let ok = |v: &str| authorized(&headers(&[("authorization", v)]), "secret");
        assert!(ok("Bearer secret"));
        assert!(ok("bearer secret"));
        assert!(ok("BEARER  secret "));
        assert!(!ok("Bearer secre"));
        assert!(!ok("Basic secret"));
        assert!(!ok("secret"));
        assert!(!authorized(&HeaderMap::new(), "secret"));
    }
}
