//! The LSP tools over Streamable-HTTP MCP (the official npm SDK client,
//! `tests/mcp/client.mjs`) against a real clangd started by Neovim on a
//! small C project, with text that is not ASCII before the positions so
//! UTF-16 columns differ from bytes; and the tree-sitter fallbacks when no
//! language server is attached.

use serde_json::{Value, json};

use crate::common::python_tools::python_tools;
use crate::common::{Session, eventually};
use crate::mcp_http::{endpoint, sdk_client, structured};

/// `text`'s 1-based column of `needle` in UTF-16 code units, checked to
/// differ from its byte column so the assertion can tell them apart.
fn utf16_column(text: &str, needle: &str) -> u64 {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle} in {text}"));
    let column = text[..at].encode_utf16().count() as u64 + 1;
    assert_ne!(column, at as u64 + 1, "the fixture must not be ASCII");
    column
}

const UTIL_H: &str = "#ifndef UTIL_H\n#define UTIL_H\n/* Adds two numbers. */\n\
                      /* é */ int add_numbers(int a, int b);\n#endif\n";
const MAIN_C: &str = "#include \"util.h\"\n\nint main(void) {\n  int total = add_numbers(1, 2);\n  return total;\n}\n";
const BROKEN_LINE: &str =
    "const char *greeting = \"h\u{e9}llo \u{1F600}\"; int broken = undefined_thing;";

/// Neovim starting clangd (from the pinned Python tools) for C buffers.
async fn with_clangd(session: &Session) {
    let clangd = python_tools().join("clangd");
    let root = session.work_dir.canonicalize().unwrap();
    session
        .exec(&format!(
            "vim.api.nvim_create_autocmd('FileType', {{ pattern = 'c', callback = function(args)
               vim.lsp.start({{ name = 'clangd', cmd = {{ {clangd:?} }}, root_dir = {root:?} }},
                 {{ bufnr = args.buf }})
             end }})",
            clangd = clangd.to_str().unwrap(),
            root = root.to_str().unwrap(),
        ))
        .await;
}

fn locations(call: &Value) -> Vec<Value> {
    structured(call)["locations"]
        .as_array()
        .unwrap_or_else(|| panic!("no locations in {call}"))
        .clone()
}

