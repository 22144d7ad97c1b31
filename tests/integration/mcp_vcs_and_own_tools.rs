//! Through the official Python SDK against real Neovim on a fixture that
//! is a git repository: the VCS tools (a branch with staged, unstaged and
//! untracked files; a file's diff against HEAD and the index), tools a
//! config registered in Lua (their result, their error), and an unknown
//! tool refused.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::Session;
use crate::mcp_http::endpoint;
use crate::mcp_python::python_client;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=trunk",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn structured(call: &Value) -> &Value {
    assert_ne!(call["isError"], json!(true), "{call}");
    &call["structuredContent"]
}

fn paths(list: &Value) -> Vec<(String, String)> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["filePath"].as_str().unwrap().to_owned(),
                f["status"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn git_status_diffs_and_lua_tools_through_the_python_sdk() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    let root = session.work_dir.canonicalize().unwrap();
    session.write_file("staged.py", "a = 1\n");
    session.write_file("changed.py", "b = 1\n");
    session.write_file("both.py", "c = 1\n");
    session.write_file("gone.py", "d = 1\n");
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "start"]);
    session.write_file("staged.py", "a = 2\n");
    git(&root, &["add", "staged.py"]);
    session.write_file("changed.py", "b = 2\n");
    session.write_file("both.py", "c = 2\n");
    git(&root, &["add", "both.py"]);
    session.write_file("both.py", "c = 3\n");
    std::fs::remove_file(root.join("gone.py")).unwrap();
    std::fs::create_dir(root.join("new dir")).unwrap();
    session.write_file("new dir/fresh.py", "e = 1\n");
    session
        .exec(
            "local mcp = require('pi-ide.mcp')
             assert(mcp.register_tool({
               name = 'buffer_count',
               description = 'How many buffers are listed, and the word given',
               input_schema = { type = 'object', properties = { word = { type = 'string' } }, required = { 'word' } },
               handler = function(args, done)
                 local n = #vim.fn.getbufinfo({ buflisted = 1 })
                 vim.defer_fn(function() done({ listed = n, word = args.word }) end, 10)
               end,
             }))
             assert(mcp.register_tool({
               name = 'always_fails',
               description = 'Raises an error',
               handler = function() error('it broke on purpose') end,
             }))
             assert(mcp.register_tool({
               name = 'says_no',
               description = 'Answers with an error',
               handler = function(_, done) done(nil, 'not today') end,
             }))
             local ok, err = pcall(mcp.register_tool, { name = 'bad name!', description = 'x', handler = print })
             assert(not ok and err:find('bad name!', 1, true), err)",
        )
        .await;

    let call = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    let report = python_client(
        &url,
        json!({"headers": {"Authorization": format!("Bearer {token}")}, "calls": [
            call("get_project_vcs_status", json!({})),
            call("get_file_diff", json!({"pathInProject": "both.py"})),
            call("get_file_diff", json!({"pathInProject": "both.py", "staged": true})),
            call("get_file_diff", json!({"pathInProject": "new dir/fresh.py"})),
            call("get_file_diff", json!({"pathInProject": "../elsewhere.py"})),
            call("buffer_count", json!({"word": "hé"})),
            call("always_fails", json!({})),
            call("says_no", json!({})),
            call("no_such_tool", json!({})),
        ]}),
    );
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"buffer_count") && tools.contains(&"get_file_diff"),
        "{tools:?}"
    );
    assert!(!tools.contains(&"bad name!"), "{tools:?}");
    let calls = report["calls"].as_array().unwrap();

    let status = structured(&calls[0]);
    assert_eq!(status["branch"], "trunk", "{status}");
    assert_eq!(
        paths(&status["staged"]),
        [
            ("both.py".into(), "modified".into()),
            ("staged.py".into(), "modified".into())
        ]
    );
    assert_eq!(
        paths(&status["unstaged"]),
        [
            ("both.py".into(), "modified".into()),
            ("changed.py".into(), "modified".into()),
            ("gone.py".into(), "deleted".into())
        ]
    );
    assert_eq!(
        paths(&status["untracked"]),
        [("new dir/fresh.py".into(), String::new())]
    );

    let against_head = structured(&calls[1]);
    let diff = against_head["diff"].as_str().unwrap();
    assert!(
        diff.contains("-c = 1\n+c = 3\n"),
        "the file against HEAD: {diff}"
    );
    let staged = structured(&calls[2])["diff"].as_str().unwrap().to_owned();
    assert!(
        staged.contains("-c = 1\n+c = 2\n"),
        "the index against HEAD: {staged}"
    );
    let fresh = structured(&calls[3]);
    assert_eq!(fresh["untracked"], true);
    assert!(
        fresh["diff"].as_str().unwrap().contains("+e = 1"),
        "{fresh}"
    );
    assert_eq!(calls[4]["isError"], true, "{}", calls[4]);

    let listed = session
        .lua("return #vim.fn.getbufinfo({ buflisted = 1 })")
        .await;
    assert_eq!(
        structured(&calls[5]),
        &json!({"listed": listed, "word": "hé"}),
        "a Lua tool's table is its structured result"
    );
    for (call, words) in [(&calls[6], "it broke on purpose"), (&calls[7], "not today")] {
        assert_eq!(call["isError"], true, "{call}");
        let text = call["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(words), "{text}");
    }
    assert!(
        calls[8]["error"]
            .as_str()
            .is_some_and(|e| e.contains("no_such_tool")),
        "an unknown tool is refused, never run as another: {}",
        calls[8]
    );
}
