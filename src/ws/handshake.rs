//! The HTTP upgrade: the token is checked here, so a stranger never gets a
//! WebSocket. Claude Code needs `Sec-WebSocket-Protocol: mcp` echoed; pi
//! offers no subprotocol, so none is required. No extension is accepted
//! (permessage-deflate is not implemented).

use sha1::{Digest, Sha1};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::auth::{kind_for_header, tokens_match};
use crate::client::ClientKind;

/// Most bytes of request headers read before the request is refused.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
const MAX_HEADERS: usize = 64;
/// RFC 6455 1.3: appended to the client's key before hashing.
const ACCEPT_GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

const UNAUTHORIZED: &[u8] = b"HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\n\
Content-Length: 13\r\nConnection: close\r\n\r\nunauthorized\n";
const BAD_REQUEST: &[u8] = b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n\
Content-Length: 29\r\nConnection: close\r\n\r\nexpected a WebSocket upgrade\n";

/// An upgraded connection: who it is, and the bytes the client sent
/// after its request (frames it did not wait to send).
pub struct Upgraded {
    pub kind: ClientKind,
    pub early: Vec<u8>,
}

/// Why the handshake ended without a WebSocket.
#[derive(Debug)]
pub enum Failed {
    /// The connection closed or broke.
    Io(std::io::Error),
    /// The request was refused; the answer is written.
    Refused(&'static str),
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::Io(error) => write!(f, "{error}"),
            Failed::Refused(why) => f.write_str(why),
        }
    }
}

pub async fn accept(stream: &mut TcpStream, token: &str) -> Result<Upgraded, Failed> {
    let mut buf = Vec::with_capacity(1024);
    let header_end = loop {
        if let Some(end) = find_header_end(&buf) {
            break end;
        }
        if buf.len() >= MAX_HEADER_BYTES {
            return refuse(stream, BAD_REQUEST, "request headers too long").await;
        }
        let mut chunk = [0u8; 2048];
        let read = stream.read(&mut chunk).await.map_err(Failed::Io)?;
        if read == 0 {
            return Err(Failed::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        buf.extend_from_slice(&chunk[..read]);
    };
    match answer(&buf[..header_end], token) {
        Ok((kind, response)) => {
            stream
                .write_all(response.as_bytes())
                .await
                .map_err(Failed::Io)?;
            Ok(Upgraded {
                kind,
                early: buf[header_end..].to_vec(),
            })
        }
        Err(Refusal::Unauthorized) => refuse(stream, UNAUTHORIZED, "no valid token").await,
        Err(Refusal::BadRequest(why)) => refuse(stream, BAD_REQUEST, why).await,
    }
}

async fn refuse(
    stream: &mut TcpStream,
    answer: &[u8],
    why: &'static str,
) -> Result<Upgraded, Failed> {
    let _ = stream.write_all(answer).await;
    let _ = stream.shutdown().await;
    Err(Failed::Refused(why))
}

/// Where the request's headers end (after the blank line), if they have.
fn find_header_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| at + 4)
}

