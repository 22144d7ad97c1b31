//! A buffer's text mirrored from `nvim_buf_lines_event`s, with its syntax
//! tree kept current by incremental reparses.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use tree_sitter::{InputEdit, ParseOptions, Parser, Point, Range, Tree};

use super::languages::{self, LanguageSpec};

/// Files longer than this are parsed in a window around the cursor: an
/// incremental reparse costs time in proportion to the top-level nodes it
/// re-checks, and a capped outline shows only the definitions near the
/// cursor anyway.
pub const WINDOW_ABOVE_LINES: usize = 12_000;
/// Lines in such a window.
const WINDOW_LINES: usize = 6_000;
/// How far a window edge moves to land on a line that starts a statement.
const SNAP_LINES: usize = 500;

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
    /// The last complete tree, with later edits applied to its positions.
    tree: Option<Tree>,
    /// Edits arrived since `tree` was parsed.
    stale: bool,
    /// A parse ran out of time and can resume where it stopped.
    interrupted: bool,
    /// The part of a long file being parsed; `None` = all of it.
    window: Option<Range>,
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
                interrupted: false,
                window: None,
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
            if syntax.interrupted {
                // The half-done parse was of the old text.
                syntax.parser.reset();
                syntax.interrupted = false;
            }
            let edit = InputEdit {
                start_byte,
                old_end_byte,
                new_end_byte,
                start_position: Point::new(first, 0),
                old_end_position: Point::new(last, 0),
                new_end_position: Point::new(new_end_row, 0),
            };
            if let Some(tree) = &mut syntax.tree {
                tree.edit(&edit);
            }
            if let Some(window) = &mut syntax.window {
                edit.edit_range(window);
            }
        }
    }

    fn byte_offset(&self, row: usize) -> usize {
        self.lines[..row].iter().map(|l| l.len() + 1).sum()
    }

    /// Parses a long file in a window around `row`, moving the window when
    /// `row` comes near its edge; a short file is parsed whole.
    pub fn focus(&mut self, row: usize) {
        let total = self.lines.len();
        let windowed = total > WINDOW_ABOVE_LINES;
        let Some(syntax) = self.syntax.as_ref() else {
            return;
        };
        let keep = match (&syntax.window, windowed) {
            (None, false) => true,
            (Some(current), true) => {
                let (start, end) = (current.start_point.row, current.end_point.row);
                let margin = (end - start) / 8;
                (start == 0 || row >= start + margin) && (end >= total || row + margin < end)
            }
            _ => false,
        };
        if !keep {
            let wanted = windowed.then(|| self.window_around(row));
            let Some(syntax) = self.syntax.as_mut() else {
                return;
            };
            syntax.window = wanted;
            syntax.tree = None;
            syntax.stale = true;
            if syntax.interrupted {
                syntax.parser.reset();
                syntax.interrupted = false;
            }
        }
    }

    /// `(more above, more below)`: whether the parsed window leaves out lines.
    pub fn beyond_window(&self) -> (bool, bool) {
        match self.syntax.as_ref().and_then(|syntax| syntax.window) {
            Some(window) => (
                window.start_point.row > 0,
                window.end_point.row < self.lines.len(),
            ),
            None => (false, false),
        }
    }

    fn window_around(&self, row: usize) -> Range {
        let total = self.lines.len();
        let starts_statement = |r: usize| {
            self.lines[r]
                .chars()
                .next()
                .is_some_and(|c| !c.is_whitespace() && !matches!(c, '}' | ')' | ']'))
        };
        let wanted_start = row.saturating_sub(WINDOW_LINES / 2);
        let start = (wanted_start.saturating_sub(SNAP_LINES)..=wanted_start)
            .rev()
            .find(|&r| starts_statement(r))
            .unwrap_or(wanted_start);
        let wanted_end = (start + WINDOW_LINES).min(total);
        let end = (wanted_end..(wanted_end + SNAP_LINES).min(total))
            .find(|&r| starts_statement(r))
            .unwrap_or(wanted_end);
        let start_byte = self.byte_offset(start);
        let end_byte = start_byte
            + self.lines[start..end]
                .iter()
                .map(|l| l.len() + 1)
                .sum::<usize>();
        Range {
            start_byte,
            end_byte,
            start_point: Point::new(start, 0),
            end_point: Point::new(end, 0),
        }
    }

    /// Whether a reparse is due (edits since the last complete tree).
    pub fn needs_parse(&self) -> bool {
        self.syntax.as_ref().is_some_and(|syntax| syntax.stale)
    }

    /// Reparses incrementally for at most `budget`; true when the tree now
    /// matches the text. An unfinished parse resumes on the next call.
    pub fn parse(&mut self, budget: Duration) -> bool {
        let Some(syntax) = self.syntax.as_mut() else {
            return false;
        };
        if !syntax.stale {
            return true;
        }
        if !syntax.interrupted {
            let ranges: Vec<Range> = syntax.window.into_iter().collect();
            if syntax.parser.set_included_ranges(&ranges).is_err() {
                syntax.window = None;
                let _ = syntax.parser.set_included_ranges(&[]);
            }
        }
        let lines = &self.lines;
        let mut read = |_byte: usize, at: Point| -> &[u8] {
            match lines.get(at.row) {
                Some(line) if at.column < line.len() => &line.as_bytes()[at.column..],
                Some(_) => b"\n",
                None => b"",
            }
        };
        let deadline = Instant::now().checked_add(budget);
        let mut in_time = |_: &tree_sitter::ParseState| match deadline {
            Some(deadline) if Instant::now() >= deadline => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        };
        let options = ParseOptions::new().progress_callback(&mut in_time);
        match syntax
            .parser
            .parse_with_options(&mut read, syntax.tree.as_ref(), Some(options))
        {
            Some(tree) => {
                syntax.tree = Some(tree);
                syntax.stale = false;
                syntax.interrupted = false;
                true
            }
            None => {
                syntax.interrupted = true;
                false
            }
        }
    }

    /// The last complete tree (current if [`Document::parse`] returned
    /// true) and the lines; `None` for no grammar or no tree yet.
    pub fn parsed(&self) -> (Option<(&Tree, &'static LanguageSpec)>, &[String]) {
        let tree = self
            .syntax
            .as_ref()
            .and_then(|syntax| syntax.tree.as_ref().map(|tree| (tree, syntax.spec)));
        (tree, &self.lines)
    }
}

/// What tests inspect: the mirrored lines, text and a fully parsed tree.
#[cfg(test)]
impl Document {
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    pub fn text(&self) -> String {
        let mut text = self.lines.join("\n");
        text.push('\n');
        text
    }

    /// The syntax tree, reparsed to the current text without a time limit.
    pub fn tree(&mut self) -> Option<(&Tree, &'static LanguageSpec)> {
        self.parse(Duration::MAX);
        self.parsed().0
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
        assert_eq!(document.tree().unwrap().1.filetypes, ["python"]);
    }
}
