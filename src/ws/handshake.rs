//! The HTTP upgrade: the token is checked here, so a stranger never gets a
//! WebSocket. Claude Code needs `Sec-WebSocket-Protocol: mcp` echoed; pi
//! offers no subprotocol, so none is required.

use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode, header};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{WebSocketStream, accept_hdr_async_with_config};

use super::MAX_MESSAGE_BYTES;
use crate::auth::{kind_for_header, tokens_match};
use crate::client::ClientKind;

pub async fn accept(
    stream: TcpStream,
    token: &str,
) -> Result<(WebSocketStream<TcpStream>, ClientKind), tokio_tungstenite::tungstenite::Error> {
    let mut kind = None;
    // The callback's signature is tungstenite's; the large error is its HTTP response.
    #[allow(clippy::result_large_err)]
    let callback = |request: &Request, mut response: Response| -> Result<Response, ErrorResponse> {
        kind = Some(authenticate(request, token).ok_or_else(unauthorized)?);
        if offers_mcp(request) {
            response.headers_mut().insert(
                header::SEC_WEBSOCKET_PROTOCOL,
                HeaderValue::from_static("mcp"),
            );
        }
        Ok(response)
    };
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES));
    let ws = accept_hdr_async_with_config(stream, callback, Some(config)).await?;
    let kind = kind.ok_or(tokio_tungstenite::tungstenite::Error::ConnectionClosed)?;
    Ok((ws, kind))
}

/// The client kind whose header carries the right token, if any.
fn authenticate(request: &Request, token: &str) -> Option<ClientKind> {
    // Browsers cannot set our headers, but refuse web pages outright anyway.
    if let Some(origin) = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|o| o.to_str().ok())
        && (origin.starts_with("http://") || origin.starts_with("https://"))
    {
        tracing::warn!("refused a handshake with a web Origin");
        return None;
    }
    for (name, value) in request.headers() {
        if let Some(kind) = kind_for_header(name.as_str())
            && tokens_match(token, value.as_bytes())
        {
            return Some(kind);
        }
    }
    tracing::warn!("refused a handshake without a valid token");
    None
}

fn offers_mcp(request: &Request) -> bool {
    request
        .headers()
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|protocol| protocol.trim() == "mcp")
}

fn unauthorized() -> ErrorResponse {
    let mut response = ErrorResponse::new(Some("unauthorized\n".to_owned()));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response
}
