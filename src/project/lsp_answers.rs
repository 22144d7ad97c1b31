//! The language servers' own answers, as Lua passes them on (each
//! response with its client's `offset_encoding`), read here: locations
//! (`Location`, `Location[]`, `LocationLink[]`), document symbols
//! (`DocumentSymbol[]` with children, or `SymbolInformation[]`) and
//! workspace symbols (`SymbolInformation[]` or `WorkspaceSymbol[]`).
//! Positions stay 0-based, in the server's encoding, until
//! [`utf16_column`] converts a column with its line's text.

use crate::uri::path_of;
use serde_json::Value;

/// How a server counts columns (LSP `PositionEncodingKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
    Utf32,
}

impl Encoding {
    pub fn parse(name: Option<&str>) -> Encoding {
        match name {
            Some("utf-8") => Encoding::Utf8,
            Some("utf-32") => Encoding::Utf32,
            _ => Encoding::Utf16,
        }
    }
}

/// A position a server named: 0-based line, column in `encoding`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// Absolute (a `file:` URI's path), or the URI itself for other schemes.
    pub path: String,
    pub line: u64,
    pub character: u64,
    pub encoding: Encoding,
}

/// A symbol a server listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    /// `Function`, `Class`, … (LSP `SymbolKind`).
    pub kind: String,
    pub at: Position,
}

/// Each `{encoding, result}` of `answer.responses`.
fn responses(answer: &Value) -> impl Iterator<Item = (Encoding, &Value)> {
    answer
        .get("responses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|r| {
            let encoding = Encoding::parse(r.get("encoding").and_then(Value::as_str));
            (encoding, r.get("result").unwrap_or(&Value::Null))
        })
}

/// A result that is one item or a list of them (an empty Lua table may
/// arrive as an empty map).
fn items(result: &Value) -> Vec<&Value> {
    match result {
        Value::Array(list) => list.iter().collect(),
        Value::Object(map) if map.is_empty() => vec![],
        Value::Null => vec![],
        one => vec![one],
    }
}

/// `range.start` as (line, character).
fn start(range: Option<&Value>) -> Option<(u64, u64)> {
    let start = range?.get("start")?;
    Some((
        start.get("line")?.as_u64()?,
        start.get("character")?.as_u64()?,
    ))
}

/// Every location of a definition or references answer.
pub fn locations(answer: &Value) -> Vec<Position> {
    let mut found = vec![];
    for (encoding, result) in responses(answer) {
        for item in items(result) {
            let uri = item.get("targetUri").or_else(|| item.get("uri"));
            let range = item
                .get("targetSelectionRange")
                .or_else(|| item.get("range"));
            if let (Some(uri), Some((line, character))) =
                (uri.and_then(Value::as_str), start(range))
            {
                found.push(Position {
                    path: path_of(uri),
                    line,
                    character,
                    encoding,
                });
            }
        }
    }
    found
}

/// The symbols of a documentSymbol answer for `path`, children after
/// their parent.
pub fn document_symbols(answer: &Value, path: &str) -> Vec<Symbol> {
    fn add(symbol: &Value, path: &str, encoding: Encoding, out: &mut Vec<Symbol>) {
        let range = symbol
            .get("selectionRange")
            .or_else(|| symbol.get("range"))
            .or_else(|| symbol.get("location").and_then(|l| l.get("range")));
        if let Some((line, character)) = start(range) {
            out.push(Symbol {
                name: name(symbol),
                kind: kind(symbol),
                at: Position {
                    path: path.to_owned(),
                    line,
                    character,
                    encoding,
                },
            });
        }
        for child in symbol.get("children").map(items).unwrap_or_default() {
            add(child, path, encoding, out);
        }
    }
    let mut out = vec![];
    for (encoding, result) in responses(answer) {
        for symbol in items(result) {
            add(symbol, path, encoding, &mut out);
        }
    }
    out
}

/// The symbols of a workspace/symbol answer; a `WorkspaceSymbol` whose
/// location has no range is at the top of its file.
pub fn workspace_symbols(answer: &Value) -> Vec<Symbol> {
    let mut out = vec![];
    for (encoding, result) in responses(answer) {
        for symbol in items(result) {
            let Some(location) = symbol.get("location") else {
                continue;
            };
            let Some(uri) = location.get("uri").and_then(Value::as_str) else {
                continue;
            };
            let (line, character) = start(location.get("range")).unwrap_or((0, 0));
            out.push(Symbol {
                name: name(symbol),
                kind: kind(symbol),
                at: Position {
                    path: path_of(uri),
                    line,
                    character,
                    encoding,
                },
            });
        }
    }
    out
}

