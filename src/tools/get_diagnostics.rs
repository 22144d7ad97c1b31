//! `getDiagnostics {uri?}`: what `vim.diagnostic` knows, in the shape each
//! client parses. pi calls it before every model request and waits forever,
//! so it must answer fast; an error reply is fine for pi.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{ToolError, ToolSpec, arguments, text_content};
use crate::host::Shared;
use crate::hub::{ClientId, ClientKind};

pub const SPEC: ToolSpec = ToolSpec {
    name: "getDiagnostics",
    description: "Diagnostics (errors, warnings) Neovim knows for one file uri, or for every open buffer.",
    schema: || {
        json!({
            "type": "object",
            "properties": {"uri": {"type": "string", "description": "file:// uri; omit for all buffers"}},
        })
    },
};

#[derive(Debug, Deserialize)]
pub struct Args {
    uri: Option<String>,
}

pub fn parse(args: Value) -> Result<Args, ToolError> {
    arguments("getDiagnostics", args)
}

pub async fn run(shared: &Arc<Shared>, client: ClientId, args: Args) -> Result<Value, ToolError> {
    let files = shared
        .editor
        .diagnostics(args.uri.as_deref())
        .await
        .map_err(ToolError::internal)?;
    let kind = shared.hub.kind(client).unwrap_or(ClientKind::Pi);
    Ok(text_content(&[shape(kind, &files).to_string()]))
}

/// pi: `{uri: [diagnostic]}`; Claude: `[{uri, diagnostics: [diagnostic]}]`.
pub fn shape(kind: ClientKind, files: &Value) -> Value {
    let files = files.as_array().map(Vec::as_slice).unwrap_or_default();
    let entries = files.iter().filter_map(|file| {
        let uri = file.get("uri")?.as_str()?;
        // Lua sends an empty table, which may arrive as a map: no diagnostics.
        let diagnostics: Vec<Value> = file
            .get("diagnostics")
            .and_then(Value::as_array)
            .map(|list| list.iter().map(|d| diagnostic(kind, d)).collect())
            .unwrap_or_default();
        Some((uri.to_owned(), diagnostics))
    });
    match kind {
        ClientKind::Pi => Value::Object(
            entries
                .map(|(uri, list)| (uri, Value::Array(list)))
                .collect::<Map<_, _>>(),
        ),
        ClientKind::Claude => entries
            .map(|(uri, list)| json!({"uri": uri, "diagnostics": list}))
            .collect(),
    }
}

fn diagnostic(kind: ClientKind, raw: &Value) -> Value {
    let severity = match (raw.get("severity").and_then(Value::as_u64), kind) {
        (Some(1), _) => "Error",
        (Some(2), _) => "Warning",
        (Some(3), ClientKind::Pi) => "Information",
        (Some(3), ClientKind::Claude) => "Info",
        _ => "Hint",
    };
    let mut out = json!({
        "severity": severity,
        "message": raw.get("message").cloned().unwrap_or_else(|| json!("")),
        "range": raw.get("range").cloned().unwrap_or_else(|| json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}})),
    });
    if let Some(source) = raw.get("source").filter(|s| s.is_string()) {
        out["source"] = source.clone();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Value {
        json!([{ "uri": "file:///w/a.rs", "diagnostics": [
            {"severity": 1, "message": "boom", "source": "rustc", "range": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 4}}},
            {"severity": 3, "message": "fyi"},
        ]}])
    }

    #[test]
    fn pi_gets_an_object_keyed_by_uri() {
        let shaped = shape(ClientKind::Pi, &files());
        let list = shaped["file:///w/a.rs"].as_array().unwrap();
        assert_eq!(list[0]["severity"], "Error");
        assert_eq!(list[0]["source"], "rustc");
        assert_eq!(
            list[0]["range"]["start"],
            json!({"line": 1, "character": 2})
        );
        assert_eq!(list[1]["severity"], "Information");
        assert!(list[1].get("source").is_none());
    }

    #[test]
    fn claude_gets_an_array() {
        let shaped = shape(ClientKind::Claude, &files());
        assert_eq!(shaped[0]["uri"], "file:///w/a.rs");
        assert_eq!(shaped[0]["diagnostics"][1]["severity"], "Info");
    }

    #[test]
    fn empty_or_odd_input_gives_empty_shapes() {
        assert_eq!(shape(ClientKind::Pi, &json!({})), json!({}));
        assert_eq!(shape(ClientKind::Claude, &json!([{"uri": 3}])), json!([]));
        assert_eq!(
            shape(
                ClientKind::Pi,
                &json!([{"uri": "file:///x", "diagnostics": {}}])
            ),
            json!({"file:///x": []})
        );
    }
}
