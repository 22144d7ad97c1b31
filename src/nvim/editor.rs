//! Calls from the host into Neovim. Each runs in a task of its own and is
//! never cancelled: dropping a pending nvim-rs call kills the channel.

use nvim_rs::compat::tokio::Compat;
use nvim_rs::{Neovim, Value};
use serde_json::Value as Json;

use std::sync::Arc;

use super::batched::Batched;
use super::convert::{from_json, to_json};
use crate::selection::Positions;

pub type Nvim = Neovim<Compat<tokio::fs::File>>;

/// Handle on the Neovim that started us.
#[derive(Clone)]
pub struct Editor {
    nvim: Nvim,
    /// getDiagnostics calls in flight, by uri.
    diagnostics: Arc<Batched<Option<String>, Result<Json, String>>>,
}

impl Editor {
    pub fn new(nvim: Nvim) -> Self {
        Editor {
            nvim,
            diagnostics: Arc::default(),
        }
    }

    /// Runs `return require(module).function(...)`; Lua errors become `Err`.
    async fn call_lua(
        &self,
        module: &str,
        function: &str,
        args: Vec<Value>,
    ) -> Result<Value, String> {
        let code = format!("return require('{module}').{function}(...)");
        self.nvim
            .exec_lua(&code, args)
            .await
            .map_err(|error| lua_error_message(&error))
    }

    /// Fire-and-forget variant for pushes whose failure only deserves a log line.
    pub fn push(&self, module: &'static str, function: &'static str, args: Vec<Json>) {
        let editor = self.clone();
        tokio::spawn(async move {
            let args = args.iter().map(from_json).collect();
            if let Err(error) = editor.call_lua(module, function, args).await {
                tracing::warn!("{module}.{function} failed: {error}");
            }
        });
    }

    /// Opens the diff UI; `Err` carries the reason it could not be shown.
    pub async fn open_diff(&self, spec: Value) -> Result<(), String> {
        self.call_lua("pi-ide.diff", "_open", vec![spec])
            .await
            .map(|_| ())
    }

    /// Closes diff `id` without reporting a decision back.
    pub fn close_diff(&self, id: u64) {
        self.push("pi-ide.diff", "_close", vec![Json::from(id)]);
    }

    /// `[{uri, diagnostics: [...]}, ...]` for one uri or every buffer.
    /// Concurrent requests for the same uri share calls (see [`Batched`]).
    pub async fn diagnostics(&self, uri: Option<&str>) -> Result<Json, String> {
        let editor = self.clone();
        let key = uri.map(str::to_owned);
        let call = move || {
            let editor = editor.clone();
            let arg = key.clone().map_or(Value::Nil, Value::from);
            async move {
                editor
                    .call_lua("pi-ide.diagnostics", "collect", vec![arg])
                    .await
                    .map(|v| to_json(&v))
            }
        };
        self.diagnostics
            .run(uri.map(str::to_owned), call)
            .await
            .unwrap_or_else(|| Err("diagnostics call failed".into()))
    }

    /// The current (or last known) file position, if any.
    pub async fn current_positions(&self) -> Result<Option<Positions>, String> {
        let value = self
            .call_lua("pi-ide.selection", "positions", vec![])
            .await?;
        if value.is_nil() {
            return Ok(None);
        }
        serde_json::from_value(to_json(&value))
            .map(Some)
            .map_err(|e| e.to_string())
    }

    /// Subscribes to `buf`'s change events and returns its lines and
    /// changedtick, read after the subscription so no change is missed.
    pub async fn attach_buffer(&self, buf: i64) -> Result<(Vec<String>, u64), String> {
        let attach = vec![Value::from(buf), Value::from(false), Value::Map(vec![])];
        let attached = self
            .nvim
            .call("nvim_buf_attach", attach)
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        if attached.as_bool() != Some(true) {
            return Err("nvim_buf_attach refused".into());
        }
        let code = "local b = ...; return { vim.api.nvim_buf_get_lines(b, 0, -1, false), vim.api.nvim_buf_get_changedtick(b) }";
        let value = self
            .nvim
            .exec_lua(code, vec![Value::from(buf)])
            .await
            .map_err(|e| lua_error_message(&e))?;
        let Value::Array(parts) = value else {
            return Err("unexpected buffer contents".into());
        };
        let lines = match parts.first() {
            Some(Value::Array(lines)) => lines
                .iter()
                .map(|l| l.as_str().unwrap_or_default().to_owned())
                .collect(),
            _ => return Err("unexpected buffer lines".into()),
        };
        Ok((lines, parts.get(1).and_then(Value::as_u64).unwrap_or(0)))
    }

    /// Lines `first..=last` (0-based) of buffer `buf`.
    pub async fn lines(&self, buf: i64, first: u32, last: u32) -> Result<Vec<String>, String> {
        let args = vec![
            Value::from(buf),
            Value::from(first),
            Value::from(last + 1),
            Value::from(false),
        ];
        let value = self
            .nvim
            .call("nvim_buf_get_lines", args)
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        let Value::Array(items) = value else {
            return Err("nvim_buf_get_lines: not a list".into());
        };
        Ok(items
            .iter()
            .map(|item| {
                item.as_str()
                    .map_or_else(|| to_json(item).to_string(), str::to_owned)
            })
            .collect())
    }
}

/// The Lua error text without nvim-rs's wrapping.
fn lua_error_message(error: &nvim_rs::error::CallError) -> String {
    match error {
        nvim_rs::error::CallError::NeovimError(_, message) => message.clone(),
        other => other.to_string(),
    }
}
