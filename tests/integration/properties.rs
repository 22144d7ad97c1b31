//! Property tests of the path from socket text to action: nothing panics,
//! every request's id comes back unchanged, `openDiff` never becomes a
//! JSON-RPC error (pi would run the edit unapproved).

use pi_ide::jsonrpc::{self, Id, Incoming};
use pi_ide::mcp_ws::{Route, route};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Arbitrary JSON, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{0,10}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn id_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        ".{0,40}".prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from)
    ]
}

fn method() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("initialize".to_owned()),
        Just("tools/list".to_owned()),
        Just("tools/call".to_owned()),
        Just("ping".to_owned()),
        "[a-zA-Z/_]{0,20}",
    ]
}

/// The reply a route leads to for requests that need no editor.
fn reply_for(id: &Id, route: &Route) -> Option<String> {
    match route {
        Route::Answer(result) => Some(jsonrpc::result(id, result.clone())),
        Route::Fail(error) => Some(jsonrpc::error(id, error.code, &error.message)),
        _ => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_text_is_classified_or_answered_with_a_json_rpc_error(text in ".{0,200}") {
        if let Err(rejected) = jsonrpc::parse(&text) {
            let reply: Value = serde_json::from_str(&rejected.reply).unwrap();
            prop_assert!(reply["error"]["code"].is_i64());
            prop_assert_eq!(&reply["jsonrpc"], "2.0");
        }
    }

    #[test]
    fn any_json_is_classified_or_answered_with_a_json_rpc_error(value in json_value()) {
        match jsonrpc::parse(&value.to_string()) {
            Ok(Incoming::Request { method, params, .. }) => { let _ = route(&method, params); }
            Ok(_) => {}
            Err(rejected) => {
                let reply: Value = serde_json::from_str(&rejected.reply).unwrap();
                prop_assert!(reply["error"]["code"].is_i64());
            }
        }
    }

    #[test]
    fn request_ids_come_back_unchanged(id in id_value(), method in method(), params in json_value()) {
        let text = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let Ok(Incoming::Request { id: parsed_id, method: parsed_method, params }) = jsonrpc::parse(&text) else {
            return Err(TestCaseError::fail(format!("not a request: {text}")));
        };
        prop_assert_eq!(&serde_json::to_value(&parsed_id).unwrap(), &id);
        if let Some(reply) = reply_for(&parsed_id, &route(&parsed_method, params)) {
            let reply: Value = serde_json::from_str(&reply).unwrap();
            prop_assert_eq!(&reply["id"], &id);
        }
    }

    #[test]
    fn open_diff_never_becomes_a_json_rpc_error(arguments in json_value()) {
        let params = json!({"name": "openDiff", "arguments": arguments});
        prop_assert!(matches!(route("tools/call", params), Route::Tool(_)));
    }

    #[test]
    fn unknown_methods_are_method_not_found(method in "[a-z]{1,12}/[a-z]{1,12}") {
        prop_assume!(!["tools/list", "tools/call", "prompts/list", "resources/list"].contains(&method.as_str()));
        let Route::Fail(error) = route(&method, Value::Null) else {
            return Err(TestCaseError::fail("an unknown method was routed"));
        };
        prop_assert_eq!(error.code, jsonrpc::METHOD_NOT_FOUND);
    }
}
