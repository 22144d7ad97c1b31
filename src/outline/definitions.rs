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

/// The outline near `row`: definitions rendered as `<line>: <signature>`,
/// at most `cap` bytes, centred on `row`. Top-level nodes are walked outward
/// from the one at the cursor until the cap is reached, so the cost follows
/// the size of the outline, not of the file.
/// `beyond` says whether lines above and below were left out of the tree.
pub fn outline(
    tree: &Tree,
    spec: &LanguageSpec,
    lines: &[String],
    row: usize,
    cap: usize,
    beyond: (bool, bool),
) -> String {
    let root = tree.root_node();
    let mut cursor = root.walk();
    let tops: Vec<Node> = root.children(&mut cursor).collect();
    if tops.is_empty() {
        return String::new();
    }
    let centre = tops
        .partition_point(|node| node.end_position().row < row)
        .min(tops.len() - 1);
    let (mut lo, mut hi) = (centre, centre);
    let mut found: Vec<Vec<Entry>> = Vec::new();
    let mut used = 0;
    while used < cap && (lo > 0 || hi < tops.len()) {
        if hi < tops.len() {
            let entries = entries(tops[hi], Some(root.kind()), spec, lines);
            used += entries.iter().map(rendered_len).sum::<usize>();
            found.push(entries);
            hi += 1;
        }
        if lo > 0 && used < cap {
            lo -= 1;
            let entries = entries(tops[lo], Some(root.kind()), spec, lines);
            used += entries.iter().map(rendered_len).sum::<usize>();
            found.insert(0, entries);
        }
    }
    let all: Vec<Entry> = found.into_iter().flatten().collect();
    render_centred(
        &all,
        row,
        cap,
        lo > 0 || beyond.0,
        hi < tops.len() || beyond.1,
    )
}

/// Every definition in `node`'s subtree in document order, except those
/// nested in function bodies (most of a tree, and little use in an outline).
/// `outer` is the kind of `node`'s parent.
pub fn entries(
    node: Node,
    outer: Option<&str>,
    spec: &LanguageSpec,
    lines: &[String],
) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut cursor = node.walk();
    // Per tree level on the current path: the node's kind, and whether it
    // opened a definition (which indents what is below it).
    let mut kinds: Vec<&str> = Vec::new();
    let mut opened: Vec<bool> = Vec::new();
    'walk: loop {
        let node = cursor.node();
        let level = cursor.depth() as usize;
        kinds.truncate(level);
        opened.truncate(level);
        let parent = if level == 0 {
            outer
        } else {
            kinds.last().copied()
        };
        let depth = opened.iter().filter(|&&o| o).count();
        if is_recovered_definition(node, parent, spec)
            && out
                .last()
                .is_none_or(|e: &Entry| e.row != node.start_position().row)
        {
            let row = node.start_position().row;
            out.push(Entry {
                row,
                end_row: row,
                depth,
                signature: tidy(lines.get(row).map(String::as_str).unwrap_or_default()),
            });
        }
        let definition = is_definition(node, parent, spec);
        if definition {
            out.push(Entry {
                row: node.start_position().row,
                end_row: node.end_position().row,
                depth,
                signature: signature(node, lines),
            });
        }
        kinds.push(node.kind());
        opened.push(definition);
        let function_body = cursor.field_name() == Some("body") && parent.is_some_and(is_function);
        if !function_body && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    out
}

/// The definitions around (`row`, `col`), outermost first, rendered with
/// their nesting depth.
pub fn enclosing(
    tree: &Tree,
    spec: &LanguageSpec,
    lines: &[String],
    row: usize,
    col: usize,
) -> Vec<String> {
    // The character before the cursor: at the end of a line the cursor is
    // past every node, but still in the definition it is typing into.
    let at = Point::new(row, col.saturating_sub(1));
    let mut chain = Vec::new();
    let mut node = tree.root_node().descendant_for_point_range(at, at);
    while let Some(current) = node {
        let parent = current.parent();
        if is_definition(current, parent.map(|p| p.kind()), spec) {
            chain.push(current);
        }
        node = parent;
    }
    chain
        .iter()
        .rev()
        .enumerate()
        .map(|(depth, node)| {
            Entry {
                row: node.start_position().row,
                end_row: node.end_position().row,
                depth,
                signature: signature(*node, lines),
            }
            .render()
        })
        .collect()
}

fn is_function(kind: &str) -> bool {
    kind.contains("function") || kind.contains("method")
}

/// Rendered length of an entry, newline included, without rendering it.
fn rendered_len(entry: &Entry) -> usize {
    (entry.row + 1).to_string().len() + 2 + 2 * entry.depth + entry.signature.len() + 1
}

/// Renders entries, keeping at most `cap` bytes in a window centred on `row`;
/// `more_above`/`more_below` say definitions exist beyond the entries given.
pub fn render_centred(
    entries: &[Entry],
    row: usize,
    cap: usize,
    more_above: bool,
    more_below: bool,
) -> String {
    let centre = entries
        .iter()
        .position(|e| e.row >= row)
        .unwrap_or(entries.len().saturating_sub(1));
    let (mut from, mut to, mut used) = (centre, centre, 0);
    loop {
        let mut grew = false;
        if to < entries.len() && used + rendered_len(&entries[to]) <= cap {
            used += rendered_len(&entries[to]);
            to += 1;
            grew = true;
        }
        if from > 0 && used + rendered_len(&entries[from - 1]) <= cap {
            from -= 1;
            used += rendered_len(&entries[from]);
            grew = true;
        }
        if !grew {
            break;
        }
    }
    let mut parts = Vec::with_capacity(to - from + 2);
    if from > 0 || more_above {
        parts.push("… earlier definitions not shown".to_owned());
    }
    parts.extend(entries[from..to].iter().map(Entry::render));
    if to < entries.len() || more_below {
        parts.push("… later definitions not shown".to_owned());
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
fn is_recovered_definition(node: Node, parent: Option<&str>, spec: &LanguageSpec) -> bool {
    !node.is_named() && parent == Some("ERROR") && spec.error_keywords.contains(&node.kind())
}

fn is_definition(node: Node, parent: Option<&str>, spec: &LanguageSpec) -> bool {
    let kind = node.kind();
    if spec.definitions.contains(&kind) {
        return !spec.need_body.contains(&kind) || node.child_by_field_name("body").is_some();
    }
    spec.anonymous.contains(&kind) && parent.is_some_and(|parent| spec.binders.contains(&parent))
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
