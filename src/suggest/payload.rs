//! The `getSuggestions` params pi understands, and what its answer holds.

use serde_json::{Map, Value, json};

use crate::nvim::seam::SuggestRequest;
use crate::outline::Context;

/// The `getSuggestions` params pi understands.
pub fn payload(request: &SuggestRequest, context: Option<Context>) -> Value {
    let (outline, scope, in_comment) = match context {
        Some(context) => (
            Some(context.outline),
            Some(context.enclosing_scope),
            context.cursor_in_comment,
        ),
        None => (
            request.outline.clone(),
            request.scope.clone(),
            request.in_comment.unwrap_or(false),
        ),
    };
    let mut params = Map::new();
    params.insert("filePath".into(), json!(request.path));
    params.insert("language".into(), json!(request.filetype));
    if let Some(outline) = outline.filter(|o| !o.is_empty()) {
        params.insert("outline".into(), json!(outline));
    }
    if let Some(scope) = scope.filter(|s| !s.is_empty()) {
        params.insert("enclosingScope".into(), json!(scope));
    }
    params.insert("cursorBefore".into(), json!(request.before));
    params.insert("cursorAfter".into(), json!(request.after));
    params.insert("suggestionCount".into(), json!(request.count));
    params.insert("cursorInComment".into(), json!(in_comment));
    if let Some(model) = request.model.as_ref().filter(|m| !m.is_empty()) {
        params.insert("model".into(), json!(model));
    }
    Value::Object(params)
}

/// The strings of `{suggestions: [...]}`, non-empty, at most `count`.
pub fn suggestions_of(result: &Value, count: u32) -> Vec<String> {
    result
        .get("suggestions")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .take(count.max(1) as usize)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> SuggestRequest {
        SuggestRequest {
            token: 1,
            buf: 1,
            row: 0,
            col: 3,
            filetype: "lua".into(),
            path: "/w/a.lua".into(),
            before: "loc".into(),
            after: "\nreturn M".into(),
            count: 3,
            model: None,
            outline: Some("1: function M.x()".into()),
            scope: None,
            in_comment: None,
        }
    }

    #[test]
    fn payload_prefers_the_host_tree_and_omits_what_is_empty() {
        let from_lua = payload(&request(), None);
        assert_eq!(from_lua["outline"], "1: function M.x()");
        assert!(from_lua.get("enclosingScope").is_none());
        assert!(from_lua.get("model").is_none());
        assert_eq!(from_lua["cursorBefore"], "loc");
        assert_eq!(from_lua["suggestionCount"], 3);
        assert_eq!(from_lua["cursorInComment"], false);
        let context = Context {
            outline: "1: fn a()".into(),
            enclosing_scope: "1: fn a()".into(),
            cursor_in_comment: true,
        };
        let mut with_model = request();
        with_model.model = Some("openai/gpt-4o".into());
        let from_tree = payload(&with_model, Some(context));
        assert_eq!(from_tree["outline"], "1: fn a()");
        assert_eq!(from_tree["enclosingScope"], "1: fn a()");
        assert_eq!(from_tree["cursorInComment"], true);
        assert_eq!(from_tree["model"], "openai/gpt-4o");
    }

    #[test]
    fn suggestions_are_strings_capped_at_the_count() {
        let result = json!({"suggestions": ["a", 3, "", "b", "c", "d"]});
        assert_eq!(suggestions_of(&result, 3), ["a", "b", "c"]);
        assert!(suggestions_of(&json!({"nope": 1}), 3).is_empty());
    }
}
