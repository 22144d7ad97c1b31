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
    let (Some(first), Some(last)) = (lines.first(), lines.last()) else {
        return Err("the patch is empty".into());
    };
    if first.trim() != BEGIN || last.trim() != END {
        return Err(format!(
            "the patch must start with `{BEGIN}` and end with `{END}`"
        ));
    }
    let body = &lines[1..lines.len() - 1];
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
    match (lines.first(), lines.last()) {
        (Some(first), Some(last))
            if first.trim_start().starts_with("<<") && last.trim().ends_with("EOF") =>
        {
            &lines[1..lines.len() - 1]
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
        let parsed = match line.chars().next() {
            Some(' ') => PatchLine::Context(line[1..].to_owned()),
            // An empty context line whose space was stripped.
            None => PatchLine::Context(String::new()),
            Some('-') => PatchLine::Removed(line[1..].to_owned()),
            Some('+') => PatchLine::Added(line[1..].to_owned()),
            Some(_) => {
                return Err(format!(
                    "the change to {path} has a line that is neither context, `-` nor `+`: `{line}`"
                ));
            }
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

/// `text` with `chunks` applied, as Codex writes it (every line followed by
/// a newline), or which chunk does not apply.
pub fn apply(text: &str, chunks: &[Chunk]) -> Result<String, String> {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut from = 0;
    // (where, how many old lines, the new lines), in order.
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
        let old = chunk.old();
        if old.is_empty() {
            replacements.push((lines.len(), 0, chunk.new_lines()));
            continue;
        }
        let found = seek(&lines, &old, from, chunk.at_eof).ok_or_else(|| {
            format!(
                "change {} does not apply: its lines starting with `{}` are not in the file",
                number + 1,
                old[0]
            )
        })?;
        replacements.push((found, old.len(), chunk.new_lines()));
        from = found + old.len();
    }
    for (at, count, new) in replacements.into_iter().rev() {
        lines.splice(at..at + count, new);
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

/// Where `wanted` starts in `lines` at or after `from`: exactly, then
/// ignoring trailing whitespace, then surrounding whitespace, then
/// typographic punctuation; at the end of the file first when `at_eof`.
fn seek(lines: &[String], wanted: &[&str], from: usize, at_eof: bool) -> Option<usize> {
    if wanted.len() > lines.len() {
        return None;
    }
    let last_start = lines.len() - wanted.len();
    let compare: [fn(&str) -> String; 4] = [
        |s| s.to_owned(),
        |s| s.trim_end().to_owned(),
        |s| s.trim().to_owned(),
        |s| plain_punctuation(s.trim()),
    ];
    for norm in compare {
        let matches =
            |start: usize| (0..wanted.len()).all(|i| norm(&lines[start + i]) == norm(wanted[i]));
        if at_eof && last_start >= from && matches(last_start) {
            return Some(last_start);
        }
        if let Some(found) = (from..=last_start).find(|&start| matches(start)) {
            return Some(found);
        }
    }
    None
}

/// Typographic dashes, quotes and spaces as their ASCII counterparts.
fn plain_punctuation(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
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
}