#[tokio::test]
async fn the_lsp_tools_answer_from_clangd_in_utf16_columns() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    session.write_file("compile_flags.txt", "-xc\n-Wall\n");
    session.write_file("util.h", UTIL_H);
    session.write_file(
        "util.c",
        "#include \"util.h\"\n\nint add_numbers(int a, int b) { return a + b; }\n",
    );
    session.write_file("main.c", MAIN_C);
    session.write_file(
        "broken.c",
        &format!("{BROKEN_LINE}\nstatic int twice(int n) {{ int unused; return 2 * n; }}\nint use(void) {{ return twice(broken); }}\n"),
    );
    with_clangd(&session).await;
    let declaration_column = utf16_column(UTIL_H.lines().nth(3).unwrap(), "add_numbers");
    let error_column = utf16_column(BROKEN_LINE, "undefined_thing");

    let calls = json!([
        {"name": "find_definition", "arguments": {"filePath": "main.c", "line": 4, "column": 15}},
        {"name": "find_references", "arguments": {"filePath": "main.c", "line": 4, "column": 15}},
        {"name": "get_symbol_info", "arguments": {"filePath": "main.c", "line": 4, "column": 15}},
        {"name": "get_document_symbols", "arguments": {"filePath": "main.c"}},
        {"name": "get_file_problems", "arguments": {"filePath": "broken.c"}},
        {"name": "get_file_problems", "arguments": {"filePath": "broken.c", "errorsOnly": false}},
        {"name": "get_project_problems", "arguments": {}},
        {"name": "get_file_problems", "arguments": {"filePath": "missing.c"}},
        {"name": "get_file_problems", "arguments": {"filePath": "../outside.c"}},
        {"name": "get_document_symbols", "arguments": {"filePath": "util.c"}},
    ]);
    let started = std::time::Instant::now();
    let report = sdk_client(&url, &token, calls);
    eprintln!("clangd tool calls took {:?}", started.elapsed());
    let calls = report["calls"].as_array().unwrap();

    let declaration = json!({"filePath": "util.h", "line": 4, "column": declaration_column,
        "lineText": "/* é */ int add_numbers(int a, int b);"});
    assert_eq!(
        locations(&calls[0]),
        [declaration],
        "across files, 1-based UTF-16"
    );
    let usage = json!({"filePath": "main.c", "line": 4, "column": 15,
        "lineText": "  int total = add_numbers(1, 2);"});
    assert!(locations(&calls[1]).contains(&usage), "{}", calls[1]);
    let hover = structured(&calls[2])["documentation"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        hover.contains("add_numbers") && hover.contains("Adds two numbers"),
        "{hover}"
    );
    let symbols = structured(&calls[3])["symbols"].as_array().unwrap().clone();
    assert!(
        symbols.contains(&json!({"name": "main", "kind": "Function", "filePath": "main.c", "line": 3, "column": 5})),
        "{symbols:?}"
    );

    // broken.c was loaded by the call, its first diagnostics waited for.
    let errors = structured(&calls[4]);
    assert!(errors.get("serversNotReported").is_none(), "{errors}");
    let list = errors["errors"].as_array().unwrap();
    assert_eq!(list.len(), 1, "errors only: {errors}");
    assert_eq!(list[0]["severity"], "ERROR");
    assert_eq!(
        (list[0]["line"].as_u64(), list[0]["column"].as_u64()),
        (Some(1), Some(error_column)),
        "{errors}"
    );
    assert_eq!(
        list[0]["endColumn"].as_u64(),
        Some(error_column + "undefined_thing".len() as u64),
        "{errors}"
    );
    assert!(
        list[0]["description"]
            .as_str()
            .unwrap()
            .contains("undefined_thing"),
        "{errors}"
    );
    let all = structured(&calls[5])["errors"].as_array().unwrap().clone();
    assert!(
        all.iter()
            .any(|p| p["severity"] == "WARNING"
                && p["description"].as_str().unwrap().contains("unused")),
        "warnings too: {all:?}"
    );
    // broken.c was let go of once answered; what clangd said of it stays.
    let project = structured(&calls[6])["problems"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        project
            .iter()
            .any(|p| p["filePath"] == "broken.c" && p["line"] == 1 && p["column"] == error_column),
        "kept, in UTF-16 columns: {project:?}"
    );
    assert_eq!(calls[7]["isError"], true, "{}", calls[7]);
    assert!(
        calls[7]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("no such file"),
        "{}",
        calls[7]
    );
    assert_eq!(calls[8]["isError"], true, "{}", calls[8]);

    let shown = session
        .lua(
            "return { #vim.api.nvim_list_wins(), vim.api.nvim_buf_get_name(0),
               vim.fn.bufnr('broken.c'), vim.fn.bufnr('missing.c') }",
        )
        .await;
    assert_eq!(
        shown,
        json!([1, "", -1, -1]),
        "nothing shown, and the files the tools loaded are gone"
    );

    // clangd indexes the opened files (main.c, util.c) in the background:
    // ask until its index has both.
    let (found, references) = eventually("clangd's index of the opened files", || {
        let (url, token) = (url.clone(), token.clone());
        async move {
            let calls = json!([
                {"name": "search_symbol", "arguments": {"q": "add_num"}},
                {"name": "find_references", "arguments": {"filePath": "main.c", "line": 4, "column": 15}},
            ]);
            let report = sdk_client(&url, &token, calls);
            let found = structured(&report["calls"][0]).clone();
            let references = locations(&report["calls"][1]);
            let in_util = references.iter().any(|r| r["filePath"] == "util.c");
            (found["symbols"].as_array().is_some_and(|s| !s.is_empty()) && in_util)
                .then_some((found, references))
        }
    })
    .await;
    for expected in [
        usage,
        json!({"filePath": "util.c", "line": 3, "column": 5,
            "lineText": "int add_numbers(int a, int b) { return a + b; }"}),
    ] {
        assert!(
            references.contains(&expected),
            "{expected} in {references:?}"
        );
    }
    assert_eq!(found["source"], "lsp", "{found}");
    let symbol = &found["symbols"][0];
    assert_eq!(symbol["name"], "add_numbers", "{found}");
    assert_eq!(symbol["kind"], "Function", "{found}");
    let at = (
        symbol["filePath"].as_str().unwrap(),
        symbol["line"].as_u64().unwrap(),
        symbol["column"].as_u64().unwrap(),
    );
    assert!(
        at == ("util.h", 4, declaration_column) || at == ("util.c", 3, 5),
        "1-based, UTF-16, relative: {found}"
    );
    let report = sdk_client(
        &url,
        &token,
        json!([{"name": "search_symbol", "arguments": {"q": "", "limit": 1}}]),
    );
    let cut = structured(&report["calls"][0]);
    assert!(cut["symbols"].as_array().unwrap().len() <= 1, "{cut}");
}

