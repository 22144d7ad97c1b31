//! Outline and enclosing scope from a syntax tree: definitions as one-line
//! signatures with 1-based line numbers, nested ones indented.

use tree_sitter::{Node, Point, Tree};

use super::languages::LanguageSpec;

/// Longest signature kept; longer ones end in `…`.
const MAX_SIGNATURE: usize = 160;

/// One definition in the outline.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// 0-based first row of the definition.
    pub row: usize,
    /// 0-based last row.
    pub end_row: usize,
    pub depth: usize,
    pub signature: String,
}

impl Entry {
    pub fn render(&self) -> String {
        format!(
            "{}: {}{}",
            self.row + 1,
            "  ".repeat(self.depth),
            self.signature
        )
    }
}

/// Every definition in document order.
pub fn entries(tree: &Tree, spec: &LanguageSpec, lines: &[String]) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    let mut depth = 0;
    // Depths at which we entered a definition, to know when we leave it.
    let mut open: Vec<usize> = Vec::new();
    let mut level = 0usize;
    'walk: loop {
        let node = cursor.node();
        let recovered = is_recovered_definition(node, spec)
            && out
                .last()
                .is_none_or(|e: &Entry| e.row != node.start_position().row);
        if recovered {
            let row = node.start_position().row;
            let line = lines.get(row).map(String::as_str).unwrap_or_default();
            out.push(Entry {
                row,
                end_row: row,
                depth,
                signature: tidy(line),
            });
        }
        if is_definition(node, spec) {
            out.push(Entry {
                row: node.start_position().row,
                end_row: node.end_position().row,
                depth,
                signature: signature(node, lines),
            });
            open.push(level);
            depth += 1;
        }
        if cursor.goto_first_child() {
            level += 1;
            continue;
        }
        loop {
            if open.last() == Some(&level) {
                open.pop();
                depth -= 1;
            }
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
            level -= 1;
        }
    }
    out
}

/// The definitions that contain `row`, outermost first.
pub fn enclosing(entries: &[Entry], row: usize) -> Vec<&Entry> {
    entries
        .iter()
        .filter(|e| e.row <= row && row <= e.end_row)
        .collect()
}

/// Renders entries, keeping at most `cap` bytes in a window centred on `row`.
pub fn render_centred(entries: &[Entry], row: usize, cap: usize) -> String {
    let rendered: Vec<String> = entries.iter().map(Entry::render).collect();
    let total: usize = rendered.iter().map(|l| l.len() + 1).sum();
    if total <= cap {
        return rendered.join("\n");
    }
    let centre = entries
        .iter()
        .position(|e| e.row >= row)
        .unwrap_or(entries.len().saturating_sub(1));
    let (mut from, mut to) = (centre, centre);
    let mut used = 0;
    loop {
        let mut grew = false;
        if to < rendered.len() && used + rendered[to].len() < cap {
            used += rendered[to].len() + 1;
            to += 1;
            grew = true;
        }
        if from > 0 && used + rendered[from - 1].len() < cap {
            from -= 1;
            used += rendered[from].len() + 1;
            grew = true;
        }
        if !grew {
            break;
        }
    }
    let mut parts = Vec::with_capacity(to - from + 2);
    if from > 0 {
        parts.push(format!("… {from} definitions above"));
    }
    parts.extend(rendered[from..to].iter().cloned());
    if to < rendered.len() {
        parts.push(format!("… {} definitions below", rendered.len() - to));
    }
    parts.join("\n")
}

/// Whether the cursor at (`row`, byte `col`) sits inside a comment: the
/// character before it is part of one (or, at column 0, a block comment
/// that began on an earlier line).
pub fn in_comment(tree: &Tree, spec: &LanguageSpec, row: usize, col: usize) -> bool {
    let at = Point::new(row, col.saturating_sub(1));
    let mut node = tree.root_node().descendant_for_point_range(at, at);
    while let Some(current) = node {
        if spec.comments.contains(&current.kind()) {
            return col > 0 || current.start_position().row < row;
        }
        node = current.parent();
    }
    false
}

/// A definition keyword stranded in a syntax error.
fn is_recovered_definition(node: Node, spec: &LanguageSpec) -> bool {
    !node.is_named()
        && spec.error_keywords.contains(&node.kind())
        && node.parent().is_some_and(|p| p.is_error())
}

fn is_definition(node: Node, spec: &LanguageSpec) -> bool {
    let kind = node.kind();
    if spec.definitions.contains(&kind) {
        return !spec.need_body.contains(&kind) || node.child_by_field_name("body").is_some();
    }
    if spec.anonymous.contains(&kind) {
        return node
            .parent()
            .is_some_and(|parent| spec.binders.contains(&parent.kind()));
    }
    false
}

/// The definition's first line up to its body, whitespace collapsed.
fn signature(node: Node, lines: &[String]) -> String {
    let start = node.start_position();
    let line = lines.get(start.row).map(String::as_str).unwrap_or_default();
    let end = node
        .child_by_field_name("body")
        .filter(|body| body.start_position().row == start.row)
        .map_or(line.len(), |body| {
            body.start_position().column.min(line.len())
        });
    tidy(line.get(..end).unwrap_or(line))
}

/// Whitespace collapsed, trailing openers dropped, length capped.
fn tidy(text: &str) -> String {
    let mut text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    while text.ends_with(['{', ':', '=', '(']) && text.len() > 1 {
        text.pop();
        text.truncate(text.trim_end().len());
    }
    if text.len() > MAX_SIGNATURE {
        let mut cut = MAX_SIGNATURE;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    text
}
