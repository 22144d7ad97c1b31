//! `get_project_problems` whatever Neovim holds now: what real pyright and
//! clangd reported for files the tools loaded and let go of, until the file
//! or its buffer changes; and the workspace diagnostics of servers that
//! offer them (`workspace/diagnostic`, from the fake server of
//! `tests/fixtures/fake_lsp.lua`), asked at each call within a bound.

use serde_json::{Value, json};

use crate::common::{Session, eventually, repo_root};
use crate::language_servers::{start_clangd, start_pyright};
use crate::mcp_http::{endpoint, sdk_client, structured};
use crate::pi_extension::require_node_deps;

const BROKEN_C: &str = "int broken = undefined_thing;\n";

async fn with_clangd(session: &Session) {
    session.write_file("compile_flags.txt", "-xc\n");
    start_clangd(session, "c").await;
}

fn project_problems() -> Value {
    json!({"name": "get_project_problems", "arguments": {}})
}

fn file_problems(file: &str) -> Value {
    json!({"name": "get_file_problems", "arguments": {"filePath": file}})
}

/// The problems of `file` in a `get_project_problems` result.
fn of<'a>(call: &'a Value, file: &str) -> Vec<&'a Value> {
    structured(call)["problems"]
        .as_array()
        .unwrap_or_else(|| panic!("no problems in {call}"))
        .iter()
        .filter(|p| p["filePath"] == file)
        .collect()
}

fn says(problem: &Value, needle: &str) -> bool {
    problem["description"]
        .as_str()
        .is_some_and(|d| d.contains(needle))
}

/// `get_project_problems` as it is now, asked through the npm SDK.
fn ask_project(url: &str, token: &str) -> Value {
    let report = sdk_client(url, token, json!([project_problems()]));
    report["calls"][0].clone()
}

#[tokio::test]
async fn project_problems_keep_what_the_servers_said_of_files_the_tools_let_go_of() {
    require_node_deps();
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    session.write_file("app.py", "import os\n\nprint(os.sep, undefined_name)\n");
    session.write_file("util.c", BROKEN_C);
    start_pyright(&session).await;
    with_clangd(&session).await;

    // pyright starts cold, maybe slower than the tool waits: files of
    // their own are asked about until it has answered for one in time (a
    // file asked about again could meet pyright's clearing of it on close).
    let mut attempt = 0;
    eventually("pyright's first diagnostics", || {
        attempt += 1;
        let file = format!("warm{attempt}.py");
        session.write_file(&file, "print(warm_undefined)\n");
        let (url, token) = (url.clone(), token.clone());
        async move {
            let report = sdk_client(&url, &token, json!([file_problems(&file)]));
            let errors = structured(&report["calls"][0])["errors"].clone();
            errors
                .as_array()?
                .iter()
                .any(|e| says(e, "warm_undefined"))
                .then_some(())
        }
    })
    .await;
    let report = sdk_client(
        &url,
        &token,
        json!([
            file_problems("app.py"),
            file_problems("util.c"),
            project_problems()
        ]),
    );
    let calls = report["calls"].as_array().unwrap();
    for (call, needle) in [
        (&calls[0], "undefined_name"),
        (&calls[1], "undefined_thing"),
    ] {
        let errors = structured(call)["errors"].as_array().unwrap();
        assert!(errors.iter().any(|e| says(e, needle)), "{call}");
    }
    let held = session
        .lua("return { vim.fn.bufnr('app.py'), vim.fn.bufnr('util.c') }")
        .await;
    assert_eq!(held, json!([-1, -1]), "the tools let go of both files");

    let project = &calls[2];
    let python = of(project, "app.py");
    assert!(
        python.iter().any(|p| says(p, "undefined_name")
            && p["severity"] == "ERROR"
            && p["line"] == 3
            && p["column"] == 15),
        "pyright's error, 1-based: {project}"
    );
    let c = of(project, "util.c");
    assert!(
        c.iter().any(|p| says(p, "undefined_thing")
            && p["severity"] == "ERROR"
            && p["line"] == 1
            && p["column"] == 14),
        "clangd's error: {project}"
    );
    let text = project["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("app.py:3:15: ERROR") && text.contains("util.c:1:14: ERROR"),
        "{text}"
    );
}

