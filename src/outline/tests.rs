//! Outline, scope and comment detection on real source files of every
//! grammar the host pins, including files with syntax errors.

use super::definitions::{Entry, render_centred};
use super::document::Document;
use std::time::Duration;

use super::{OUTLINE_BYTES, context};

fn fixture(name: &str) -> Vec<String> {
    let path = format!(
        "{}/tests/fixtures/outline/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(str::to_owned)
        .collect()
}

/// (filetype, file, whole outline, cursor line (1-based), column, scope, in a comment)
type Case = (
    &'static str,
    &'static str,
    &'static str,
    usize,
    usize,
    &'static str,
    bool,
);

const CASES: &[Case] = &[
    (
        "rust",
        "sample.rs",
        "4: pub struct Point\n9: pub enum Shape\n14: pub trait Area\n15:   fn area(&self) -> f64;\n18: impl Area for Shape\n\
         19:   fn area(&self) -> f64\n28: mod geometry\n29:   pub fn distance(a: &super::Point, b: &super::Point) -> f64\n\
         34: impl fmt::Display for Point\n35:   fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result",
        21,
        24,
        "18: impl Area for Shape\n19:   fn area(&self) -> f64",
        true,
    ),
    (
        "rust",
        "sample.rs",
        "",
        30,
        8,
        "28: mod geometry\n29:   pub fn distance(a: &super::Point, b: &super::Point) -> f64",
        false,
    ),
    (
        "rust",
        "broken.rs",
        "1: pub struct Config\n5: impl Config\n6: pub fn new(name: &str) -> Self\n10: pub fn name(&self) -> &str\n15: fn main()",
        11,
        8,
        "",
        false,
    ),
    (
        "python",
        "sample.py",
        "4: class Repository\n7:   def __init__(self, root)\n11:   def path(self)\n15:   def files(self)\n19: def main()",
        12,
        15,
        "4: class Repository\n11:   def path(self)",
        true,
    ),
    (
        "python",
        "broken.py",
        "1: def ok(a, b)\n5: def broken(x\n10: def method(self)",
        2,
        4,
        "1: def ok(a, b)",
        false,
    ),
    (
        "javascript",
        "sample.js",
        "3: export function load(path)\n7: const parse = (text) =>\n12: class Store\n13:   constructor()\n17:   add(item)",
        8,
        10,
        "7: const parse = (text) =>",
        true,
    ),
    (
        "typescript",
        "sample.ts",
        "1: export interface User\n6: export type Id = number | string;\n8: enum Role\n13: export class Service\n\
         16:   find(id: Id): User | undefined\n22: export function create(name: string): User",
        17,
        12,
        "13: export class Service\n16:   find(id: Id): User | undefined",
        true,
    ),
    (
        "typescriptreact",
        "sample.tsx",
        "3: type Props = { title: string };\n5: export function Header({ title }: Props)\n9: export const Footer = () =>",
        6,
        5,
        "5: export function Header({ title }: Props)",
        false,
    ),
    (
        "go",
        "sample.go",
        "5: type Stack struct\n9: type Pusher interface\n13: func (s *Stack) Push(v int)\n18: func main()",
        14,
        10,
        "13: func (s *Stack) Push(v int)",
        true,
    ),
    (
        "lua",
        "sample.lua",
        "3: local function helper(x)\n7: function M.run(items)\n16: M.stop = function()",
        8,
        10,
        "7: function M.run(items)",
        true,
    ),
    (
        "lua",
        "sample.lua",
        "",
        11,
        4,
        "7: function M.run(items)",
        false,
    ),
    (
        "c",
        "sample.c",
        "3: struct node\n8: typedef struct node node_t;\n10: enum color\n12: static int sum(struct node *head)\n21: int main(void)",
        14,
        10,
        "12: static int sum(struct node *head)",
        true,
    ),
];

#[test]
fn outlines_scopes_and_comments_of_every_pinned_language() {
    for &(filetype, file, outline, line, col, scope, comment) in CASES {
        let mut document = Document::new(fixture(file), 1, filetype);
        let context = context(&mut document, line - 1, col, OUTLINE_BYTES, Duration::MAX).unwrap();
        if !outline.is_empty() {
            assert_eq!(context.outline, outline, "{file} outline");
        }
        assert_eq!(context.enclosing_scope, scope, "{file}:{line}:{col} scope");
        assert_eq!(
            context.cursor_in_comment, comment,
            "{file}:{line}:{col} in comment"
        );
    }
}

#[test]
fn comment_detection_looks_at_the_character_before_the_cursor() {
    let lines: Vec<String> = [
        "let x = 1; // note",
        "/* block",
        "   still */ let y;",
        "// top",
    ]
    .map(String::from)
    .into();
    let mut document = Document::new(lines, 1, "rust");
    let in_comment = |document: &mut Document, row: usize, col: usize| {
        context(document, row, col, OUTLINE_BYTES, Duration::MAX)
            .unwrap()
            .cursor_in_comment
    };
    assert!(!in_comment(&mut document, 0, 10), "before the comment");
    assert!(in_comment(&mut document, 0, 14), "inside it");
    assert!(in_comment(&mut document, 0, 18), "at the end of the line");
    assert!(
        in_comment(&mut document, 2, 0),
        "column 0 inside a block comment"
    );
    assert!(!in_comment(&mut document, 2, 18), "after the block comment");
    assert!(
        !in_comment(&mut document, 3, 0),
        "column 0 before a line comment"
    );
}

#[test]
fn no_grammar_no_context() {
    let mut document = Document::new(vec!["# title".into()], 1, "markdown");
    assert_eq!(
        context(&mut document, 0, 3, OUTLINE_BYTES, Duration::MAX),
        None
    );
}

#[test]
fn a_capped_outline_is_centred_on_the_cursor() {
    let entries: Vec<Entry> = (0..1000)
        .map(|i| Entry {
            row: i * 10,
            end_row: i * 10 + 9,
            depth: 0,
            signature: format!("fn function_{i}()"),
        })
        .collect();
    let rendered = render_centred(&entries, 5000, 1200, false, false);
    assert!(rendered.len() <= 1200 + 80, "{}", rendered.len());
    assert!(rendered.contains("5001: fn function_500()"));
    assert!(rendered.starts_with("… earlier definitions not shown\n"));
    assert!(rendered.ends_with("\n… later definitions not shown"));
    let lines: Vec<&str> = rendered.lines().collect();
    let centre = lines
        .iter()
        .position(|l| l.contains("function_500()"))
        .unwrap();
    let (above, below) = (centre, lines.len() - centre);
    assert!(above.abs_diff(below) <= 2, "{above} above, {below} below");
    assert_eq!(
        render_centred(&entries[..3], 0, 1200, false, false)
            .lines()
            .count(),
        3,
        "small outlines are whole"
    );
}

#[test]
fn a_large_file_edit_reparses_to_the_same_outline() {
    let source = fixture("sample.rs");
    let lines: Vec<String> = (0..200).flat_map(|_| source.iter().cloned()).collect();
    let row = source.len() * 128;
    let mut document = Document::new(lines, 1, "rust");
    let before = context(&mut document, row, 0, OUTLINE_BYTES, Duration::MAX).unwrap();
    document.apply(2, row, Some(row), vec!["fn added_here() {}".into()]);
    let after = context(&mut document, row, 0, OUTLINE_BYTES, Duration::MAX).unwrap();
    let outline = after.outline.clone();
    assert!(
        outline.contains(&format!("{}: fn added_here()", row + 1)),
        "{outline}"
    );
    assert_ne!(before.outline, after.outline);
    let mut fresh = Document::new(document.lines().to_vec(), 1, "rust");
    assert_eq!(
        context(&mut fresh, row, 0, OUTLINE_BYTES, Duration::MAX).unwrap(),
        after
    );
}

#[test]
fn long_files_are_parsed_in_a_window_that_follows_the_cursor() {
    let source = fixture("sample.rs");
    let n = source.len();
    let lines: Vec<String> = (0..600).flat_map(|_| source.iter().cloned()).collect();
    assert!(lines.len() > super::document::WINDOW_ABOVE_LINES);
    let mut document = Document::new(lines, 1, "rust");
    let scope_at = |first: usize| {
        format!(
            "{}: impl Area for Shape\n{}:   fn area(&self) -> f64",
            first,
            first + 1
        )
    };

    let row = n * 300 + 18;
    let context_at = |document: &mut Document, row: usize| {
        context(document, row, 8, OUTLINE_BYTES, Duration::MAX).unwrap()
    };
    let middle = context_at(&mut document, row);
    assert!(
        middle
            .outline
            .starts_with("… earlier definitions not shown\n"),
        "{}",
        &middle.outline[..80]
    );
    assert!(middle.outline.ends_with("\n… later definitions not shown"));
    assert!(
        middle
            .outline
            .contains(&format!("\n{}: impl Area for Shape\n", n * 300 + 18))
    );
    assert_eq!(middle.enclosing_scope, scope_at(n * 300 + 18));

    // A line added above the window shifts every row of the window.
    document.apply(2, 0, Some(0), vec!["// a new first line".into()]);
    assert_eq!(
        context_at(&mut document, row + 1).enclosing_scope,
        scope_at(n * 300 + 19)
    );

    // Far from the window, the window follows the cursor.
    let near_top = n * 2 + 18 + 1;
    let top = context_at(&mut document, near_top);
    assert_eq!(top.enclosing_scope, scope_at(n * 2 + 19));
    assert!(
        !top.outline.starts_with('…'),
        "the window starts at the top of the file"
    );
    let mut fresh = Document::new(document.lines().to_vec(), 1, "rust");
    assert_eq!(
        context_at(&mut fresh, near_top),
        top,
        "same as a fresh document"
    );
}
