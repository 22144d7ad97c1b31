//! Ends a companion session when its event stream ends. Gemini CLI and
//! Qwen Code keep one `GET` stream open for notifications and never close
//! their session when they exit: the stream's connection closing is how
//! the editor learns they are gone (so their diffs close, their edits kept).

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::Response;
use hyper::body::{Body, Frame, SizeHint};
use rmcp::transport::streamable_http_server::session::SessionManager;

use super::sessions::Sessions;

type Boxed = BoxBody<Bytes, Infallible>;

/// `response` (a session's event stream) with session `id` closed once
/// hyper lets go of its body: the client went away, or the host stops.
pub fn close_session_after(
    response: Response<Boxed>,
    sessions: Arc<Sessions>,
    id: Arc<str>,
) -> Response<Boxed> {
    response.map(|inner| {
        Watched {
            inner,
            closer: Closer { sessions, id },
        }
        .boxed()
    })
}

struct Watched {
    inner: Boxed,
    #[allow(dead_code)]
    closer: Closer,
}

impl Body for Watched {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

struct Closer {
    sessions: Arc<Sessions>,
    id: Arc<str>,
}

impl Drop for Closer {
    fn drop(&mut self) {
        let sessions = self.sessions.clone();
        let id = self.id.clone();
        tracing::debug!("a companion event stream ended: closing its session");
        crate::task::spawn(async move {
            if let Err(error) = sessions.close_session(&id.to_string().into()).await {
                tracing::debug!("closing the session: {error}");
            }
        });
    }
}
