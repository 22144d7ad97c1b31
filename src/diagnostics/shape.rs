//! One buffer's diagnostics in the shape each client parses: severities are
//! named differently for pi and Claude, and `source` is optional.

use serde_json::{Value, json};

use crate::client::DiagnosticsShape;

/// The diagnostics list of one file in `shape`.
pub fn list(shape: DiagnosticsShape, raw: &[Value]) -> Value {
    raw.iter().map(|d| diagnostic(shape, d)).collect()
}

fn diagnostic(shape: DiagnosticsShape, raw: &Value) -> Value {
    let severity = match (raw.get("severity").and_then(Value::as_u64), shape) {
        (Some(1), _) => "Error",
        (Some(2), _) => "Warning",
        (Some(3), DiagnosticsShape::UriList) => "Info",
        (Some(3), DiagnosticsShape::ByUri) => "Information",
        _ => "Hint",
    };
    let mut out = json!({
        "severity": severity,
        "message": raw.get("message").filter(|m| m.is_string()).cloned().unwrap_or_else(|| json!("")),
        "range": raw.get("range").filter(|r| r.is_object()).cloned().unwrap_or_else(|| json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}})),
    });
    if let Some(source) = raw.get("source").filter(|s| s.is_string()) {
        out["source"] = source.clone();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw() -> Vec<Value> {
        vec![
            json!({"severity": 1, "message": "boom", "source": "rustc", "range": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 4}}}),
            json!({"severity": 3, "message": "fyi"}),
            json!({"severity": "odd", "message": 3, "range": "x"}),
        ]
    }

    #[test]
    fn pi_and_claude_name_severities_their_way() {
        let pi = list(DiagnosticsShape::ByUri, &raw());
        assert_eq!(pi[0]["severity"], "Error");
        assert_eq!(pi[0]["source"], "rustc");
        assert_eq!(pi[0]["range"]["start"], json!({"line": 1, "character": 2}));
        assert_eq!(pi[1]["severity"], "Information");
        assert!(pi[1].get("source").is_none());
        let claude = list(DiagnosticsShape::UriList, &raw());
        assert_eq!(claude[1]["severity"], "Info");
    }

    #[test]
    fn odd_fields_get_safe_defaults() {
        let odd = &list(DiagnosticsShape::ByUri, &raw())[2];
        assert_eq!(odd["severity"], "Hint");
        assert_eq!(odd["message"], "");
        assert_eq!(odd["range"]["end"], json!({"line": 0, "character": 0}));
    }
}
