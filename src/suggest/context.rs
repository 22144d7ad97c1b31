//! Tree-sitter context for a suggestion request, from the host's mirror of
//! the buffer; the first request in a buffer attaches the mirror.

use crate::nvim::seam::SuggestRequest;
use crate::outline::worker::{Command, Lookup};
use crate::outline::{Context, OUTLINE_BYTES};
use crate::state::State;

/// Outline, scope and comment flag from the host's mirror of the buffer,
/// attaching to the buffer on its first request.
pub async fn tree_context(state: &State, request: &SuggestRequest) -> Option<Context> {
    let ask = || {
        state.outline().context(
            request.buf,
            request.row,
            request.col,
            &request.filetype,
            OUTLINE_BYTES,
        )
    };
    match ask().await {
        Lookup::Ready(context) => context,
        Lookup::Pending => None,
        Lookup::Attach => {
            match state.editor().attach_buffer(request.buf).await {
                Ok((lines, tick)) => state.outline().send(Command::Load {
                    buf: request.buf,
                    tick,
                    filetype: request.filetype.clone(),
                    lines,
                }),
                Err(error) => {
                    tracing::warn!("cannot attach buffer {}: {error}", request.buf);
                    state.outline().send(Command::Detach { buf: request.buf });
                }
            }
            match ask().await {
                Lookup::Ready(context) => context,
                _ => None,
            }
        }
    }
}
