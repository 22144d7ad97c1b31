//! The context/review protocol: what pi's `ide` extension speaks over the
//! context/review socket: newline-delimited JSON objects, no ids. The IDE
//! greets (`hello`), pushes where the person is (`context`) and runs review
//! sessions (`{files}` in, one `reviewResult` out). The transport is
//! [`crate::socket`]; this module knows nothing about sockets.
//!
//! * [`messages`] – the JSON of each message, and what an incoming line is.
//! * [`context`]  – positions → `context` (1-based lines, root-relative
//!   file), pushed to every client only when it changed.
//! * [`review`]   – checking a review request, one review at a time, the
//!   result to the client that asked, exactly once.
//! * [`git_head`] – each reviewed file at git HEAD, read off the UI thread.

pub mod context;
pub mod git_head;
pub mod messages;
pub mod review;

use std::sync::Arc;

use crate::client::ClientId;
use crate::state::State;
use messages::Incoming;

/// A client connected (its `hello` is written): it gets the current context.
pub fn connected(state: &Arc<State>, client: ClientId) {
    let state = state.clone();
    crate::task::spawn(async move { context::send_current(&state, client).await });
}

/// One line from `client`. Nothing a client sends can break the socket
/// for others: what is not understood is logged and dropped.
pub fn receive(state: &Arc<State>, client: ClientId, line: &str) {
    match messages::parse(line) {
        Incoming::Review(files) => {
            let state = state.clone();
            crate::task::spawn(async move { review::request(&state, client, files).await });
        }
        Incoming::Ignored(why) => tracing::debug!("socket client {}: ignored {why}", client.0),
    }
}
