//! Codex's own patch format, as its `apply_patch` tool takes it:
//!
//! ```text
//! *** Begin Patch
//! *** Add File: new.txt
//! +its lines
//! *** Update File: a.txt
//! *** Move to: b.txt        (optional)
//! @@ a line above the change (optional)
//!  context
//! -removed
//! +added
//! *** End of File          (optional: the chunk ends the file)
//! *** Delete File: old.txt
//! *** End Patch
//! ```
//!
//! Read into [`FileOp`]s, applied to a file's text the way Codex applies
//! it (each chunk's old lines found below the previous chunk, exactly,
//! then ignoring trailing whitespace, then all surrounding whitespace, then
//! typographic punctuation), and written back out, so the person's edits
//! to a proposal can go to Codex as a patch of its own.

/// What a patch does to one file.
#[derive(Debug, Clone, PartialEq)]
pub enum FileOp {
    Add {
        path: String,
        lines: Vec<String>,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<Chunk>,
    },
}

impl FileOp {
    /// The path the patch names (relative to Codex's cwd, or absolute).
    pub fn path(&self) -> &str {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path } | FileOp::Update { path, .. } => {
                path
            }
        }
    }
}

/// One `@@` chunk of an update.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// The text after `@@ `: a line at or above the change that narrows
    /// where it is.
    pub context: Option<String>,
    pub lines: Vec<PatchLine>,
    /// `*** End of File`: the chunk's old lines end the file.
    pub at_eof: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PatchLine {
    Context(String),
    Removed(String),
    Added(String),
}

impl Chunk {
    fn old(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|line| match line {
                PatchLine::Context(text) | PatchLine::Removed(text) => Some(text.as_str()),
                PatchLine::Added(_) => None,
            })
            .collect()
    }

    fn new_lines(&self) -> Vec<String> {
        self.lines
            .iter()
            .filter_map(|line| match line {
                PatchLine::Context(text) | PatchLine::Added(text) => Some(text.clone()),
                PatchLine::Removed(_) => None,
            })
            .collect()
    }
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const EOF_MARK: &str = "*** End of File";

/// The files of `text`, in order, or what is wrong with it.
pub fn parse(text: &str) -> Result<Vec<FileOp>, String> {
    let lines: Vec<&str> = text
        .trim()
        .lines()
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect();
    let lines = unwrap_heredoc(&lines);
    if lines.is_empty() {
        return Err("the patch is empty".into());
    }
    let [first, body @ .., last] = lines else {
        return Err(format!(
            "the patch must start with `{BEGIN}` and end with `{END}`"
        ));
    };
    if first.trim() != BEGIN || last.trim() != END {
        return Err(format!(
            "the patch must start with `{BEGIN}` and end with `{END}`"
        ));
    }
    let mut files = vec![];
    let mut at = 0;
    while at < body.len() {
        let line = body[at].trim_end();
        at += 1;
        if let Some(path) = line.strip_prefix(ADD) {
            let mut added = vec![];
            while let Some(text) = body.get(at).and_then(|l| l.strip_prefix('+')) {
                added.push(text.to_owned());
                at += 1;
            }
            files.push(FileOp::Add {
                path: path.trim().to_owned(),
                lines: added,
            });
        } else if let Some(path) = line.strip_prefix(DELETE) {
            files.push(FileOp::Delete {
                path: path.trim().to_owned(),
            });
        } else if let Some(path) = line.strip_prefix(UPDATE) {
            let move_to = body
                .get(at)
                .and_then(|l| l.strip_prefix(MOVE))
                .map(|to| to.trim().to_owned());
            if move_to.is_some() {
                at += 1;
            }
            let (chunks, next) = update_chunks(body, at, path.trim())?;
            at = next;
            files.push(FileOp::Update {
                path: path.trim().to_owned(),
                move_to,
                chunks,
            });
        } else if line.trim().is_empty() {
            continue;
        } else {
            return Err(format!(
                "`{line}` is not a file header (`{ADD}`, `{DELETE}` or `{UPDATE}`)"
            ));
        }
    }
    if files.is_empty() {
        return Err("the patch changes no file".into());
    }
    Ok(files)
}

