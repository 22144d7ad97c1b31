//! The input schema of a tool registered in Lua: checked before it is
//! served, because clients that validate `tools/list` as a whole (the MCP
//! TypeScript SDK) drop every tool of the endpoint for one bad schema; and
//! served with `projectPath`, as every built-in tool's is.

use serde_json::{Map, Value};

use crate::tools::{PROJECT_PATH, project_path_schema};

/// Why `schema` cannot be served, naming the field as Lua wrote it;
/// `None` when it can.
pub fn problem(schema: &Value) -> Option<String> {
    let Value::Object(keywords) = schema else {
        return Some(format!(
            "input_schema must be a table (a JSON Schema), got {}",
            kind(schema)
        ));
    };
    match keywords.get("type") {
        Some(Value::String(object)) if object == "object" => {}
        other => {
            return Some(format!(
                "input_schema.type must be \"object\", got {}",
                other.map_or("nothing", kind)
            ));
        }
    }
    fields_problem(keywords, "input_schema")
}

/// Why the `properties` or `required` of the schema at `at` are wrong;
/// nested property schemas are checked the same way.
fn fields_problem(keywords: &Map<String, Value>, at: &str) -> Option<String> {
    let properties = match keywords.get("properties") {
        None => None,
        Some(Value::Object(properties)) => Some(properties),
        Some(other) => {
            return Some(format!(
                "{at}.properties must map names to schemas, got {}",
                kind(other)
            ));
        }
    };
    for (name, property) in properties.into_iter().flatten() {
        let here = format!("{at}.properties.{name}");
        let Value::Object(property) = property else {
            return Some(format!(
                "{here} must be a table (a JSON Schema), got {}",
                kind(property)
            ));
        };
        if let Some(problem) = fields_problem(property, &here) {
            return Some(problem);
        }
    }
    let names = match keywords.get("required") {
        None => return None,
        Some(Value::Array(names)) => names,
        Some(other) => {
            return Some(format!(
                "{at}.required must be a list of property names, got {}",
                kind(other)
            ));
        }
    };
    for (index, name) in names.iter().enumerate() {
        let here = format!("{at}.required[{}]", index + 1);
        let Some(name) = name.as_str() else {
            return Some(format!(
                "{here} must be a property name, got {}",
                kind(name)
            ));
        };
        if !properties.is_some_and(|properties| properties.contains_key(name)) {
            return Some(format!("{here} is {name:?}, not a key of {at}.properties"));
        }
    }
    None
}

/// How a JSON value is called in Lua.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nil",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a table of names",
    }
}

/// A checked `schema` as `tools/list` serves it: with `projectPath`.
pub fn served(schema: &Value) -> Value {
    let mut schema = schema.clone();
    schema["properties"][PROJECT_PATH] = project_path_schema();
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schema_that_can_be_served_has_no_problem() {
        for schema in [
            json!({"type": "object"}),
            json!({"type": "object", "properties": {}}),
            json!({"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}),
            json!({"type": "object", "properties": {"opts": {"type": "object", "properties": {"n": {}}, "required": ["n"]}}}),
        ] {
            assert_eq!(problem(&schema), None, "{schema}");
        }
    }

    #[test]
    fn each_problem_names_its_field() {
        for (schema, field) in [
            (json!("object"), "input_schema must"),
            (json!({"properties": {}}), "input_schema.type"),
            (json!({"type": "array"}), "input_schema.type"),
            (
                json!({"type": "object", "properties": ["a"]}),
                "input_schema.properties must",
            ),
            (
                json!({"type": "object", "properties": {"word": "string"}}),
                "input_schema.properties.word must",
            ),
            (
                json!({"type": "object", "properties": {"opts": {"properties": {"n": 5}}}}),
                "input_schema.properties.opts.properties.n must",
            ),
            (
                json!({"type": "object", "required": "word"}),
                "input_schema.required must",
            ),
            (
                json!({"type": "object", "properties": {"a": {}}, "required": [1]}),
                "input_schema.required[1] must",
            ),
            (
                json!({"type": "object", "properties": {"a": {}}, "required": ["a", "b"]}),
                "input_schema.required[2] is \"b\"",
            ),
        ] {
            let told = problem(&schema).unwrap_or_else(|| panic!("{schema} passed"));
            assert!(told.starts_with(field), "{told} should name {field}");
        }
    }

    #[test]
    fn served_schemas_take_project_path() {
        let bare = served(&json!({"type": "object"}));
        assert_eq!(bare["properties"][PROJECT_PATH]["type"], "string");
        let with_word = served(&json!({
            "type": "object",
            "properties": {"word": {"type": "string"}},
            "required": ["word"],
        }));
        assert_eq!(with_word["properties"]["word"], json!({"type": "string"}));
        assert_eq!(
            with_word["required"],
            json!(["word"]),
            "projectPath stays optional"
        );
        assert_eq!(with_word["properties"][PROJECT_PATH]["type"], "string");
    }
}
