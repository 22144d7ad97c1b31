//! Language servers' edits applied here, to the text the host already read
//! for the diff: a `WorkspaceEdit` split by file, and `TextEdit`s applied
//! to a `\n` text with positions in the server's offset encoding. Nothing
//! touches a buffer, so nothing changes before the person approves.

use serde_json::Value;

use crate::nvim::seam::items;
use crate::project::lsp_answers::Encoding;
use crate::uri::path_of;

/// The files a `WorkspaceEdit` changes, each with its `TextEdit`s in the
/// order the server listed them, files in path order; or why it cannot be
/// shown as diffs (it creates, renames or deletes a file).
pub fn by_file(edit: &Value) -> Result<Vec<(String, Vec<Value>)>, String> {
    let mut files: Vec<(String, Vec<Value>)> = vec![];
    let mut add = |uri: &str, edits: &Value| {
        let path = path_of(uri);
        let list = items(edits).cloned();
        match files.iter_mut().find(|(known, _)| *known == path) {
            Some((_, known)) => known.extend(list),
            None => files.push((path, list.collect())),
        }
    };
    if let Some(changes) = edit.get("documentChanges").and_then(Value::as_array) {
        for change in changes {
            if let Some(kind) = change.get("kind").and_then(Value::as_str) {
                return Err(format!(
                    "the edit would {kind} a file, which cannot be reviewed as a diff"
                ));
            }
            let uri = change.pointer("/textDocument/uri").and_then(Value::as_str);
            if let Some(uri) = uri {
                add(uri, change.get("edits").unwrap_or(&Value::Null));
            }
        }
    } else if let Some(changes) = edit.get("changes").and_then(Value::as_object) {
        for (uri, edits) in changes {
            add(uri, edits);
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

/// `text` (`\n` newlines) with LSP `edits` applied; positions count in
/// `encoding`. Of edits at one place, the first listed ends up first; a
/// position past a line's end is its end, past the last line the text's.
pub fn apply(text: &str, edits: &[Value], encoding: Encoding) -> String {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(at, _)| at + 1))
        .collect();
    let offset = |position: Option<&Value>| -> usize {
        let number = |key: &str| {
            position
                .and_then(|p| p.get(key))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let Some(&first) = usize::try_from(number("line"))
            .ok()
            .and_then(|row| starts.get(row))
        else {
            return text.len();
        };
        let line_end = text[first..].find('\n').map_or(text.len(), |n| first + n);
        first + byte_in(&text[first..line_end], number("character"), encoding)
    };
    let mut list: Vec<(usize, usize, String, usize)> = edits
        .iter()
        .enumerate()
        .map(|(order, edit)| {
            let range = edit.get("range");
            let first = offset(range.and_then(|r| r.get("start")));
            let last = offset(range.and_then(|r| r.get("end"))).max(first);
            let new_text = edit
                .get("newText")
                .or_else(|| edit.pointer("/snippet/value"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .replace("\r\n", "\n");
            (first, last, new_text, order)
        })
        .collect();
    // From the end, so earlier offsets stay valid.
    list.sort_by(|a, b| b.0.cmp(&a.0).then(b.3.cmp(&a.3)));
    let mut out = text.to_owned();
    for (first, last, new_text, _) in list {
        out.replace_range(first..last.min(out.len()), &new_text);
    }
    out
}

/// The byte offset in `line` of column `index` counted in `encoding`;
/// the line's end when it is shorter.
fn byte_in(line: &str, index: u64, encoding: Encoding) -> usize {
    let Ok(index) = usize::try_from(index) else {
        return line.len();
    };
    match encoding {
        Encoding::Utf8 => (0..=index.min(line.len()))
            .rev()
            .find(|&at| line.is_char_boundary(at))
            .unwrap_or(0),
        Encoding::Utf32 => line
            .char_indices()
            .nth(index)
            .map_or(line.len(), |(at, _)| at),
        Encoding::Utf16 => {
            let mut units = 0;
            for (at, c) in line.char_indices() {
                if units >= index {
                    return at;
                }
                units += c.len_utf16();
            }
            line.len()
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn edit(from: (u64, u64), to: (u64, u64), text: &str) -> Value {
        json!({"range": {"start": {"line": from.0, "character": from.1},
                         "end": {"line": to.0, "character": to.1}}, "newText": text})
    }

    #[test]
    fn positions_count_in_the_servers_encoding() {
        // "é" is one UTF-16 unit and two bytes; "😀" two units, four bytes.
        let text = "é😀x = 1\n";
        let utf16 = apply(text, &[edit((0, 3), (0, 4), "y")], Encoding::Utf16);
        assert_eq!(utf16, "é😀y = 1\n");
        let utf8 = apply(text, &[edit((0, 6), (0, 7), "y")], Encoding::Utf8);
        assert_eq!(utf8, "é😀y = 1\n");
        let utf32 = apply(text, &[edit((0, 2), (0, 3), "y")], Encoding::Utf32);
        assert_eq!(utf32, "é😀y = 1\n");
    }

    #[test]
    fn edits_apply_from_the_end_and_those_at_one_place_in_their_order() {
        let edits = [
            edit((0, 0), (0, 0), "a"),
            edit((1, 0), (1, 3), "TWO"),
            edit((0, 0), (0, 0), "b"),
        ];
        assert_eq!(apply("one\ntwo\n", &edits, Encoding::Utf16), "abone\nTWO\n");
        let whole = apply(
            "int  f( ){}\n",
            &[edit((0, 0), (1, 0), "int f() {}\n")],
            Encoding::Utf8,
        );
        assert_eq!(whole, "int f() {}\n");
        let past_the_end = apply("a\nb", &[edit((1, 1), (5, 0), ";\r\n")], Encoding::Utf16);
        assert_eq!(past_the_end, "a\nb;\n", "CRLF in new text becomes \\n");
        let snippet = json!({"range": {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 99}},
                             "snippet": {"value": "!"}});
        assert_eq!(apply("ab\n", &[snippet], Encoding::Utf16), "ab!\n");
    }

    #[test]
    fn workspace_edits_split_by_file_and_file_operations_are_refused() {
        let one = edit((1, 4), (1, 5), "z");
        let document_changes = json!({"documentChanges": [
            {"textDocument": {"uri": "file:///w/b.py", "version": 1}, "edits": [one.clone()]},
            {"textDocument": {"uri": "file:///w/a%20b.py"}, "edits": {}},
            {"textDocument": {"uri": "file:///w/b.py"}, "edits": [one.clone()]},
        ]});
        let files = by_file(&document_changes).unwrap();
        assert_eq!(
            files,
            [
                ("/w/a b.py".to_owned(), vec![]),
                ("/w/b.py".to_owned(), vec![one.clone(), one.clone()])
            ]
        );
        let changes = json!({"changes": {"file:///w/c.py": [one.clone()]}});
        assert_eq!(by_file(&changes).unwrap()[0].0, "/w/c.py");
        let rename = json!({"documentChanges": [{"kind": "rename", "oldUri": "file:///a", "newUri": "file:///b"}]});
        assert!(by_file(&rename).unwrap_err().contains("rename a file"));
        assert!(by_file(&json!({})).unwrap().is_empty());
    }
}