/// A patch sent as a shell heredoc (`<<'EOF'` … `EOF`) without the shell.
fn unwrap_heredoc<'a>(lines: &'a [&'a str]) -> &'a [&'a str] {
    match lines {
        [first, inside @ .., last]
            if first.trim_start().starts_with("<<") && last.trim().ends_with("EOF") =>
        {
            inside
        }
        _ => lines,
    }
}

/// The chunks of an update starting at `at`, and where the next file starts.
fn update_chunks(body: &[&str], mut at: usize, path: &str) -> Result<(Vec<Chunk>, usize), String> {
    let mut chunks: Vec<Chunk> = vec![];
    while at < body.len() {
        let line = body[at];
        if line.starts_with("*** ") && line.trim_end() != EOF_MARK {
            break;
        }
        at += 1;
        if line.trim_end() == EOF_MARK {
            match chunks.last_mut() {
                Some(chunk) => chunk.at_eof = true,
                None => return Err(format!("`{EOF_MARK}` before any change to {path}")),
            }
            continue;
        }
        if line.trim_end() == "@@" || line.starts_with("@@ ") {
            let context = line.strip_prefix("@@ ").map(str::to_owned);
            chunks.push(Chunk {
                context,
                lines: vec![],
                at_eof: false,
            });
            continue;
        }
        let parsed = if line.is_empty() {
            // An empty context line whose space was stripped.
            PatchLine::Context(String::new())
        } else if let Some(text) = line.strip_prefix(' ') {
            PatchLine::Context(text.to_owned())
        } else if let Some(text) = line.strip_prefix('-') {
            PatchLine::Removed(text.to_owned())
        } else if let Some(text) = line.strip_prefix('+') {
            PatchLine::Added(text.to_owned())
        } else {
            return Err(format!(
                "the change to {path} has a line that is neither context, `-` nor `+`: `{line}`"
            ));
        };
        if chunks.is_empty() {
            // The first chunk may come without its `@@`.
            chunks.push(Chunk {
                context: None,
                lines: vec![],
                at_eof: false,
            });
        }
        if let Some(chunk) = chunks.last_mut() {
            chunk.lines.push(parsed);
        }
    }
    if chunks.iter().all(|chunk| chunk.lines.is_empty()) {
        return Err(format!("the update of {path} changes nothing"));
    }
    Ok((chunks, at))
}

/// `text` with `chunks` applied, as Codex writes it, or which chunk does
/// not apply. Codex's rules: each chunk
/// is looked for below the previous one (and below its `@@` line); one
/// with no old lines goes at the end of the file, before a last blank
/// line; old lines ending in an empty one are looked for without it too;
/// the changes are then made in the file's order, whatever the chunks'.
pub fn apply(text: &str, chunks: &[Chunk]) -> Result<String, String> {
    let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    if lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    let mut from = 0;
    // (where, how many old lines, the new lines).
    let mut replacements: Vec<(usize, usize, Vec<String>)> = vec![];
    for (number, chunk) in chunks.iter().enumerate() {
        if let Some(context) = &chunk.context {
            let found = seek(&lines, &[context.as_str()], from, false).ok_or_else(|| {
                format!(
                    "change {} does not apply: the line `{context}` is not in the file",
                    number + 1
                )
            })?;
            from = found + 1;
        }
        let mut old = chunk.old();
        let mut new = chunk.new_lines();
        if old.is_empty() {
            let end = lines.len() - usize::from(lines.last().is_some_and(String::is_empty));
            replacements.push((end, 0, new));
            continue;
        }
        let mut found = seek(&lines, &old, from, chunk.at_eof);
        if found.is_none() && old.last().is_some_and(|line| line.is_empty()) {
            old.pop();
            if new.last().is_some_and(String::is_empty) {
                new.pop();
            }
            found = seek(&lines, &old, from, chunk.at_eof);
        }
        let found = found.ok_or_else(|| {
            format!(
                "change {} does not apply: its lines starting with `{}` are not in the file",
                number + 1,
                old.first().copied().unwrap_or_default()
            )
        })?;
        replacements.push((found, old.len(), new));
        from = found + old.len();
    }
    replacements.sort_by_key(|(at, _, _)| *at);
    for (at, count, new) in replacements.into_iter().rev() {
        // Chunks may overlap (one at the end of the file is found there
        // whatever came before): never past what is left.
        let at = at.min(lines.len());
        let end = (at + count).min(lines.len());
        lines.splice(at..end, new);
    }
    // Codex ends the file with a newline unless its last line is empty
    // (that one is the newline): a last blank line goes, as it does.
    if lines.last().is_none_or(|line| !line.is_empty()) {
        lines.push(String::new());
    }
    Ok(lines.join("\n"))
}

/// Where `wanted` starts in `lines` at or after `from` (at the end of the
/// file, and only there, when `at_eof`): exactly, then ignoring trailing
/// whitespace, then surrounding whitespace, then typographic punctuation.
/// Nothing is allocated per comparison: a patch may be long.
fn seek(lines: &[String], wanted: &[&str], from: usize, at_eof: bool) -> Option<usize> {
    if wanted.is_empty() {
        return Some(from);
    }
    if wanted.len() > lines.len() {
        return None;
    }
    let last_start = lines.len() - wanted.len();
    let first_start = if at_eof { last_start } else { from };
    let same: [fn(&str, &str) -> bool; 4] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
        |a, b| {
            let (a, b) = (a.trim().chars(), b.trim().chars());
            a.map(plain_punctuation).eq(b.map(plain_punctuation))
        },
    ];
    same.into_iter().find_map(|same| {
        (first_start..=last_start)
            .find(|&start| (0..wanted.len()).all(|i| same(&lines[start + i], wanted[i])))
    })
}