#[derive(Debug, PartialEq)]
pub enum Refusal {
    Unauthorized,
    BadRequest(&'static str),
}

/// The client kind and the `101` response for a request's header bytes.
pub fn answer(head: &[u8], token: &str) -> Result<(ClientKind, String), Refusal> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err(Refusal::BadRequest("not an HTTP request")),
    }
    if request.method != Some("GET") {
        return Err(Refusal::BadRequest("not a GET"));
    }
    let value = |name: &str| {
        request
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .and_then(|h| std::str::from_utf8(h.value).ok())
    };
    let lists = |name: &str, wanted: &str| {
        request
            .headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case(name))
            .filter_map(|h| std::str::from_utf8(h.value).ok())
            .flat_map(|v| v.split(','))
            .any(|item| item.trim().eq_ignore_ascii_case(wanted))
    };
    if !lists("upgrade", "websocket") || !lists("connection", "upgrade") {
        return Err(Refusal::BadRequest("not a WebSocket upgrade"));
    }
    if value("sec-websocket-version") != Some("13") {
        return Err(Refusal::BadRequest("not WebSocket version 13"));
    }
    let Some(key) = value("sec-websocket-key").map(str::trim) else {
        return Err(Refusal::BadRequest("no Sec-WebSocket-Key"));
    };
    // Browsers cannot set our headers, but refuse web pages outright anyway.
    if let Some(origin) = value("origin")
        && (origin.starts_with("http://") || origin.starts_with("https://"))
    {
        tracing::warn!("refused a handshake with a web Origin");
        return Err(Refusal::Unauthorized);
    }
    let Some(kind) = request
        .headers
        .iter()
        .find_map(|h| kind_for_header(h.name).filter(|_| tokens_match(token, h.value)))
    else {
        tracing::warn!("refused a handshake without a valid token");
        return Err(Refusal::Unauthorized);
    };
    let protocol = if lists("sec-websocket-protocol", "mcp") {
        "Sec-WebSocket-Protocol: mcp\r\n"
    } else {
        ""
    };
    let response = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {}\r\n{protocol}\r\n",
        accept_key(key.as_bytes())
    );
    Ok((kind, response))
}

/// `Sec-WebSocket-Accept` for a client's key: base64 of SHA-1(key + GUID).
fn accept_key(key: &[u8]) -> String {
    let digest = Sha1::new()
        .chain_update(key)
        .chain_update(ACCEPT_GUID)
        .finalize();
    base64(&digest)
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(extra: &str) -> String {
        format!(
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:1\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n\
             Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{extra}\r\n"
        )
    }

    #[test]
    fn the_accept_key_is_rfc_6455s_example() {
        assert_eq!(
            accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"a"), "YQ==");
    }

    #[test]
    fn the_token_decides_the_kind_and_mcp_is_echoed_only_when_offered() {
        let (kind, response) =
            answer(request("x-pi-ide-authorization: t\r\n").as_bytes(), "t").unwrap();
        assert_eq!(kind, ClientKind::Pi);
        assert!(response.starts_with("HTTP/1.1 101"));
        assert!(!response.contains("Sec-WebSocket-Protocol"));
        let claude =
            request("X-Claude-Code-Ide-Authorization: t\r\nSec-WebSocket-Protocol: foo, mcp\r\n");
        let (kind, response) = answer(claude.as_bytes(), "t").unwrap();
        assert_eq!(kind, ClientKind::Claude);
        assert!(response.contains("Sec-WebSocket-Protocol: mcp\r\n"));
        let deflate = request(
            "x-pi-ide-authorization: t\r\nSec-WebSocket-Extensions: permessage-deflate\r\n",
        );
        assert!(
            !answer(deflate.as_bytes(), "t")
                .unwrap()
                .1
                .contains("Extensions")
        );
    }

    #[test]
    fn strangers_and_non_upgrades_are_refused() {
        let cases = [
            (request(""), Refusal::Unauthorized),
            (
                request("x-pi-ide-authorization: wrong\r\n"),
                Refusal::Unauthorized,
            ),
            (
                request("x-pi-ide-authorization: t\r\nOrigin: https://example.com\r\n"),
                Refusal::Unauthorized,
            ),
            (
                "GET / HTTP/1.1\r\nHost: x\r\nx-pi-ide-authorization: t\r\n\r\n".to_owned(),
                Refusal::BadRequest("not a WebSocket upgrade"),
            ),
            (
                request("x-pi-ide-authorization: t\r\n").replace("Version: 13", "Version: 8"),
                Refusal::BadRequest("not WebSocket version 13"),
            ),
            (
                "\x16\x03\x01garbage\r\n\r\n".to_owned(),
                Refusal::BadRequest("not an HTTP request"),
            ),
        ];
        for (request, refusal) in cases {
            assert_eq!(
                answer(request.as_bytes(), "t").map(|(k, _)| k),
                Err(refusal),
                "{request}"
            );
        }
    }
}
