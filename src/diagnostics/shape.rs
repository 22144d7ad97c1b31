//! One buffer's diagnostics in the shape each client parses: severities are
//! named differently for pi and Claude, and `source` is optional.

use serde_json::{Value, json};

use crate::client::ClientKind;

/// The diagnostics list of one file as `kind` expects it.
pub fn list(kind: ClientKind, raw: &[Value]) -> Value {
    raw.iter().map(|d| diagnostic(kind, d)).collect()
}

fn diagnostic(kind: ClientKind, raw: &Value) -> Value {
    let severity = match (raw.get("severity").and_then(Value::as_u64), kind) {
        (Some(1), _) => "Error",
        (Some(2), _) => "Warning",
        (Some(3), ClientKind::Claude) => "Info",
        (Some(3), ClientKind::Pi | ClientKind::Socket) => "Information",
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
        let pi = list(ClientKind::Pi, &raw());
        assert_eq!(pi[0]["severity"], "Error");
        assert_eq!(pi[0]["source"], "rustc");
        assert_eq!(pi[0]["range"]["start"], json!({"line": 1, "character": 2}));
        assert_eq!(pi[1]["severity"], "Information");
        assert!(pi[1].get("source").is_none());
        let claude = list(ClientKind::Claude, &raw());
        assert_eq!(claude[1]["severity"], "Info");
    }

    #[test]
    fn odd_fields_get_safe_defaults() {
        let odd = &list(ClientKind::Pi, &raw())[2];
        assert_eq!(odd["severity"], "Hint");
        assert_eq!(odd["message"], "");
        assert_eq!(odd["range"]["end"], json!({"line": 0, "character": 0}));
    }
}
