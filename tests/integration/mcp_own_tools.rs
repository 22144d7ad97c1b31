//! Tools a config registers in Lua, as the official npm SDK
//! (`tests/mcp/client.mjs`) sees them next to the built-in ones, against
//! real headless Neovim and the real host: a README-style schema
//! (`properties = {}`) served as JSON Schema with `projectPath`, so the
//! SDK's `listTools()` keeps every tool; empty arguments and results given
//! back as objects; `projectPath` routed as for the built-in tools; a bad
//! schema refused by `register_tool`, naming the field; and one that gets
//! past Lua anyway left out without taking the others along.

use serde_json::{Value, json};

use crate::common::{Session, eventually, host_binary};
use crate::mcp_http::{endpoint, sdk_client, structured};

fn names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {tools}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

fn tool<'a>(tools: &'a Value, name: &str) -> &'a Value {
    tools
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == name)
        .unwrap_or_else(|| panic!("{name} not listed: {tools}"))
}

/// Neovim, and the names of the built-in tools its host serves, once the
/// host took the tools `register` (Lua statements, `mcp` in scope) gives
/// it in `changes` changes of the list.
async fn serving(register: &str, changes: usize) -> (Session, Vec<String>) {
    let session = Session::spawn().await;
    session
        .exec(&format!(
            "require('pi-ide').setup({{ bin = '{}' }})",
            host_binary().display()
        ))
        .await;
    let (url, token) = endpoint(&session).await;
    let built_in = names(&sdk_client(&url, &token, json!([]))["tools"]);
    session
        .exec(&format!("local mcp = require('pi-ide.mcp')\n{register}"))
        .await;
    registered(&session, changes).await;
    (session, built_in)
}

/// Waits until the host took the registered tools `changes` times.
async fn registered(session: &Session, changes: usize) {
    eventually("the host to take the registered tools", || async {
        let log = session.host_log().await;
        (log.matches("registered MCP tools changed").count() >= changes).then_some(())
    })
    .await;
}

#[tokio::test]
async fn the_npm_sdk_lists_every_tool_beside_a_lua_tool_with_an_empty_schema() {
    let (session, built_in) = serving(
        "mcp.register_tool({
           name = 'todo_count',
           description = 'How many TODO lines the current buffer has',
           input_schema = { type = 'object', properties = {} },
           handler = function(_, done)
             done({ count = #vim.fn.matchbufline(vim.api.nvim_get_current_buf(), 'TODO', 1, '$') })
           end,
         })
         mcp.register_tool({
           name = 'echo',
           description = 'Gives back its arguments',
           input_schema = { type = 'object', properties = {
             opts = { type = 'object', properties = {}, additionalProperties = {} },
             anything = {},
             list = { type = 'array', items = {} },
           } },
           handler = function(args, done) done(args) end,
         })
         mcp.register_tool({
           name = 'nothing',
           description = 'Answers an empty table',
           handler = function(_, done) done({}) end,
         })",
        3,
    )
    .await;
    let (url, token) = endpoint(&session).await;
    let root = session.work_dir.canonicalize().unwrap();
    let elsewhere = format!("{}-elsewhere", root.display());
    let call = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    let report = sdk_client(
        &url,
        &token,
        json!([
            call("echo", json!({})),
            call("echo", json!({"projectPath": root, "opts": {}})),
            call("echo", json!({"projectPath": elsewhere})),
            call("nothing", json!({})),
            call("todo_count", json!({"projectPath": root})),
        ]),
    );

    let tools = &report["tools"];
    let mut expected = built_in.clone();
    expected.extend(["todo_count", "echo", "nothing"].map(String::from));
    assert_eq!(
        names(tools),
        expected,
        "every built-in tool is still listed"
    );
    assert!(built_in.len() > 30, "{built_in:?}");
    for name in ["todo_count", "echo", "nothing"] {
        let schema = &tool(tools, name)["inputSchema"];
        assert_eq!(schema["type"], "object", "{schema}");
        assert!(schema["properties"].is_object(), "{schema}");
        assert_eq!(
            schema["properties"]["projectPath"]["type"], "string",
            "{schema}"
        );
    }
    let echo = &tool(tools, "echo")["inputSchema"]["properties"];
    assert_eq!(
        (
            &echo["opts"]["properties"],
            &echo["opts"]["additionalProperties"]
        ),
        (&json!({}), &json!({})),
        "{echo}"
    );
    assert_eq!(echo["anything"], json!({}), "{echo}");
    assert_eq!(echo["list"]["items"], json!({}), "{echo}");

    let calls = report["calls"].as_array().unwrap();
    assert_eq!(
        structured(&calls[0]),
        &json!({}),
        "empty arguments reach Lua and come back as an object"
    );
    assert_eq!(calls[0]["content"][0]["text"], "{}");
    assert_eq!(
        structured(&calls[1]),
        &json!({"projectPath": root, "opts": {}}),
        "projectPath is routed as the built-in tools' and reaches the handler"
    );
    assert_eq!(calls[2]["isError"], true, "{}", calls[2]);
    let refused = calls[2]["content"][0]["text"].as_str().unwrap();
    assert!(refused.contains("not this Neovim's project"), "{refused}");
    assert_eq!(structured(&calls[3]), &json!({}), "an empty table result");
    assert_eq!(structured(&calls[4]), &json!({"count": 0}));
}

