//! `open_diff`'s argument built straight into msgpack: a proposal's lines
//! are moved into the message, never copied through JSON on the way.

use nvim_rs::Value;

use crate::diff::prepare::{DiffView, Prepared};
use crate::diff::text::Lines;
use crate::nvim::convert::from_json;

/// One flat map, the sides' fields beside the view's, as Lua reads it.
pub fn diff_view(view: DiffView) -> Result<Value, String> {
    let DiffView {
        id,
        tab_name,
        path,
        original_path,
        client,
        client_id,
        sides,
        edit,
    } = view;
    let Prepared {
        original,
        original_exists,
        proposed,
        parts,
        content: _,
    } = sides;
    let mut map = vec![
        entry("id", Value::from(id)),
        entry("tab_name", Value::from(tab_name)),
        entry("path", Value::from(path)),
        entry("original_path", Value::from(original_path)),
        entry("client", Value::from(client)),
        entry("original_exists", Value::from(original_exists)),
        entry("original", lines(original)),
        entry("proposed", lines(proposed)),
    ];
    if let Some(client_id) = client_id {
        map.push(entry("client_id", Value::from(client_id)));
    }
    if parts {
        map.push(entry("parts", Value::from(true)));
    }
    if let Some(edit) = edit {
        // A few fields: through JSON is no cost here.
        let edit = serde_json::to_value(edit).map_err(|e| e.to_string())?;
        map.push(entry("edit", from_json(&edit)));
    }
    Ok(Value::Map(map))
}

fn entry(key: &'static str, value: Value) -> (Value, Value) {
    (Value::from(key), value)
}

fn lines(lines: Lines) -> Value {
    let Lines { lines, eol, crlf } = lines;
    Value::Map(vec![
        entry(
            "lines",
            Value::Array(lines.into_iter().map(Value::from).collect()),
        ),
        entry("eol", Value::from(eol)),
        entry("crlf", Value::from(crlf)),
    ])
}
