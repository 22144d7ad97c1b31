//! The MCP project tools' arguments: any tool, any JSON object, against a
//! stand-in Neovim and a small project on disk. Nothing may panic, every
//! answer is a tool result, and none shows a file outside the project.

#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ide::fuzzing::{OUTSIDE_SECRET, project_call};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Some((&tool, json)) = data.split_first() else {
        return;
    };
    let Ok(Value::Object(arguments)) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    // A tool may echo its arguments (in an error): only text it read counts.
    let asked_for_it = Value::Object(arguments.clone())
        .to_string()
        .contains(OUTSIDE_SECRET);
    let Some(result) = project_call(tool, arguments) else {
        return;
    };
    let content = result["content"].as_array().expect("a tool result");
    assert!(result["isError"].is_boolean(), "{result}");
    for item in content {
        assert!(item["text"].is_string(), "text content: {result}");
    }
    assert!(
        asked_for_it || !result.to_string().contains(OUTSIDE_SECRET),
        "a file outside the project: {result}"
    );
});
