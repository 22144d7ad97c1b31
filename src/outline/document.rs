//! A buffer's text mirrored from `nvim_buf_lines_event`s, with its syntax
//! tree kept current by incremental reparses.

use tree_sitter::{InputEdit, Parser, Point, Tree};

use super::languages::{self, LanguageSpec};

pub struct Document {
    /// The buffer's lines without newlines; the text is `lines.join("\n") + "\n"`.
    lines: Vec<String>,
    /// Neovim's `b:changedtick` of the last change applied.
    tick: u64,
    filetype: String,
    syntax: Option<Syntax>,
}

/// Parser state for a filetype the host has a grammar for.
struct Syntax {
    spec: &'static LanguageSpec,
    parser: Parser,
    tree: Option<Tree>,
    /// Edits arrived since `tree` was parsed.
    stale: bool,
}

impl Document {
    pub fn new(lines: Vec<String>, tick: u64, filetype: &str) -> Self {
        let mut document = Document {
            lines,
            tick,
            filetype: String::new(),
            syntax: None,
        };
        document.set_filetype(filetype);
        document
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// Switches grammars when the buffer's filetype changed.
    pub fn set_filetype(&mut self, filetype: &str) {
        if self.filetype == filetype {
            return;
        }
        self.filetype = filetype.to_owned();
        self.syntax = languages::for_filetype(filetype).and_then(|spec| {
            let mut parser = Parser::new();
            parser.set_language(&spec.language()).ok()?;
            Some(Syntax {
                spec,
                parser,
                tree: None,
                stale: true,
            })
        });
    }

    /// Replaces lines `first..last` (`last = None`: to the end) as a lines
    /// event says; events older than what we have are ignored.
    pub fn apply(
        &mut self,
        tick: u64,
        first: usize,
        last: Option<usize>,
        replacement: Vec<String>,
    ) {
        if tick != 0 && tick <= self.tick {
            return;
        }
        self.tick = tick.max(self.tick);
        let first = first.min(self.lines.len());
        let last = last
            .unwrap_or(self.lines.len())
            .clamp(first, self.lines.len());
        let start_byte = self.byte_offset(first);
        let old_end_byte = start_byte
            + self.lines[first..last]
                .iter()
                .map(|l| l.len() + 1)
                .sum::<usize>();
        let new_end_byte = start_byte + replacement.iter().map(|l| l.len() + 1).sum::<usize>();
        let new_end_row = first + replacement.len();
        self.lines.splice(first..last, replacement);
        if self.lines.is_empty() {
            self.lines.push(String::new());
        }
        if let Some(syntax) = &mut self.syntax {
            syntax.stale = true;
            if let Some(tree) = &mut syntax.tree {
                tree.edit(&InputEdit {
                    start_byte,
                    old_end_byte,
                    new_end_byte,
                    start_position: Point::new(first, 0),
                    old_end_position: Point::new(last, 0),
                    new_end_position: Point::new(new_end_row, 0),
                });
            }
        }
    }

    fn byte_offset(&self, row: usize) -> usize {
        self.lines[..row].iter().map(|l| l.len() + 1).sum()
    }

    /// The syntax tree (reparsed incrementally if edits arrived) and its
    /// language, or `None` for a filetype without a grammar.
    pub fn tree(&mut self) -> Option<(&Tree, &'static LanguageSpec)> {
        self.parsed().0
    }

    /// The tree as [`Document::tree`] gives it, together with the lines.
    pub fn parsed(&mut self) -> (Option<(&Tree, &'static LanguageSpec)>, &[String]) {
        let Some(syntax) = self.syntax.as_mut() else {
            return (None, &self.lines);
        };
        if syntax.stale || syntax.tree.is_none() {
            let lines = &self.lines;
            let mut read = |_byte: usize, at: Point| -> &[u8] {
                match lines.get(at.row) {
                    Some(line) if at.column < line.len() => &line.as_bytes()[at.column..],
                    Some(_) => b"\n",
                    None => b"",
                }
            };
            let tree = syntax
                .parser
                .parse_with_options(&mut read, syntax.tree.as_ref(), None);
            syntax.stale = tree.is_none();
            syntax.tree = tree;
        }
        (
            syntax.tree.as_ref().map(|tree| (tree, syntax.spec)),
            &self.lines,
        )
    }

    /// The whole text, for tests and for checking the mirror.
    pub fn text(&self) -> String {
        let mut text = self.lines.join("\n");
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Document {
        Document::new(text.lines().map(str::to_owned).collect(), 1, "rust")
    }

    fn sexp(document: &mut Document) -> String {
        document.tree().unwrap().0.root_node().to_sexp()
    }

    #[test]
    fn incremental_edits_give_the_same_tree_as_a_fresh_parse() {
        let mut document = doc("fn a() {}\n\nstruct B;\nfn c() { let x = 1; }\n");
        sexp(&mut document);
        let edits: &[(usize, Option<usize>, &[&str])] = &[
            (1, Some(2), &["fn inserted() -> u8 { 7 }"]),
            (0, Some(1), &[]),
            (2, Some(2), &["impl B {", "    fn m(&self) {}", "}"]),
            (4, None, &["// tail"]),
            (0, Some(0), &["use std::fmt;", ""]),
        ];
        for (tick, (first, last, lines)) in edits.iter().enumerate() {
            document.apply(
                tick as u64 + 2,
                *first,
                *last,
                lines.iter().map(|s| s.to_string()).collect(),
            );
            let incremental = sexp(&mut document);
            let mut fresh = Document::new(document.lines().to_vec(), 0, "rust");
            assert_eq!(
                incremental,
                sexp(&mut fresh),
                "after edit {tick}: {}",
                document.text()
            );
        }
        assert!(document.text().starts_with("use std::fmt;\n\nfn inserted"));
    }

    #[test]
    fn stale_events_are_ignored_and_a_buffer_never_has_zero_lines() {
        let mut document = doc("a\nb\n");
        document.apply(5, 0, None, vec![]);
        assert_eq!(document.lines(), [""]);
        document.apply(4, 0, None, vec!["old".into()]);
        assert_eq!(document.lines(), [""], "tick 4 is older than 5");
        document.apply(6, 0, Some(99), vec!["x".into()]);
        assert_eq!(document.lines(), ["x"], "out-of-range rows are clamped");
    }

    #[test]
    fn filetypes_without_a_grammar_have_no_tree() {
        let mut document = Document::new(vec!["text".into()], 1, "markdown");
        assert!(document.tree().is_none());
        document.set_filetype("python");
        assert_eq!(document.tree().unwrap().1.name, "python");
    }
}