fn name(symbol: &Value) -> String {
    symbol
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// LSP `SymbolKind` names, from 1.
const KINDS: [&str; 26] = [
    "File",
    "Module",
    "Namespace",
    "Package",
    "Class",
    "Method",
    "Property",
    "Field",
    "Constructor",
    "Enum",
    "Interface",
    "Function",
    "Variable",
    "Constant",
    "String",
    "Number",
    "Boolean",
    "Array",
    "Object",
    "Key",
    "Null",
    "EnumMember",
    "Struct",
    "Event",
    "Operator",
    "TypeParameter",
];

/// A `kind` as its LSP name (`Function`, `Class`, …).
pub fn kind(symbol: &Value) -> String {
    match symbol.get("kind") {
        Some(Value::Number(n)) => n
            .as_u64()
            .and_then(|n| KINDS.get((n as usize).checked_sub(1)?))
            .map_or_else(|| n.to_string(), |k| (*k).to_owned()),
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }
}

/// Column `index` (0-based, in `encoding`) of `text` in UTF-16 code units;
/// unchanged when the text is shorter than the index says (the server saw
/// other text than this).
pub fn utf16_column(text: &str, index: u64, encoding: Encoding) -> u64 {
    let bytes = match encoding {
        Encoding::Utf16 => return index,
        Encoding::Utf8 => {
            let Ok(at) = usize::try_from(index) else {
                return index;
            };
            if at > text.len() {
                return index;
            }
            // Inside a character: the character it is in.
            (0..=at)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0)
        }
        Encoding::Utf32 => {
            let Ok(count) = usize::try_from(index) else {
                return index;
            };
            match text.char_indices().nth(count) {
                Some((at, _)) => at,
                None if text.chars().count() == count => text.len(),
                None => return index,
            }
        }
    };
    text[..bytes].encode_utf16().count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn columns_convert_from_every_encoding() {
        let text = "é😀x";
        // é: 2 bytes, 1 unit; 😀: 4 bytes, 2 units.
        assert_eq!(utf16_column(text, 6, Encoding::Utf8), 3);
        assert_eq!(utf16_column(text, 2, Encoding::Utf32), 3);
        assert_eq!(utf16_column(text, 3, Encoding::Utf32), 4, "the end");
        assert_eq!(utf16_column(text, 3, Encoding::Utf16), 3);
        assert_eq!(utf16_column(text, 4, Encoding::Utf8), 1, "inside 😀");
        assert_eq!(utf16_column(text, 40, Encoding::Utf8), 40, "past the end");
        assert_eq!(utf16_column(text, 9, Encoding::Utf32), 9);
        assert_eq!(utf16_column("", 0, Encoding::Utf8), 0);
    }

    #[test]
    fn locations_come_from_every_shape() {
        let range =
            json!({"start": {"line": 2, "character": 5}, "end": {"line": 2, "character": 6}});
        let answer = json!({"responses": [
            {"encoding": "utf-8", "result": {"uri": "file:///w/a%20b.rs", "range": range}},
            {"encoding": "utf-16", "result": [
                {"targetUri": "file:///w/c.rs", "targetRange": range,
                 "targetSelectionRange": {"start": {"line": 7, "character": 1}, "end": {"line": 7, "character": 2}}},
                {"uri": "jdt://contents/x", "range": range},
                {"uri": "file:///w/no-range.rs"},
            ]},
            {"encoding": "utf-32", "result": {}},
        ]});
        assert_eq!(
            locations(&answer),
            [
                Position {
                    path: "/w/a b.rs".into(),
                    line: 2,
                    character: 5,
                    encoding: Encoding::Utf8
                },
                Position {
                    path: "/w/c.rs".into(),
                    line: 7,
                    character: 1,
                    encoding: Encoding::Utf16
                },
                Position {
                    path: "jdt://contents/x".into(),
                    line: 2,
                    character: 5,
                    encoding: Encoding::Utf16
                },
            ]
        );
        assert!(locations(&json!({})).is_empty());
    }

    #[test]
    fn symbols_keep_their_names_kinds_and_children() {
        let at = |line: u64| json!({"start": {"line": line, "character": 4}, "end": {"line": line, "character": 9}});
        let nested = json!({"responses": [{"encoding": "utf-16", "result": [
            {"name": "Outer", "kind": 5, "range": at(0), "selectionRange": at(1),
             "children": [{"name": "inner", "kind": 6, "range": at(2), "selectionRange": at(3)}]},
            {"name": "flat", "kind": 99, "location": {"uri": "file:///w/a.rs", "range": at(8)}},
        ]}]});
        let found = document_symbols(&nested, "/w/a.rs");
        let summary: Vec<_> = found
            .iter()
            .map(|s| (s.name.as_str(), s.kind.as_str(), s.at.line))
            .collect();
        assert_eq!(
            summary,
            [
                ("Outer", "Class", 1),
                ("inner", "Method", 3),
                ("flat", "99", 8)
            ]
        );
        let workspace = json!({"responses": [{"encoding": "utf-8", "result": [
            {"name": "f", "kind": 12, "location": {"uri": "file:///w/b.rs", "range": at(4)}},
            {"name": "g", "kind": 12, "location": {"uri": "file:///w/c.rs"}},
            {"name": "no location", "kind": 12},
        ]}]});
        let found = workspace_symbols(&workspace);
        assert_eq!(found.len(), 2);
        assert_eq!(
            (found[0].kind.as_str(), found[0].at.path.as_str()),
            ("Function", "/w/b.rs")
        );
        assert_eq!((found[1].at.line, found[1].at.character), (0, 0));
    }
}
