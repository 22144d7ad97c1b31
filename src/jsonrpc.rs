//! JSON-RPC 2.0 as agents speak it: classification of incoming text and the
//! replies we send. Pure functions, no I/O.
//!
//! Ids are echoed exactly as received (pi sends UUID strings, Claude numbers).

use serde_json::{Value, json};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;

/// One message received from a client.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// Has `method` and `id`: must be answered with the same id.
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// Has `method` and no `id`: never answered.
    Notification { method: String, params: Value },
    /// Has `id` and no `method`: the answer to one of our requests.
    Response {
        id: Value,
        outcome: Result<Value, Value>,
    },
}

/// Why a message could not be classified, with the error reply it deserves.
#[derive(Debug, PartialEq)]
pub struct Rejected {
    pub reply: String,
}

/// Classifies one text frame.
pub fn parse(text: &str) -> Result<Incoming, Rejected> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| reject(Value::Null, PARSE_ERROR, &format!("Parse error: {e}")))?;
    let Value::Object(mut object) = value else {
        let reason = if value.is_array() {
            "batches are not supported"
        } else {
            "a message must be a JSON object"
        };
        return Err(reject(
            Value::Null,
            INVALID_REQUEST,
            &format!("Invalid Request: {reason}"),
        ));
    };
    let id = object.remove("id");
    if let Some(id) = &id
        && !(id.is_string() || id.is_number() || id.is_null())
    {
        return Err(reject(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: id must be a string, a number or null",
        ));
    }
    let params = object.remove("params").unwrap_or(Value::Null);
    match (object.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Ok(Incoming::Request { id, method, params }),
        (Some(Value::String(method)), None) => Ok(Incoming::Notification { method, params }),
        (Some(_), id) => Err(reject(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "Invalid Request: method must be a string",
        )),
        (None, Some(id)) => {
            let outcome = match object.remove("error") {
                Some(error) => Err(error),
                None => Ok(object.remove("result").unwrap_or(Value::Null)),
            };
            Ok(Incoming::Response { id, outcome })
        }
        (None, None) => Err(reject(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: no method and no id",
        )),
    }
}

fn reject(id: Value, code: i64, message: &str) -> Rejected {
    Rejected {
        reply: error(&id, code, message),
    }
}

/// A success reply.
pub fn result(id: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

/// A success reply whose result is already JSON text.
pub fn result_json(id: &Value, result: &str) -> String {
    let id = id.to_string();
    let mut reply = String::with_capacity(40 + id.len() + result.len());
    reply.push_str(r#"{"jsonrpc":"2.0","id":"#);
    reply.push_str(&id);
    reply.push_str(r#","result":"#);
    reply.push_str(result);
    reply.push('}');
    reply
}

/// An error reply.
pub fn error(id: &Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// A notification (no id).
pub fn notification(method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
}

/// A request we send (editor → agent).
pub fn request(id: &Value, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_of(rejected: Rejected) -> (Value, i64) {
        let reply: Value = serde_json::from_str(&rejected.reply).unwrap();
        (
            reply["id"].clone(),
            reply["error"]["code"].as_i64().unwrap(),
        )
    }

    #[test]
    fn classifies_well_formed_messages() {
        let cases: &[(&str, Incoming)] = &[
            (
                r#"{"jsonrpc":"2.0","id":"5f0c","method":"initialize","params":{"a":1}}"#,
                Incoming::Request {
                    id: json!("5f0c"),
                    method: "initialize".into(),
                    params: json!({"a":1}),
                },
            ),
            (
                r#"{"id":0,"method":"tools/list"}"#,
                Incoming::Request {
                    id: json!(0),
                    method: "tools/list".into(),
                    params: Value::Null,
                },
            ),
            (
                r#"{"id":18446744073709551615,"method":"x"}"#,
                Incoming::Request {
                    id: json!(18446744073709551615u64),
                    method: "x".into(),
                    params: Value::Null,
                },
            ),
            (
                r#"{"id":null,"method":"x"}"#,
                Incoming::Request {
                    id: Value::Null,
                    method: "x".into(),
                    params: Value::Null,
                },
            ),
            (
                r#"{"method":"notifications/initialized"}"#,
                Incoming::Notification {
                    method: "notifications/initialized".into(),
                    params: Value::Null,
                },
            ),
            (
                r#"{"id":"a","result":{"ok":true}}"#,
                Incoming::Response {
                    id: json!("a"),
                    outcome: Ok(json!({"ok":true})),
                },
            ),
            (
                r#"{"id":3,"error":{"code":-32800}}"#,
                Incoming::Response {
                    id: json!(3),
                    outcome: Err(json!({"code":-32800})),
                },
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(&parse(text).unwrap(), expected, "{text}");
        }
    }

    #[test]
    fn rejects_malformed_messages_with_the_right_code() {
        let cases: &[(&str, Value, i64)] = &[
            ("not json", Value::Null, PARSE_ERROR),
            ("[1,2]", Value::Null, INVALID_REQUEST),
            ("[]", Value::Null, INVALID_REQUEST),
            ("42", Value::Null, INVALID_REQUEST),
            (r#""text""#, Value::Null, INVALID_REQUEST),
            ("{}", Value::Null, INVALID_REQUEST),
            (
                r#"{"id":{"a":1},"method":"x"}"#,
                Value::Null,
                INVALID_REQUEST,
            ),
            (r#"{"id":7,"method":12}"#, json!(7), INVALID_REQUEST),
        ];
        for (text, id, code) in cases {
            assert_eq!(
                code_of(parse(text).unwrap_err()),
                (id.clone(), *code),
                "{text}"
            );
        }
    }

    #[test]
    fn deep_nesting_is_a_parse_error_not_a_crash() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(code_of(parse(&deep).unwrap_err()).1, PARSE_ERROR);
    }

    /// Found by the fuzzer: an integer id beyond 64 bits was parsed as a
    /// float and came back as different digits.
    #[test]
    fn huge_numeric_ids_come_back_digit_for_digit() {
        let id = "2222222244444444444444444444444444444444444444444444444444444444444444444444444444444444444444444444444444444444444444444444444444444444444444442222228";
        let Ok(Incoming::Request { id: parsed, .. }) =
            parse(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#))
        else {
            panic!("not a request");
        };
        assert!(result(&parsed, json!({})).contains(&format!(r#""id":{id}"#)));
        assert!(error(&parsed, INVALID_PARAMS, "x").contains(&format!(r#""id":{id}"#)));
    }

    #[test]
    fn replies_echo_ids_unchanged() {
        let reply: Value = serde_json::from_str(&result(&json!("uuid-1"), json!({}))).unwrap();
        assert_eq!(reply["id"], "uuid-1");
        let reply: Value =
            serde_json::from_str(&error(&json!(9), METHOD_NOT_FOUND, "nope")).unwrap();
        assert_eq!(
            (reply["id"].clone(), reply["error"]["code"].clone()),
            (json!(9), json!(-32601))
        );
    }
}