/// A typographic dash, quote or space as its ASCII counterpart.
fn plain_punctuation(c: char) -> char {
    match c {
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        other => other,
    }
}

/// `ops` as a patch Codex applies.
pub fn render(ops: &[FileOp]) -> String {
    let mut out = vec![BEGIN.to_owned()];
    for op in ops {
        match op {
            FileOp::Add { path, lines } => {
                out.push(format!("{ADD}{path}"));
                out.extend(lines.iter().map(|line| format!("+{line}")));
            }
            FileOp::Delete { path } => out.push(format!("{DELETE}{path}")),
            FileOp::Update {
                path,
                move_to,
                chunks,
            } => {
                out.push(format!("{UPDATE}{path}"));
                if let Some(to) = move_to {
                    out.push(format!("{MOVE}{to}"));
                }
                for chunk in chunks {
                    out.push(match &chunk.context {
                        Some(context) => format!("@@ {context}"),
                        None => "@@".to_owned(),
                    });
                    out.extend(chunk.lines.iter().map(|line| match line {
                        PatchLine::Context(text) => format!(" {text}"),
                        PatchLine::Removed(text) => format!("-{text}"),
                        PatchLine::Added(text) => format!("+{text}"),
                    }));
                    if chunk.at_eof {
                        out.push(EOF_MARK.to_owned());
                    }
                }
            }
        }
    }
    out.push(END.to_owned());
    out.join("\n")
}

