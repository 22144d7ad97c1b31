//! The HTTP upgrade, which tokio-tungstenite parses and answers: the
//! token is checked in its callback, so a stranger never gets a WebSocket.
//! Claude Code needs `Sec-WebSocket-Protocol: mcp` echoed; pi offers no
//! subprotocol, so none is required. No extension is accepted.

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode, header};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use super::MAX_MESSAGE_BYTES;
use crate::auth::tokens_match;
use crate::client::ClientKind;

/// Why a request that reached the callback gets no WebSocket.
#[derive(Debug, PartialEq)]
pub enum Refusal {
    /// No header carries the token, or the request comes from a web page.
    Unauthorized,
}

impl Refusal {
    fn response(&self) -> ErrorResponse {
        let mut response = ErrorResponse::new(Some("unauthorized\n".to_owned()));
        *response.status_mut() = StatusCode::UNAUTHORIZED;
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("13"));
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        response
    }
}

/// The caps every connection reads under: whole messages and single
/// frames up to [`MAX_MESSAGE_BYTES`], replies written as they are fed.
pub fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES))
}

/// Upgrades `stream` when its request carries the token; the client's kind
/// comes from the header that carried it.
pub async fn accept<S>(
    stream: S,
    token: &str,
) -> Result<(WebSocketStream<S>, ClientKind), tokio_tungstenite::tungstenite::Error>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut kind = None;
    // The callback's types are tungstenite's; its error is the response.
    #[allow(clippy::result_large_err)]
    let callback = |request: &Request, mut response: Response| match check(request, token) {
        Ok(client) => {
            kind = Some(client);
            if offers(request, header::SEC_WEBSOCKET_PROTOCOL, "mcp") {
                response.headers_mut().insert(
                    header::SEC_WEBSOCKET_PROTOCOL,
                    HeaderValue::from_static("mcp"),
                );
            }
            Ok(response)
        }
        Err(refusal) => Err(refusal.response()),
    };
    let ws =
        tokio_tungstenite::accept_hdr_async_with_config(stream, callback, Some(config())).await?;
    // The callback accepted the request, so it named the kind.
    Ok((ws, kind.unwrap_or(ClientKind::Pi)))
}

/// Which client a WebSocket upgrade request is from, if it may connect.
pub fn check(request: &Request, token: &str) -> Result<ClientKind, Refusal> {
    // Browsers cannot set our headers, but refuse web pages outright anyway.
    if let Some(origin) = request.headers().get(header::ORIGIN)
        && let Ok(origin) = origin.to_str()
        && (origin.starts_with("http://") || origin.starts_with("https://"))
    {
        tracing::warn!("refused a handshake with a web Origin");
        return Err(Refusal::Unauthorized);
    }
    let kind = request.headers().iter().find_map(|(name, value)| {
        ClientKind::for_header(name.as_str()).filter(|_| tokens_match(token, value.as_bytes()))
    });
    kind.ok_or_else(|| {
        tracing::warn!("refused a handshake without a valid token");
        Refusal::Unauthorized
    })
}

/// Whether a comma-separated header lists `wanted`.
fn offers(request: &Request, name: header::HeaderName, wanted: &str) -> bool {
    request
        .headers()
        .get_all(name)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|item| item.trim().eq_ignore_ascii_case(wanted))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(headers: &[(&str, &str)]) -> Request {
        let mut request = Request::builder().uri("/");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap()
    }

    #[test]
    fn the_token_decides_the_kind() {
        let pi = request(&[("x-pi-ide-authorization", "t")]);
        assert_eq!(check(&pi, "t"), Ok(ClientKind::Pi));
        let claude = request(&[("X-Claude-Code-Ide-Authorization", "t")]);
        assert_eq!(check(&claude, "t"), Ok(ClientKind::Claude));
    }

    #[test]
    fn mcp_is_found_among_the_offered_subprotocols() {
        let offered = request(&[("Sec-WebSocket-Protocol", "foo, mcp")]);
        assert!(offers(&offered, header::SEC_WEBSOCKET_PROTOCOL, "mcp"));
        let other = request(&[("Sec-WebSocket-Protocol", "mcpx")]);
        assert!(!offers(&other, header::SEC_WEBSOCKET_PROTOCOL, "mcp"));
    }

    #[test]
    fn strangers_and_web_pages_are_refused() {
        let cases = [
            request(&[]),
            request(&[("x-pi-ide-authorization", "wrong")]),
            request(&[
                ("x-pi-ide-authorization", "t"),
                ("Origin", "https://example.com"),
            ]),
        ];
        for request in cases {
            assert_eq!(check(&request, "t"), Err(Refusal::Unauthorized));
        }
    }
}
