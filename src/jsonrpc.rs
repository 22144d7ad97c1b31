//! JSON-RPC 2.0 as agents speak it: classification of incoming text, typed
//! params, and the replies we send, every one serialized from a type.
//! Pure functions, no I/O.
//!
//! Ids are echoed exactly as received (pi sends UUID strings, Claude
//! numbers; a number keeps its digits, however many).

use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Number, Value};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;

/// A request's id: a string, a number (its digits as sent) or null.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Id {
    Number(Number),
    String(String),
    Null,
}

impl Id {
    /// The id a message carries, if it is one JSON-RPC allows.
    fn from_value(value: Value) -> Option<Id> {
        match value {
            Value::Number(number) => Some(Id::Number(number)),
            Value::String(text) => Some(Id::String(text)),
            Value::Null => Some(Id::Null),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Id::String(text) => Some(text),
            _ => None,
        }
    }
}

impl From<&str> for Id {
    fn from(text: &str) -> Self {
        Id::String(text.to_owned())
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Id::Number(number) => number.serialize(serializer),
            Id::String(text) => serializer.serialize_str(text),
            Id::Null => serializer.serialize_unit(),
        }
    }
}

/// One message received from a client.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// Has `method` and `id`: must be answered with the same id.
    Request {
        id: Id,
        method: String,
        params: Value,
    },
    /// Has `method` and no `id`: never answered.
    Notification { method: String, params: Value },
    /// Has `id` and no `method`: the answer to one of our requests.
    Response {
        id: Id,
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
        .map_err(|e| reject(&Id::Null, PARSE_ERROR, &format!("Parse error: {e}")))?;
    let Value::Object(mut object) = value else {
        let reason = if value.is_array() {
            "batches are not supported"
        } else {
            "a message must be a JSON object"
        };
        return Err(reject(
            &Id::Null,
            INVALID_REQUEST,
            &format!("Invalid Request: {reason}"),
        ));
    };
    let id = match object.remove("id").map(Id::from_value) {
        None => None,
        Some(Some(id)) => Some(id),
        Some(None) => {
            return Err(reject(
                &Id::Null,
                INVALID_REQUEST,
                "Invalid Request: id must be a string, a number or null",
            ));
        }
    };
    let params = object.remove("params").unwrap_or(Value::Null);
    match (object.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Ok(Incoming::Request { id, method, params }),
        (Some(Value::String(method)), None) => Ok(Incoming::Notification { method, params }),
        (Some(_), id) => Err(reject(
            &id.unwrap_or(Id::Null),
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
            &Id::Null,
            INVALID_REQUEST,
            "Invalid Request: no method and no id",
        )),
    }
}

fn reject(id: &Id, code: i64, message: &str) -> Rejected {
    Rejected {
        reply: error(id, code, message),
    }
}

/// A method's params as the type it takes; absent params are `{}`.
pub fn extract<P: DeserializeOwned>(params: Value) -> Result<P, serde_json::Error> {
    match params {
        Value::Null => serde_json::from_value(Value::Object(Default::default())),
        params => serde_json::from_value(params),
    }
}

const VERSION: &str = "2.0";

#[derive(Serialize)]
struct Success<'a, R> {
    jsonrpc: &'static str,
    id: &'a Id,
    result: R,
}

#[derive(Serialize)]
struct Failure<'a> {
    jsonrpc: &'static str,
    id: &'a Id,
    error: ErrorObject<'a>,
}

#[derive(Serialize)]
struct ErrorObject<'a> {
    code: i64,
    message: &'a str,
}

#[derive(Serialize)]
struct Message<'a, P> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Id>,
    method: &'a str,
    params: P,
}

/// Serializes a message; our types always serialize.
fn text(message: &impl Serialize) -> String {
    serde_json::to_string(message).unwrap_or_default()
}

/// A success reply.
pub fn result(id: &Id, result: impl Serialize) -> String {
    text(&Success {
        jsonrpc: VERSION,
        id,
        result,
    })
}

/// A success reply whose result was serialized before (kept, as
/// `tools/list` and settled diagnostics are).
pub fn raw_result(id: &Id, result: &RawValue) -> String {
    self::result(id, result)
}

/// An error reply.
pub fn error(id: &Id, code: i64, message: &str) -> String {
    text(&Failure {
        jsonrpc: VERSION,
        id,
        error: ErrorObject { code, message },
    })
}

/// A notification (no id).
pub fn notification(method: &str, params: impl Serialize) -> String {
    text(&Message {
        jsonrpc: VERSION,
        id: None,
        method,
        params,
    })
}

/// A request we send (editor → agent).
pub fn request(id: &Id, method: &str, params: impl Serialize) -> String {
    text(&Message {
        jsonrpc: VERSION,
        id: Some(id),
        method,
        params,
    })
}

/// `value`, serialized once, for replies that send it as it is.
pub fn raw(value: &impl Serialize) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).unwrap_or_else(|_| empty_object())
}

fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).unwrap_or_else(|_| unreachable!("{{}} is JSON"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn number(digits: &str) -> Id {
        Id::Number(digits.parse().unwrap())
    }

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
                    id: Id::String("5f0c".into()),
                    method: "initialize".into(),
                    params: json!({"a":1}),
                },
            ),
            (
                r#"{"id":0,"method":"tools/list"}"#,
                Incoming::Request {
                    id: number("0"),
                    method: "tools/list".into(),
                    params: Value::Null,
                },
            ),
            (
                r#"{"id":18446744073709551615,"method":"x"}"#,
                Incoming::Request {
                    id: number("18446744073709551615"),
                    method: "x".into(),
                    params: Value::Null,
                },
            ),
            (
                r#"{"id":null,"method":"x"}"#,
                Incoming::Request {
                    id: Id::Null,
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
                    id: Id::String("a".into()),
                    outcome: Ok(json!({"ok":true})),
                },
            ),
            (
                r#"{"id":3,"error":{"code":-32800}}"#,
                Incoming::Response {
                    id: number("3"),
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
        let reply: Value = serde_json::from_str(&result(&Id::from("uuid-1"), json!({}))).unwrap();
        assert_eq!(reply["id"], "uuid-1");
        let reply: Value =
            serde_json::from_str(&error(&number("9"), METHOD_NOT_FOUND, "nope")).unwrap();
        assert_eq!(
            (reply["id"].clone(), reply["error"]["code"].clone()),
            (json!(9), json!(-32601))
        );
    }
}