#[tokio::test]
async fn register_tool_refuses_a_bad_schema_naming_the_field() {
    let session = Session::spawn().await;
    let refusals = session
        .lua(
            "local mcp = require('pi-ide.mcp')
             local function refusal(schema)
               local ok, err = pcall(mcp.register_tool, {
                 name = 'bad', description = 'x', input_schema = schema, handler = print,
               })
               return ok and 'registered' or err
             end
             return {
               refusal('object'),
               refusal({ type = 'array' }),
               refusal({ properties = {} }),
               refusal({ type = 'object', properties = { 'word' } }),
               refusal({ type = 'object', properties = { word = 'string' } }),
               refusal({ type = 'object', properties = { opts = { type = 'object', properties = { n = 5 } } } }),
               refusal({ type = 'object', properties = { word = {} }, required = 'word' }),
               refusal({ type = 'object', properties = { word = {} }, required = { 'word', 'wrod' } }),
               refusal({ type = 'object', properties = { word = {} }, required = { 1 } }),
               refusal({ type = 'object', properties = { projectPath = { type = 'string' } } }),
               #mcp.tools(),
             }",
        )
        .await;
    let refusals = refusals.as_array().unwrap();
    let fields = [
        "input_schema must be a table",
        "input_schema.type must be \"object\"",
        "input_schema.type must be \"object\", got nil",
        "input_schema.properties must map names to schemas",
        "input_schema.properties.word must be a table",
        "input_schema.properties.opts.properties.n must be a table",
        "input_schema.required must be a list",
        "input_schema.required[2] is \"wrod\"",
        "input_schema.required[1] must be a property name",
        "input_schema.properties.projectPath is taken",
    ];
    for (refusal, field) in refusals.iter().zip(fields) {
        let message = refusal.as_str().unwrap();
        assert!(
            message.contains("register_tool: tool bad: ") && message.contains(field),
            "{message:?} should name {field}"
        );
        assert!(
            !message.contains("pi-ide/mcp/"),
            "the error is the caller's, not the plugin's: {message}"
        );
    }
    assert_eq!(refusals.len(), fields.len() + 1);
    assert_eq!(refusals[fields.len()], 0, "nothing was registered");
}

#[tokio::test]
async fn a_bad_schema_that_gets_past_lua_leaves_the_other_tools_listed() {
    // As a tool that got past register_tool's checks would arrive:
    // straight through the seam.
    let (session, built_in) = serving(
        "require('pi-ide.seam').notify('tools_changed', {
           { name = 'good', description = 'fine', input_schema = { type = 'object', properties = {} } },
           { name = 'bad_property', description = 'x', input_schema = { type = 'object', properties = { word = 'string' } } },
           { name = 'bad_type', description = 'x', input_schema = { type = 'string' } },
           { name = 'bad_required', description = 'x', input_schema = { type = 'object', required = { 'nope' } } },
         })",
        1,
    )
    .await;
    let (url, token) = endpoint(&session).await;
    let report = sdk_client(&url, &token, json!([]));
    let mut expected = built_in;
    expected.push("good".into());
    assert_eq!(names(&report["tools"]), expected);

    let told = eventually("the person to be told", || async {
        let told = session.notifications().await;
        told.into_iter()
            .find(|m| m.contains("MCP tools not served"))
    })
    .await;
    for field in [
        "bad_property: input_schema.properties.word",
        "bad_type: input_schema.type",
        "bad_required: input_schema.required[1]",
    ] {
        assert!(told.contains(field), "{told} should name {field}");
    }
    // The log says so (or this waits until it times out).
    session.host_log_shows("MCP tools not served").await;
}
