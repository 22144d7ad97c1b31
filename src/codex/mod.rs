//! What Codex CLI's IDE channel carries ([`crate::codex_ipc`] frames it):
//! requests `{type: "request", requestId, method, params}` answered by
//! `{type: "response", requestId, resultType: "success" | "error", result
//! | error}`.
//!
//! * `initialize` → `{clientId}` (Codex 0.169 no longer sends it; older
//!   ones do).
//! * `ide-context {workspaceRoot}` → `{ideContext}`: the active file, its
//!   selection and the files worked in lately ([`context`]), from what the
//!   host keeps: no call into Neovim per prompt.
//! * `pi-ide/review-patch {cwd, patch}` → the person's decision on an
//!   `apply_patch` ([`review`]), asked by `pi-ide codex-hook`.
//!
//! * [`messages`] – requests read, responses written.
//! * [`context`]  – `ide-context`, and keeping where the person is.
//! * [`patch`]    – Codex's patch format read, applied and written.
//! * [`review`]   – a patch shown in the review, the decision told.

pub mod context;
pub mod messages;
pub mod patch;
pub mod review;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use serde_json::json;

use crate::state::State;
use messages::Request;

/// Numbers the client ids `initialize` hands out.
static CLIENTS: AtomicU64 = AtomicU64::new(0);

/// The answer to `request` from process `pid`, as a frame's bytes.
pub async fn answer(state: &Arc<State>, request: Request, pid: Option<u32>) -> Bytes {
    let answer = match request.method.as_str() {
        "initialize" => {
            let n = CLIENTS.fetch_add(1, Ordering::Relaxed) + 1;
            Ok(json!({"clientId": format!("neovim-{}-{n}", std::process::id())}))
        }
        "ide-context" => {
            context::answer(state, &request.params).map(|context| json!({"ideContext": context}))
        }
        review::METHOD => Ok(review::answer(state, &request.params, pid).await),
        _ => Err(messages::NO_HANDLER),
    };
    messages::response(&request, answer)
}
