//! Accepts connections on loopback and serves each with hyper. A request
//! reaches rmcp only with the lockfile's token as a bearer token, no
//! foreign `Origin`, and the right path; rmcp itself refuses a `Host` that
//! is not loopback (DNS rebinding).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, HeaderMap, ORIGIN, WWW_AUTHENTICATE};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};

use super::PATH;
use super::handler::{Handler, Peers, announce_tool_changes};
use crate::state::State;

type Body = BoxBody<Bytes, Infallible>;
type Service = StreamableHttpService<Handler, LocalSessionManager>;

/// Serves until `shutdown` changes; `done` is held while connections run.
/// A session idle for `session_idle` is closed; `None`: never (an agent
/// idle for an hour keeps its session).
pub async fn serve(
    listener: TcpListener,
    state: Arc<State>,
    session_idle: Option<Duration>,
    mut shutdown: watch::Receiver<bool>,
    done: mpsc::Sender<()>,
) {
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = session_idle;
    let config = StreamableHttpServerConfig::default();
    let cancel = config.cancellation_token.clone();
    let token: Arc<str> = state.token.as_str().into();
    let peers = Peers::default();
    let announcing = tokio::spawn(announce_tool_changes(state.clone(), peers.clone()));
    let handler = Handler { state, peers };
    let service: Service =
        StreamableHttpService::new(move || Ok(handler.clone()), Arc::new(sessions), config);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(connection(
                        stream,
                        service.clone(),
                        token.clone(),
                        shutdown.clone(),
                        done.clone(),
                    ));
                }
                Err(error) => {
                    tracing::warn!("mcp accept failed: {error}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            _ = shutdown.changed() => break,
        }
    }
    cancel.cancel();
    announcing.abort();
}

async fn connection(
    stream: tokio::net::TcpStream,
    service: Service,
    token: Arc<str>,
    mut shutdown: watch::Receiver<bool>,
    _done: mpsc::Sender<()>,
) {
    let serve = hyper::service::service_fn(move |request: Request<Incoming>| {
        let service = service.clone();
        let token = token.clone();
        async move {
            let closing = request.method() == hyper::Method::DELETE;
            Ok::<_, Infallible>(match refusal(&request, &token) {
                Some(response) => response,
                None => {
                    let mut response = service.handle(request).await;
                    // rmcp answers a closed session 202; the Python SDK
                    // warns on anything but 200 or 204.
                    if closing && response.status() == StatusCode::ACCEPTED {
                        *response.status_mut() = StatusCode::NO_CONTENT;
                    }
                    response
                }
            })
        }
    });
    let connection =
        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), serve);
    tokio::select! {
        result = connection => if let Err(error) = result {
            tracing::debug!("mcp connection ended: {error}");
        },
        _ = shutdown.changed() => {}
    }
}

/// Why a request is refused before rmcp sees it, as the response.
fn refusal<B>(request: &Request<B>, token: &str) -> Option<Response<Body>> {
    let headers = request.headers();
    if !origin_allowed(headers) {
        return Some(plain(StatusCode::FORBIDDEN, "Forbidden: foreign Origin"));
    }
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
    None
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

/// No `Origin` (not a browser), or a loopback one.
fn origin_allowed(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let Some(authority) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.split(':').next().unwrap_or(""),
    };
    let port_ok = match authority
        .rsplit_once(']')
        .map_or(authority, |(_, rest)| rest)
        .rsplit_once(':')
    {
        Some((_, port)) => port.parse::<u16>().is_ok(),
        None => true,
    };
    port_ok && matches!(host, "localhost" | "127.0.0.1" | "::1")
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

    #[test]
    fn only_loopback_origins_pass() {
        let ok = |v: &str| origin_allowed(&headers(&[("origin", v)]));
        assert!(origin_allowed(&HeaderMap::new()));
        assert!(ok("http://localhost:3000"));
        assert!(ok("http://127.0.0.1"));
        assert!(ok("https://[::1]:8443"));
        assert!(!ok("https://evil.example"));
        assert!(!ok("http://127.0.0.1.evil.example"));
        assert!(!ok("http://localhost@evil.example"));
        assert!(!ok("null"));
    }
}
