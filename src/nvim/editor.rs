//! Calls from the host into Neovim. Each runs in a task of its own and is
//! never cancelled: a pending nvim-rs call that is dropped half-way leaves
//! its answer without a receiver, and nvim-rs then ends the whole channel.
//! Callers await the task's `JoinHandle`, so a caller that gives up (an
//! MCP client's cancel, a timeout) drops only the handle, never the call.

use nvim_rs::compat::tokio::Compat;
use nvim_rs::{Neovim, Value};
use serde::de::DeserializeOwned;

use super::convert::to_json;
use super::seam::{self, LuaCall};
use crate::diff::parts::LinePart;
use crate::selection::Positions;

pub type Nvim = Neovim<Compat<super::stdio::Output>>;

/// The one Lua entry point the host calls.
const SEAM_CALL: &str = "return require('pi-ide.seam').call(...)";

/// Handle on the Neovim that started us.
#[derive(Clone)]
pub struct Editor {
    nvim: Nvim,
}

impl Editor {
    pub fn new(nvim: Nvim) -> Self {
        Editor { nvim }
    }

    /// Calls into Lua and waits for its return value; Lua errors become `Err`.
    pub async fn call(&self, call: LuaCall) -> Result<Value, String> {
        let args = call.into_args()?;
        self.exec_lua(SEAM_CALL, args).await
    }

    /// `nvim_exec_lua`, run to completion in its own task.
    async fn exec_lua(&self, code: &'static str, args: Vec<Value>) -> Result<Value, String> {
        let nvim = self.nvim.clone();
        let call = async move {
            nvim.exec_lua(code, args)
                .await
                .map_err(|error| lua_error_message(&error))
        };
        unless_lost(tokio::spawn(call).await)
    }

    /// An API function, run to completion in its own task.
    async fn api(&self, method: &'static str, args: Vec<Value>) -> Result<Value, String> {
        let nvim = self.nvim.clone();
        let call = async move {
            nvim.call(method, args)
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())
        };
        unless_lost(tokio::spawn(call).await)
    }

    /// Fire-and-forget variant for calls whose failure only deserves a log line.
    pub fn push(&self, call: LuaCall) {
        let editor = self.clone();
        crate::task::spawn(async move {
            let name = call.name();
            if let Err(error) = editor.call(call).await {
                tracing::warn!("seam call {name} failed: {error}");
            }
        });
    }

    /// Calls into Lua and reads its answer as `T`; nil is `None`. An empty
    /// Lua table arrives as an empty map, which reads as an empty list
    /// where `T` is one.
    pub async fn query<T: DeserializeOwned>(&self, call: LuaCall) -> Result<Option<T>, String> {
        let value = self.call(call).await?;
        if value.is_nil() {
            return Ok(None);
        }
        let json = to_json(&value);
        match serde_json::from_value(json.clone()) {
            Ok(answer) => Ok(Some(answer)),
            Err(error) => serde_json::from_value(seam::list(json))
                .map(Some)
                .map_err(|_| error.to_string()),
        }
    }

    /// The current (or last known) file position, if any.
    pub async fn current_positions(&self) -> Result<Option<Positions>, String> {
        let value = self.call(LuaCall::Positions).await?;
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
        let attached = self.api("nvim_buf_attach", attach).await?;
        if attached.as_bool() != Some(true) {
            return Err("nvim_buf_attach refused".into());
        }
        let code = "local b = ...; return { vim.api.nvim_buf_get_lines(b, 0, -1, false), vim.api.nvim_buf_get_changedtick(b) }";
        let value = self.exec_lua(code, vec![Value::from(buf)]).await?;
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
        let value = self.api("nvim_buf_get_lines", args).await?;
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

    /// Puts part `part` of a large diff's side into buffer `buf` at its
    /// rows; the first part replaces the one empty line a new buffer has.
    /// Neovim's C code decodes the lines: no Lua string is made of them.
    /// The lines are copied now; the call runs when awaited.
    pub fn fill_lines(
        &self,
        buf: i64,
        part: &LinePart<'_>,
    ) -> impl Future<Output = Result<(), String>> + Send + 'static {
        let end = if part.first == 0 {
            -1
        } else {
            part.first as i64
        };
        let lines = part.text.split_terminator('\n').map(Value::from);
        let args = vec![
            Value::from(buf),
            Value::from(part.first),
            Value::from(end),
            Value::from(false),
            Value::Array(lines.collect()),
        ];
        let editor = self.clone();
        async move { editor.api("nvim_buf_set_lines", args).await.map(|_| ()) }
    }
}

/// A call's outcome; a task that panicked or was torn down at shutdown
/// is an error like any other.
fn unless_lost(
    joined: Result<Result<Value, String>, tokio::task::JoinError>,
) -> Result<Value, String> {
    joined.unwrap_or_else(|error| Err(format!("the call into Neovim was lost: {error}")))
}

/// The Lua error text without nvim-rs's wrapping.
fn lua_error_message(error: &nvim_rs::error::CallError) -> String {
    match error {
        nvim_rs::error::CallError::NeovimError(_, message) => message.clone(),
        other => other.to_string(),
    }
}
