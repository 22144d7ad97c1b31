//! The navigation tools over Streamable-HTTP MCP (the official npm SDK)
//! against a real clangd started by Neovim on a small C++ project whose
//! lines have text that is not ASCII before the positions, so UTF-16
//! columns differ from bytes: implementations, type definitions,
//! declarations, call hierarchies both ways, type hierarchies both ways,
//! and lint_files on files no buffer holds; against pyright, a type
//! hierarchy it does not support.

use serde_json::{Value, json};

use crate::common::Session;
use crate::language_servers::{start_clangd, start_pyright};
use crate::mcp_http::{endpoint, sdk_client, structured};
use crate::pi_extension::require_node_deps;

const SHAPES_HPP: &str = "#pragma once\n\
/* é */ struct Shape { virtual double area() const = 0; virtual ~Shape() = default; };\n\
/* é */ struct Square : Shape { double side = 1; double area() const override; };\n\
/* é */ double total(const Shape &s);\n";
const SHAPES_CPP: &str = "#include \"shapes.hpp\"\n\
/* é */ double Square::area() const { return side * side; }\n\
/* é */ double twice(const Shape &s) { return 2 * s.area(); }\n\
/* é */ double total(const Shape &s) { return twice(s) + s.area(); }\n\
/* é */ int main() { Square sq; return (int)total(sq); }\n";
const BROKEN_CPP: &str =
    "#include \"shapes.hpp\"\n/* é */ int broken() { return undefined_thing; }\n";

/// `line`'s 1-based UTF-16 column of `needle` (its `nth` occurrence),
/// checked to differ from the byte column.
fn column(text: &str, line: usize, needle: &str, nth: usize) -> u64 {
    let line = text.lines().nth(line - 1).unwrap();
    let at = line
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("{needle} in {line}"))
        .0;
    let column = line[..at].encode_utf16().count() as u64 + 1;
    assert_ne!(column, at as u64 + 1, "the fixture must not be ASCII there");
    column
}

/// A position argument: `needle` on 1-based `line` of `file`.
fn at(file: &str, text: &str, line: usize, needle: &str, nth: usize) -> Value {
    json!({"filePath": file, "line": line, "column": column(text, line, needle, nth)})
}

fn with(mut args: Value, more: Value) -> Value {
    for (key, value) in more.as_object().unwrap() {
        args[key] = value.clone();
    }
    args
}