#[tokio::test]
async fn a_kept_problem_goes_once_its_file_or_its_buffer_changes() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    session.write_file("util.c", BROKEN_C);
    session.write_file("other.c", "int other = also_undefined;\n");
    with_clangd(&session).await;
    let report = sdk_client(
        &url,
        &token,
        json!([
            file_problems("util.c"),
            file_problems("other.c"),
            project_problems()
        ]),
    );
    let kept = &report["calls"][2];
    assert!(
        of(kept, "util.c")
            .iter()
            .any(|p| says(p, "undefined_thing")),
        "{kept}"
    );

    // Fixed on disk, by someone else: what clangd said of it is no answer.
    session.write_file("util.c", "int fixed = 1;\n");
    let after = ask_project(&url, &token);
    assert_eq!(of(&after, "util.c"), Vec::<&Value>::new(), "{after}");
    assert!(
        of(&after, "other.c")
            .iter()
            .any(|p| says(p, "also_undefined")),
        "the other file's stays: {after}"
    );

    // Fixed in a buffer the person opened (not saved): once clangd has
    // seen the new text, the problem it reported before is gone too.
    session
        .exec(
            "vim.cmd.edit('other.c')
             vim.api.nvim_buf_set_lines(0, 0, 1, false, { 'int other = 2;' })",
        )
        .await;
    eventually("the buffer's fix to reach the project's problems", || {
        let (url, token) = (url.clone(), token.clone());
        async move {
            let now = ask_project(&url, &token);
            of(&now, "other.c").is_empty().then_some(())
        }
    })
    .await;
}

#[tokio::test]
async fn servers_that_offer_workspace_diagnostics_are_asked_at_each_call_within_a_bound() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    let root = session.work_dir.canonicalize().unwrap();
    // The server counts columns in UTF-8 bytes; the answer in UTF-16 units.
    let line = "let é😀 = missing;";
    let at = line.find("missing").unwrap();
    let (start, end) = (at, at + "missing".len());
    let utf16 = |bytes: usize| line[..bytes].encode_utf16().count() + 1;
    session.write_file("never_opened.fake", &format!("ok\n{line}\n"));
    session.write_file("main.fake", "main\n");
    session
        .exec(&format!(
            "vim.filetype.add({{ extension = {{ fake = 'fake' }} }})
             dofile({fixture:?})({{ filetype = 'fake', encoding = 'utf-8', root = {root:?}, name = 'puller', pull = true }})
             dofile({fixture:?})({{ filetype = 'fake', encoding = 'utf-16', root = {root:?}, name = 'silent', pull = true }})
             local function report(file, items)
               return {{ kind = 'full', uri = vim.uri_from_fname({root:?} .. '/' .. file), items = items }}
             end
             local range = {{ start = {{ line = 1, character = {start} }}, ['end'] = {{ line = 1, character = {end} }} }}
             _G.fake_lsp.workspace.puller = {{ items = {{
               report('never_opened.fake', {{ {{ range = range, severity = 1, message = 'PULLED', source = 'puller' }} }}),
               {{ kind = 'unchanged', uri = vim.uri_from_fname({root:?} .. '/main.fake'), resultId = '1' }},
               {{ kind = 'full', uri = 'file:///elsewhere/outside.fake', items = {{ {{ range = range, message = 'OUTSIDE' }} }} }},
             }} }}
             _G.fake_lsp.clean = report('never_opened.fake', {{}})
             vim.cmd.edit('main.fake')",
            fixture = repo_root().join("tests/fixtures/fake_lsp.lua").to_str().unwrap(),
            root = root.to_str().unwrap(),
        ))
        .await;
    eventually("both servers to start", || async {
        let names = session
            .lua("return vim.tbl_map(function(c) return c.name end, vim.lsp.get_clients({ bufnr = 0 }))")
            .await;
        (names.as_array().map_or(0, Vec::len) == 2).then_some(())
    })
    .await;

    let first = ask_project(&url, &token);
    let pulled = of(&first, "never_opened.fake");
    assert_eq!(
        pulled,
        [
            &json!({"severity": "ERROR", "description": "PULLED", "source": "puller",
                 "line": 2, "column": utf16(start), "endLine": 2, "endColumn": utf16(end),
                 "filePath": "never_opened.fake"})
        ],
        "the server's UTF-8 columns as UTF-16: {first}"
    );
    let text = first["content"][0]["text"].as_str().unwrap();
    assert!(!text.contains("OUTSIDE"), "project files only: {text}");
    assert_eq!(
        structured(&first)["serversNotReported"],
        json!(["silent"]),
        "{first}"
    );
    assert!(
        text.contains("silent reported no workspace diagnostics within 2 s"),
        "{text}"
    );
    let counts = session
        .lua("return { _G.fake_lsp.pulls, _G.fake_lsp.cancelled }")
        .await;
    assert_eq!(
        counts,
        json!([{"puller": 1, "silent": 1}, {"puller": 0, "silent": 1}]),
        "each asked once, the silent one's request cancelled at the bound"
    );

    // The server's next report on the file replaces the one kept.
    session
        .exec("_G.fake_lsp.workspace.puller = { items = { _G.fake_lsp.clean } }")
        .await;
    let second = ask_project(&url, &token);
    assert_eq!(
        of(&second, "never_opened.fake"),
        Vec::<&Value>::new(),
        "{second}"
    );
    let pulls = session.lua("return _G.fake_lsp.pulls").await;
    assert_eq!(
        pulls,
        json!({"puller": 2, "silent": 2}),
        "asked at each call"
    );
}
