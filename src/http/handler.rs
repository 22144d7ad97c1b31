//! rmcp's view of the project tools: lists them and runs calls, all in
//! [`crate::project`].

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation,
    ListToolsResult, PaginatedRequestParams, ResultType, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::Value;

use crate::state::State;

#[derive(Clone)]
pub struct Handler {
    pub state: Arc<State>,
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "pi-ide.nvim",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "Neovim's view of this project: open files, buffer text with unsaved edits, \
                 problems. Paths are relative to the project root; lines and columns are 1-based.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = crate::project::list()
            .into_iter()
            .map(serde_json::from_value::<Tool>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ErrorData::internal_error(format!("bad tool schema: {e}"), None))?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request
            .arguments
            .map_or_else(|| Value::Object(Default::default()), Value::Object);
        let Some(result) = crate::project::call(&self.state, &request.name, arguments).await else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {}", request.name),
                None,
            ));
        };
        let mut result: CallToolResult = serde_json::from_value(result)
            .map_err(|e| ErrorData::internal_error(format!("bad tool result: {e}"), None))?;
        // The stateless 2026-07-28 protocol requires it (the Python SDK
        // refuses a result without it); rmcp strips it for older peers.
        result.result_type = Some(ResultType::COMPLETE);
        Ok(result.into())
    }
}
