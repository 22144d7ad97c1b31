//! rmcp's view of the project tools: lists them and runs calls, all in
//! [`crate::mcp_http`] (and, on a companion endpoint, the companion's own,
//! [`super::companion`]: one handler type for both, so rmcp's generic
//! server is compiled once), and tells every open session when the tools a
//! config registered change (`notifications/tools/list_changed`). A call
//! that waits (for the person's approval, or a
//! slow language server) tells a client that gave a progress token it is
//! still alive, so clients that reset their timeouts on progress keep
//! waiting; a cancelled call is dropped, which closes the diffs it opened.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ResultType,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::{RoleServer, ServerHandler};
use serde_json::Value;

use super::companion::Companion;
use crate::client::ClientKind;
use crate::mutex::lock;
use crate::peer::Connection;
use crate::state::State;

#[derive(Clone)]
pub struct Handler {
    pub state: Arc<State>,
    /// Every session's client, to tell them the tool list changed.
    pub peers: Peers,
    /// The session, on a companion endpoint (Gemini CLI, Qwen Code).
    pub companion: Option<Companion>,
}

impl Handler {
    /// The handler of a new session of a companion endpoint for `kind`.
    pub fn for_companion(&self, kind: ClientKind) -> Self {
        Handler {
            companion: Some(Companion::new(self.state.clone(), kind)),
            ..self.clone()
        }
    }
}

/// The clients of the sessions that initialized (stateless requests have
/// none to tell).
#[derive(Clone, Default)]
pub struct Peers(Arc<Mutex<Vec<Peer<RoleServer>>>>);

impl Peers {
    fn add(&self, peer: Peer<RoleServer>) {
        let mut peers = lock(&self.0);
        peers.retain(|known| !known.is_transport_closed());
        peers.push(peer);
    }

    /// Sends `notifications/tools/list_changed` to every session still open.
    async fn tools_changed(&self) {
        let peers: Vec<Peer<RoleServer>> = {
            let mut peers = lock(&self.0);
            peers.retain(|known| !known.is_transport_closed());
            peers.clone()
        };
        for peer in peers {
            if let Err(error) = peer.notify_tool_list_changed().await {
                tracing::debug!("tools/list_changed not sent: {error}");
            }
        }
    }
}

/// Tells the sessions' clients whenever the registered tools change, until
/// the state goes away.
pub async fn announce_tool_changes(state: Arc<State>, peers: Peers) {
    let mut changes = state.user_tools().watch();
    drop(state);
    while changes.changed().await.is_ok() {
        peers.tools_changed().await;
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new(
            "pi-ide.nvim",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(
            "Neovim's view of this project: open files, buffer text with unsaved edits, \
                 problems. Paths are relative to the project root; lines and columns are 1-based.",
        )
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Some(companion) = &self.companion {
            companion.initialized(&context);
        }
        self.peers.add(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut listed = match self.companion {
            Some(_) => Companion::tools(),
            None => Vec::new(),
        };
        listed.extend(crate::mcp_http::list(&self.state));
        // One tool rmcp cannot take is left out, never the whole list.
        let mut tools = Vec::with_capacity(listed.len());
        for tool in listed {
            let name = tool["name"].to_string();
            match serde_json::from_value::<Tool>(tool) {
                Ok(tool) => tools.push(tool),
                Err(error) => tracing::warn!("tool {name} not listed: {error}"),
            }
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request
            .arguments
            .map_or_else(|| Value::Object(Default::default()), Value::Object);
        if let Some(companion) = &self.companion
            && let Some(tool) = Companion::own(&request.name)
        {
            let result = companion.call(tool, arguments).await;
            return result.and_then(complete).map(Into::into);
        }
        let waits = crate::mcp_http::offered(&self.state, &request.name)
            .is_some_and(|tool| tool.spec().waits_for_the_person);
        // rmcp hands over the HTTP request's parts, our extensions included.
        let caller = context
            .extensions
            .get::<hyper::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Connection>())
            .copied();
        let call = crate::mcp_http::call(&self.state, &request.name, arguments, caller);
        let Some(outcome) = with_progress(call, &context, waits).await else {
            return Err(ErrorData::internal_error("the call was cancelled", None));
        };
        let Some(result) = outcome else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {}", request.name),
                None,
            ));
        };
        complete(result).map(Into::into)
    }
}

/// A tool's result as rmcp sends it.
fn complete(result: Value) -> Result<CallToolResult, ErrorData> {
    let mut result: CallToolResult = serde_json::from_value(result)
        .map_err(|e| ErrorData::internal_error(format!("bad tool result: {e}"), None))?;
    // The stateless 2026-07-28 protocol requires it (the Python SDK
    // refuses a result without it); rmcp strips it for older peers.
    result.result_type = Some(ResultType::COMPLETE);
    Ok(result)
}

/// How often a waiting call sends `notifications/progress`.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// Runs `work`, sending a progress notification every [`PROGRESS_EVERY`]
/// while it runs when the request carries `_meta.progressToken`; `None`
/// when the client cancelled the request (`work` is dropped then).
async fn with_progress<F: Future>(
    work: F,
    context: &RequestContext<RoleServer>,
    waits_for_the_person: bool,
) -> Option<F::Output> {
    let token = context.meta.get_progress_token();
    let started = tokio::time::Instant::now();
    let mut ticks = tokio::time::interval_at(started + PROGRESS_EVERY, PROGRESS_EVERY);
    let mut sent = 0u32;
    tokio::pin!(work);
    loop {
        tokio::select! {
            output = &mut work => return Some(output),
            _ = context.ct.cancelled() => return None,
            _ = ticks.tick(), if token.is_some() => {
                sent += 1;
                let Some(token) = token.clone() else { continue };
                let waited = started.elapsed().as_secs();
                let param = ProgressNotificationParam::new(token, f64::from(sent))
                    .with_message(match waits_for_the_person {
                        true => format!("waiting {waited} s for the person to accept or reject in Neovim (:PiIde diff shows an edit)"),
                        false => format!("still working after {waited} s"),
                    });
                if let Err(error) = context.peer.notify_progress(param).await {
                    tracing::debug!("progress notification not sent: {error}");
                }
            }
        }
    }
}
