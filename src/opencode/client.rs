//! Requests to opencode's server on 127.0.0.1:<port>, with the basic-auth
//! password its TUI was started with: one HTTP/1 connection per request
//! (hyper's client), bounded in time except for the event stream, each
//! sent only once the server's end is known to be this user's
//! ([`super::owner`]).

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;

use super::events::EventStream;

/// How long one request (not the event stream) may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest answer read.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// One opencode server.
pub struct Server {
    port: u16,
    /// `Basic <base64 of opencode:password>`; never logged.
    authorization: String,
}

impl Server {
    pub fn new(port: u16, password: &str) -> Server {
        Server {
            port,
            authorization: format!(
                "Basic {}",
                base64(format!("opencode:{password}").as_bytes())
            ),
        }
    }

    async fn send(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<hyper::Response<hyper::body::Incoming>, String> {
        let stream = TcpStream::connect(("127.0.0.1", self.port))
            .await
            .map_err(|e| format!("cannot reach opencode on port {}: {e}", self.port))?;
        // Before the password goes: the port may be another user's.
        super::owner::check(&stream).await?;
        let _ = stream.set_nodelay(true);
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
        crate::task::spawn(async move {
            let _ = connection.await;
        });
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("opencode answered {}", response.status()));
        }
        Ok(response)
    }

    fn request(
        &self,
        method: &str,
        path: &str,
        body: Bytes,
    ) -> Result<Request<Full<Bytes>>, String> {
        Request::builder()
            .method(method)
            .uri(path)
            .header("host", format!("127.0.0.1:{}", self.port))
            .header("authorization", &self.authorization)
            .header("content-type", "application/json")
            .body(Full::new(body))
            .map_err(|e| e.to_string())
    }

    /// The server's `/global/event` stream: every instance's events, each
    /// `{directory, payload}` (an instance's own `/event` can be one that
    /// its TUI replaced while starting, and then hears nothing).
    pub async fn events(&self) -> Result<EventStream, String> {
        let mut request = self.request("GET", "/global/event", Bytes::new())?;
        request.headers_mut().insert(
            "accept",
            hyper::header::HeaderValue::from_static("text/event-stream"),
        );
        let response = tokio::time::timeout(REQUEST_TIMEOUT, self.send(request))
            .await
            .map_err(|_| "no answer to /global/event".to_owned())??;
        Ok(EventStream::new(response.into_body()))
    }

    /// GETs `path`; the answer as JSON (null when it is none).
    pub async fn get(&self, path: &str) -> Result<Value, String> {
        self.exchange(self.request("GET", path, Bytes::new())?, path)
            .await
    }

    /// POSTs `body` to `path`; the answer as JSON (null when it is none).
    pub async fn post(&self, path: &str, body: &Value) -> Result<Value, String> {
        let request = self.request("POST", path, Bytes::from(body.to_string()))?;
        self.exchange(request, path).await
    }

    async fn exchange(&self, request: Request<Full<Bytes>>, path: &str) -> Result<Value, String> {
        let exchange = async {
            let response = self.send(request).await?;
            let body = http_body_util::Limited::new(response.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|e| e.to_string())?
                .to_bytes();
            Ok::<_, String>(serde_json::from_slice(&body).unwrap_or(Value::Null))
        };
        tokio::time::timeout(REQUEST_TIMEOUT, exchange)
            .await
            .map_err(|_| {
                format!(
                    "opencode did not answer {path} within {} s",
                    REQUEST_TIMEOUT.as_secs()
                )
            })?
    }
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
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

    #[test]
    fn base64_as_basic_auth_wants_it() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"opencode:s3cret"), "b3BlbmNvZGU6czNjcmV0");
    }
}
