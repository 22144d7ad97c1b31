//! The JSON of each message (as pi's `ide` extension's `protocol.ts` has it) and what an incoming
//! line is. The review request has no `type`: it is recognised by `files`.

use serde::Serialize;
use serde_json::{Value, json};

use crate::nvim::seam::{ReviewComment, ReviewStatus};

/// The protocol version `hello` announces (what pi's `ide` extension expects).
pub const VERSION: &str = "1.0.0";

/// Sent right after accept; newer clients ignore it.
pub fn hello(name: &str) -> String {
    json!({"type": "hello", "ide": name, "version": VERSION}).to_string()
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Context<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_line: Option<u32>,
}

/// `context`: `file` relative to the project root (`None`: no file);
/// `lines`: the selection, 1-based inclusive.
pub fn context(file: Option<&str>, lines: Option<(u32, u32)>) -> String {
    let message = Context {
        kind: "context",
        file,
        start_line: lines.map(|(start, _)| start),
        end_line: lines.map(|(_, end)| end),
    };
    serde_json::to_string(&message).unwrap_or_default()
}

/// `reviewResult`.
pub fn review_result(status: ReviewStatus, comments: &[ReviewComment]) -> String {
    json!({"type": "reviewResult", "status": status, "comments": comments}).to_string()
}

/// `reviewResult` for a request that was refused: `cancelled`, and `error`
/// says why (a field newer clients show; others see a cancel).
pub fn review_refused(why: &str) -> String {
    json!({"type": "reviewResult", "status": ReviewStatus::Cancelled, "comments": [], "error": why})
        .to_string()
}

/// What one incoming line asks for.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// A review request: its files, or why the request is malformed.
    Review(Result<Vec<String>, String>),
    /// Not for us (unknown type, not JSON, …): why, for the log.
    Ignored(String),
}

pub fn parse(line: &str) -> Incoming {
    let line = line.trim();
    if line.is_empty() {
        return Incoming::Ignored("an empty line".into());
    }
    let object = match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(object)) => object,
        Ok(_) => return Incoming::Ignored("a line that is not a JSON object".into()),
        Err(error) => return Incoming::Ignored(format!("a malformed line: {error}")),
    };
    let Some(files) = object.get("files") else {
        let kind = object.get("type").map_or("none".into(), Value::to_string);
        return Incoming::Ignored(format!("a message of type {kind}"));
    };
    let files = files
        .as_array()
        .and_then(|list| {
            list.iter()
                .map(|file| file.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| "`files` must be a list of paths".to_owned());
    Incoming::Review(files.and_then(|files| match files.is_empty() {
        true => Err("the request names no files".to_owned()),
        false => Ok(files),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_single_json_lines() {
        assert_eq!(
            serde_json::from_str::<Value>(&hello("nvim")).unwrap(),
            json!({"type": "hello", "ide": "nvim", "version": "1.0.0"})
        );
        assert_eq!(
            context(Some("src/a.rs"), Some((2, 4))),
            r#"{"type":"context","file":"src/a.rs","startLine":2,"endLine":4}"#
        );
        assert_eq!(context(None, None), r#"{"type":"context","file":null}"#);
        let comment = ReviewComment {
            file: "a".into(),
            line: 1,
            end_line: None,
            text: "t".into(),
            context: vec!["> 1: x".into()],
        };
        assert_eq!(
            serde_json::from_str::<Value>(&review_result(ReviewStatus::Submitted, &[comment]))
                .unwrap(),
            json!({"type": "reviewResult", "status": "submitted",
                "comments": [{"file": "a", "line": 1, "text": "t", "context": ["> 1: x"]}]})
        );
        assert!(!review_result(ReviewStatus::Cancelled, &[]).contains('\n'));
    }

    #[test]
    fn a_review_request_is_recognised_by_its_files() {
        assert_eq!(
            parse(r#"{"files":["a.rs","b/c.rs"]}"#),
            Incoming::Review(Ok(vec!["a.rs".into(), "b/c.rs".into()]))
        );
        assert!(matches!(
            parse(r#"{"files":"a"}"#),
            Incoming::Review(Err(_))
        ));
        assert!(matches!(
            parse(r#"{"files":[1]}"#),
            Incoming::Review(Err(_))
        ));
        assert!(matches!(parse(r#"{"files":[]}"#), Incoming::Review(Err(_))));
        for ignored in ["", "nope", "[1]", r#"{"type":"bogus"}"#, "{}"] {
            assert!(matches!(parse(ignored), Incoming::Ignored(_)), "{ignored}");
        }
    }
}