/// Each location as (file, line, column).
fn places(call: &Value) -> Vec<(String, u64, u64)> {
    structured(call)["locations"]
        .as_array()
        .unwrap_or_else(|| panic!("no locations in {call}"))
        .iter()
        .map(|l| {
            (
                l["filePath"].as_str().unwrap().to_owned(),
                l["line"].as_u64().unwrap(),
                l["column"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The names in a hierarchy's tree, each with its children's.
fn names(nodes: &Value) -> Vec<Value> {
    nodes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| json!([n["name"], names(&n["children"])]))
        .collect()
}

#[tokio::test]
async fn navigation_and_hierarchies_answer_from_clangd_in_utf16_columns() {
    require_node_deps();
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    session.write_file("compile_flags.txt", "-xc++\n-std=c++17\n");
    session.write_file("shapes.hpp", SHAPES_HPP);
    session.write_file("shapes.cpp", SHAPES_CPP);
    session.write_file("broken.cpp", BROKEN_CPP);
    session.write_file("notes.txt", "no server here\n");
    start_clangd(&session, "cpp").await;
    let (hpp, cpp) = (SHAPES_HPP, SHAPES_CPP);
    let call = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    let calls = json!([
        call("find_implementations", at("shapes.hpp", hpp, 2, "area", 0)),
        call("find_type_definition", at("shapes.cpp", cpp, 5, "sq", 0)),
        call("find_declaration", at("shapes.cpp", cpp, 5, "total", 0)),
        call(
            "get_call_hierarchy",
            with(
                at("shapes.cpp", cpp, 3, "twice", 0),
                json!({"direction": "incoming", "depth": 2})
            )
        ),
        call(
            "get_call_hierarchy",
            with(
                at("shapes.cpp", cpp, 4, "total", 0),
                json!({"direction": "outgoing"})
            )
        ),
        call(
            "get_type_hierarchy",
            with(
                at("shapes.hpp", hpp, 3, "Square", 0),
                json!({"direction": "supertypes"})
            )
        ),
        call(
            "get_type_hierarchy",
            with(
                at("shapes.hpp", hpp, 2, "Shape", 0),
                json!({"direction": "subtypes"})
            )
        ),
        call(
            "get_call_hierarchy",
            with(
                at("shapes.cpp", cpp, 3, "twice", 0),
                json!({"direction": "sideways"})
            )
        ),
        call(
            "lint_files",
            json!({"paths": ["broken.cpp", "shapes.cpp", "notes.txt", "missing.cpp", "../outside.cpp"]})
        ),
    ]);
    let loaded_before = session
        .lua("return { vim.fn.bufnr('broken.cpp'), vim.fn.bufnr('shapes.cpp') }")
        .await;
    assert_eq!(loaded_before, json!([-1, -1]), "never loaded before");
    let report = sdk_client(&url, &token, calls);
    let calls = report["calls"].as_array().unwrap();

    let square_area = ("shapes.hpp".to_owned(), 3, column(hpp, 3, "area", 0));
    assert_eq!(places(&calls[0]), [square_area], "the override");
    let square = ("shapes.hpp".to_owned(), 3, column(hpp, 3, "Square", 0));
    assert_eq!(places(&calls[1]), [square], "sq is a Square");
    let declared = ("shapes.hpp".to_owned(), 4, column(hpp, 4, "total", 0));
    assert_eq!(places(&calls[2]), [declared], "the prototype");
    let first = &structured(&calls[2])["locations"][0];
    assert_eq!(first["lineText"], hpp.lines().nth(3).unwrap());

    let callers = &structured(&calls[3])["items"];
    assert_eq!(
        names(callers),
        [json!(["twice", [["total", [["main", []]]]]])],
        "incoming, two levels: {callers}"
    );
    let twice = &callers[0];
    assert_eq!(
        (&twice["filePath"], &twice["line"], &twice["column"]),
        (
            &json!("shapes.cpp"),
            &json!(3),
            &json!(column(cpp, 3, "twice", 0))
        )
    );
    assert_eq!(twice["kind"], "Function");
    assert_eq!(twice["lineText"], cpp.lines().nth(2).unwrap());
    let callees = &structured(&calls[4])["items"];
    let mut called: Vec<String> = callees[0]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}:{}:{}",
                c["name"].as_str().unwrap(),
                c["filePath"].as_str().unwrap(),
                c["line"]
            )
        })
        .collect();
    called.sort();
    assert_eq!(
        called,
        ["area:shapes.hpp:2", "twice:shapes.cpp:3"],
        "outgoing: {callees}"
    );

    let supertypes = &structured(&calls[5])["items"];
    assert_eq!(names(supertypes), [json!(["Square", [["Shape", []]]])]);
    let shape = &supertypes[0]["children"][0];
    assert_eq!(
        shape["column"],
        column(hpp, 2, "Shape", 0),
        "UTF-16: {shape}"
    );
    let subtypes = &structured(&calls[6])["items"];
    assert_eq!(names(subtypes), [json!(["Shape", [["Square", []]]])]);

    assert_eq!(calls[7]["isError"], true, "{}", calls[7]);

    let linted = structured(&calls[8])["files"].as_array().unwrap().clone();
    let files: Vec<&str> = linted
        .iter()
        .map(|f| f["filePath"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "broken.cpp",
            "shapes.cpp",
            "notes.txt",
            "missing.cpp",
            "../outside.cpp"
        ],
        "in the order asked"
    );
    let broken = &linted[0]["errors"][0];
    assert_eq!(broken["severity"], "ERROR");
    assert_eq!(
        (&broken["line"], &broken["column"]),
        (
            &json!(2),
            &json!(column(BROKEN_CPP, 2, "undefined_thing", 0))
        ),
        "1-based UTF-16: {broken}"
    );
    assert!(
        linted[0].get("serversNotReported").is_none(),
        "clangd was waited for: {}",
        linted[0]
    );
    assert_eq!(linted[1]["errors"], json!([]));
    assert!(
        linted[3]["error"]
            .as_str()
            .unwrap()
            .contains("no such file")
    );
    assert!(
        linted[4]["error"]
            .as_str()
            .unwrap()
            .contains("outside the project")
    );
    let text = calls[8]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("shapes.cpp: no problems"), "{text}");
    let still_loaded = session
        .lua("return { vim.fn.bufloaded('broken.cpp'), vim.fn.bufloaded('shapes.cpp') }")
        .await;
    assert_eq!(still_loaded, json!([0, 0]), "let go of once linted");
}

#[tokio::test]
async fn a_server_without_type_hierarchies_is_named_as_such() {
    require_node_deps();
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    session.write_file(
        "models.py",
        "class Base:\n    pass\n\n\nclass Child(Base):\n    pass\n",
    );
    start_pyright(&session).await;
    let report = sdk_client(
        &url,
        &token,
        json!([{"name": "get_type_hierarchy", "arguments": {"filePath": "models.py", "line": 5, "column": 7, "direction": "supertypes"}}]),
    );
    let call = &report["calls"][0];
    assert_eq!(call["isError"], true, "{call}");
    let text = call["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("does not support type hierarchies"), "{text}");
}