#[tokio::test]
async fn without_a_language_server_symbols_come_from_tree_sitter() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    session.write_file(
        "lib.rs",
        "/// é\nfn alpha_one() {}\n\nstruct AlphaTwo;\n\nfn beta() {}\n",
    );
    session.write_file("notes.py", "def alpha_three():\n    pass\n");
    session
        .exec("vim.cmd.edit('notes.py'); vim.cmd.edit('lib.rs')")
        .await;
    let calls = json!([
        {"name": "get_document_symbols", "arguments": {"filePath": "lib.rs"}},
        {"name": "search_symbol", "arguments": {"q": "ALPHA"}},
        {"name": "search_symbol", "arguments": {"q": "alpha", "limit": 1}},
        {"name": "get_file_problems", "arguments": {"filePath": "lib.rs"}},
    ]);
    // A buffer without a server is not waited for: the answer says so
    // (below) instead of naming servers that stayed silent.
    let report = sdk_client(&url, &token, calls);
    let calls = report["calls"].as_array().unwrap();

    let symbols = structured(&calls[0])["symbols"].as_array().unwrap().clone();
    let lines: Vec<(u64, &str)> = symbols
        .iter()
        .map(|s| (s["line"].as_u64().unwrap(), s["name"].as_str().unwrap()))
        .collect();
    assert_eq!(lines.len(), 3, "{symbols:?}");
    assert_eq!(
        lines.iter().map(|l| l.0).collect::<Vec<_>>(),
        [2, 4, 6],
        "{symbols:?}"
    );
    assert!(lines[0].1.contains("alpha_one"), "{symbols:?}");

    let found = structured(&calls[1]);
    assert_eq!(found["source"], "outline", "{found}");
    let names: Vec<(&str, u64)> = found["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["filePath"].as_str().unwrap(), s["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(names.len(), 3, "case-insensitive, both buffers: {found}");
    for expected in [("lib.rs", 2), ("lib.rs", 4), ("notes.py", 1)] {
        assert!(names.contains(&expected), "{expected:?} in {found}");
    }
    let text = calls[1]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("no language server"), "{text}");
    let cut = structured(&calls[2]);
    assert_eq!(cut["symbols"].as_array().unwrap().len(), 1, "{cut}");
    assert_eq!(cut["limitReached"], true, "{cut}");

    let problems = &calls[3];
    assert_eq!(structured(problems)["errors"], json!([]), "{problems}");
    assert!(
        problems["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("no language server is attached"),
        "{problems}"
    );
    assert!(
        structured(problems).get("serversNotReported").is_none(),
        "{problems}"
    );
}