/// An update of `path` from `old` to `new`, whole: every old line removed,
/// every new one added (Codex finds the old lines at the top of the file).
pub fn replace_whole(path: &str, move_to: Option<String>, old: &str, new: &str) -> FileOp {
    let mut lines: Vec<PatchLine> = old
        .lines()
        .map(|line| PatchLine::Removed(line.to_owned()))
        .collect();
    lines.extend(new.lines().map(|line| PatchLine::Added(line.to_owned())));
    if new.ends_with("\n\n") {
        // Codex takes a last empty line for the file's last newline: one
        // more keeps the blank line the person left.
        lines.push(PatchLine::Added(String::new()));
    }
    FileOp::Update {
        path: path.to_owned(),
        move_to,
        chunks: vec![Chunk {
            context: None,
            lines,
            at_eof: true,
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "*** Begin Patch
*** Add File: new.txt
+hello
+world
*** Update File: src/a.rs
*** Move to: src/b.rs
@@ fn main() {
-    old();
+    new();
*** Delete File: gone.txt
*** End Patch";

    #[test]
    fn reads_every_kind_of_file_change_and_writes_it_back() {
        let ops = parse(PATCH).unwrap();
        assert_eq!(ops.len(), 3);
        assert_eq!(
            ops[0],
            FileOp::Add {
                path: "new.txt".into(),
                lines: vec!["hello".into(), "world".into()]
            }
        );
        let FileOp::Update {
            path,
            move_to,
            chunks,
        } = &ops[1]
        else {
            panic!("an update: {:?}", ops[1]);
        };
        assert_eq!(path, "src/a.rs");
        assert_eq!(move_to.as_deref(), Some("src/b.rs"));
        assert_eq!(chunks[0].context.as_deref(), Some("fn main() {"));
        assert_eq!(
            chunks[0].lines,
            [
                PatchLine::Removed("    old();".into()),
                PatchLine::Added("    new();".into())
            ]
        );
        assert_eq!(ops[2].path(), "gone.txt");
        assert_eq!(render(&ops), PATCH, "written back as it came");
        assert_eq!(parse(&render(&ops)).unwrap(), ops);
    }

    #[test]
    fn applies_chunks_below_their_context_and_each_other() {
        let text = "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n";
        let ops = parse(
            "*** Begin Patch\n*** Update File: f.rs\n@@ fn b() {\n-    x();\n+    y();\n*** End Patch",
        )
        .unwrap();
        let FileOp::Update { chunks, .. } = &ops[0] else {
            panic!()
        };
        assert_eq!(
            apply(text, chunks).unwrap(),
            "fn a() {\n    x();\n}\nfn b() {\n    y();\n}\n",
            "the x() below `fn b() {{`, not the first one"
        );
        // Two chunks without context: the second is found below the first.
        let two = parse("*** Begin Patch\n*** Update File: f.rs\n@@\n-    x();\n+    one();\n@@\n-    x();\n+    two();\n*** End Patch").unwrap();
        let FileOp::Update { chunks, .. } = &two[0] else {
            panic!()
        };
        assert_eq!(
            apply(text, chunks).unwrap(),
            "fn a() {\n    one();\n}\nfn b() {\n    two();\n}\n"
        );
    }

    #[test]
    fn finds_lines_that_differ_only_in_whitespace_or_punctuation() {
        let text = "say(\u{201C}hi\u{201D})   \nend\n";
        let ops = parse(
            "*** Begin Patch\n*** Update File: f\n-say(\"hi\")\n+say(\"bye\")\n*** End Patch",
        )
        .unwrap();
        let FileOp::Update { chunks, .. } = &ops[0] else {
            panic!()
        };
        assert_eq!(apply(text, chunks).unwrap(), "say(\"bye\")\nend\n");
        let missing =
            parse("*** Begin Patch\n*** Update File: f\n-nowhere\n+x\n*** End Patch").unwrap();
        let FileOp::Update { chunks, .. } = &missing[0] else {
            panic!()
        };
        let why = apply(text, chunks).unwrap_err();
        assert!(why.contains("`nowhere`"), "{why}");
    }

    #[test]
    fn an_end_of_file_chunk_is_matched_at_the_end_first() {
        let text = "x\ny\nx\n";
        let ops = parse(
            "*** Begin Patch\n*** Update File: f\n@@\n-x\n+z\n*** End of File\n*** End Patch",
        )
        .unwrap();
        let FileOp::Update { chunks, .. } = &ops[0] else {
            panic!()
        };
        assert!(chunks[0].at_eof);
        assert_eq!(apply(text, chunks).unwrap(), "x\ny\nz\n");
    }

    #[test]
    fn a_whole_replacement_applies_to_the_old_text() {
        let op = replace_whole("f", None, "a\nb\n", "c\n");
        let FileOp::Update { chunks, .. } = &op else {
            panic!()
        };
        assert_eq!(apply("a\nb\n", chunks).unwrap(), "c\n");
        for (old, new) in [("a\n\n", "b\n\n"), ("", "x\n"), ("a\n", "")] {
            let whole = replace_whole("f", None, old, new);
            let FileOp::Update { chunks, .. } = &whole else {
                panic!()
            };
            assert_eq!(apply(old, chunks).as_deref(), Ok(new), "{old:?} to {new:?}");
        }
        let text = render(&[op]);
        assert_eq!(
            text,
            "*** Begin Patch\n*** Update File: f\n@@\n-a\n-b\n+c\n*** End of File\n*** End Patch"
        );
    }

    #[test]
    fn malformed_patches_say_what_is_wrong() {
        for (patch, says) in [
            ("", "empty"),
            ("*** Begin Patch\n*** Update File: f\n+x", "must start with"),
            ("*** Begin Patch\n*** End Patch", "changes no file"),
            ("*** Begin Patch\nhello\n*** End Patch", "not a file header"),
            (
                "*** Begin Patch\n*** Update File: f\n*** End Patch",
                "changes nothing",
            ),
            (
                "*** Begin Patch\n*** Update File: f\n@@\n?x\n*** End Patch",
                "neither context",
            ),
        ] {
            let why = parse(patch).unwrap_err();
            assert!(why.contains(says), "{patch:?}: {why}");
        }
        let heredoc = "<<'EOF'\n*** Begin Patch\n*** Delete File: f\n*** End Patch\nEOF";
        assert_eq!(
            parse(heredoc).unwrap(),
            [FileOp::Delete { path: "f".into() }]
        );
    }
    fn chunks_of(patch: &str) -> Vec<Chunk> {
        let body = format!("*** Begin Patch\n*** Update File: f\n{patch}\n*** End Patch");
        match parse(&body).unwrap().remove(0) {
            FileOp::Update { chunks, .. } => chunks,
            other => panic!("an update: {other:?}"),
        }
    }

    #[test]
    fn applies_as_codex_does_whatever_order_the_chunks_come_in() {
        for (text, patch, wanted) in [
            // An addition (at the end) before a change higher up, which
            // shortens the file: Codex sorts the changes by place.
            ("a\nb\nc\n", "@@\n+x\n@@\n-a\n-b", Ok("c\nx\n")),
            // An addition goes before the blank line that ends a file
            // (which Codex then takes for the file's last newline).
            ("a\n\n", "@@\n+x", Ok("a\nx\n")),
            // An addition ignores its `@@` line and goes at the end.
            ("a\nb\n", "@@ a\n+x", Ok("a\nb\nx\n")),
            // Old lines ending in an empty one: found without it too.
            ("a\nb\n", "@@\n-b\n+c\n ", Ok("a\nc\n")),
            // At the end of the file means there and nowhere else.
            ("x\ny\n", "@@\n-x\n+z\n*** End of File", Err("`x`")),
            ("x\ny\n", "@@\n-y\n+z\n*** End of File", Ok("x\nz\n")),
            // A last line left empty is the file's last newline; no line
            // left is an empty file.
            ("a\n", "@@\n-a\n+b\n+", Ok("b\n")),
            ("a\n", "@@\n-a", Ok("")),
        ] {
            let got = apply(text, &chunks_of(patch));
            match wanted {
                Ok(wanted) => assert_eq!(got.as_deref(), Ok(wanted), "{patch:?} on {text:?}"),
                Err(says) => {
                    let why = got.unwrap_err();
                    assert!(why.contains(says), "{patch:?} on {text:?}: {why}");
                }
            }
        }
    }

    /// Lines a patch is made of, any of which may come anywhere.
    const PIECES: [&str; 16] = [
        "*** Begin Patch",
        "*** End Patch",
        "*** Update File: f",
        "*** Add File: g",
        "*** Delete File: h",
        "*** Move to: i",
        "*** End of File",
        "@@",
        "@@ a",
        "+x",
        "-a",
        "-b",
        " c",
        "",
        "<<EOF",
        "EOF",
    ];

    proptest::proptest! {
        #[test]
        fn no_patch_text_makes_reading_or_applying_panic(
            picks in proptest::collection::vec(0..PIECES.len(), 0..24),
            file in proptest::collection::vec(0..4usize, 0..8),
            framed in proptest::bool::ANY,
        ) {
            let mut lines: Vec<&str> = picks.iter().map(|&i| PIECES[i]).collect();
            if framed {
                lines.insert(0, "*** Begin Patch");
                lines.push("*** End Patch");
            }
            let text: String = file.iter().map(|&i| ["a\n", "b\n", "c\n", "\n"][i]).collect();
            if let Ok(ops) = parse(&lines.join("\n")) {
                for op in ops {
                    if let FileOp::Update { chunks, .. } = op {
                        let _ = apply(&text, &chunks);
                    }
                }
            }
        }
    }

    #[test]
    fn odd_patch_text_is_an_error_not_a_panic() {
        for patch in ["<<EOF", "<<'EOF'\nEOF", "*** Begin Patch", "\u{e9}", "-"] {
            assert!(parse(patch).is_err(), "{patch:?}");
        }
    }
}
