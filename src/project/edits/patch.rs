//! Unified diffs (`diff -u`, `git diff`) read and applied to a file's text.
//! A hunk applies where its old lines are: at the line it names, shifted
//! by what earlier hunks added or removed, else the nearest place below the
//! previous hunk where they all match. No fuzz: a hunk whose lines are
//! nowhere is refused, naming it and the first line that differs.

/// The changes a patch makes to one file.
#[derive(Debug, PartialEq)]
pub struct FilePatch {
    /// `None`: the file is created (`--- /dev/null`).
    pub old_path: Option<String>,
    /// `None`: the file is deleted (`+++ /dev/null`).
    pub new_path: Option<String>,
    pub hunks: Vec<Hunk>,
}

impl FilePatch {
    /// The path the patch names for the file.
    pub fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or_default()
    }
}

/// One `@@ -a,b +c,d @@` hunk.
#[derive(Debug, PartialEq)]
pub struct Hunk {
    /// The `@@ … @@` line, to name the hunk.
    pub header: String,
    /// 1-based; 0 for an empty old side.
    pub old_start: usize,
    pub lines: Vec<Line>,
    /// `\ No newline at end of file` after the last old / new line.
    pub old_no_eol: bool,
    pub new_no_eol: bool,
}

/// A line of a hunk.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Context(String),
    Removed(String),
    Added(String),
}

impl Hunk {
    /// The line before a `\ No newline at end of file` marker ends its side.
    fn mark_no_eol(&mut self) {
        match self.lines.last() {
            Some(Line::Removed(_)) => self.old_no_eol = true,
            Some(Line::Added(_)) => self.new_no_eol = true,
            _ => {
                self.old_no_eol = true;
                self.new_no_eol = true;
            }
        }
    }

    fn old(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|line| match line {
                Line::Context(text) | Line::Removed(text) => Some(text.as_str()),
                Line::Added(_) => None,
            })
            .collect()
    }

    fn new_lines(&self) -> Vec<String> {
        self.lines
            .iter()
            .filter_map(|line| match line {
                Line::Context(text) | Line::Added(text) => Some(text.clone()),
                Line::Removed(_) => None,
            })
            .collect()
    }
}

/// The files of a unified diff, in order; text outside them (`diff --git`,
/// `index`, a commit message) is skipped.
pub fn parse(patch: &str) -> Result<Vec<FilePatch>, String> {
    let lines: Vec<&str> = patch
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect();
    let mut files = vec![];
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        if line.starts_with("rename from ") || line.starts_with("copy from ") {
            return Err(
                "the patch renames or copies a file, which cannot be reviewed as a diff; \
                 send the new file's text instead"
                    .into(),
            );
        }
        if line.starts_with("Binary files ") || line.starts_with("GIT binary patch") {
            return Err("the patch changes a binary file, which is not supported".into());
        }
        let Some(old) = line.strip_prefix("--- ") else {
            at += 1;
            continue;
        };
        let Some(new) = lines.get(at + 1).and_then(|l| l.strip_prefix("+++ ")) else {
            at += 1;
            continue;
        };
        at += 2;
        let mut hunks = vec![];
        while let Some(header) = lines.get(at).filter(|l| l.starts_with("@@ ")) {
            let (hunk, next) = hunk(header, &lines, at + 1)?;
            hunks.push(hunk);
            at = next;
        }
        if hunks.is_empty() {
            return Err(format!("the patch of {} has no hunks", name(new)));
        }
        files.push(FilePatch {
            old_path: path(old),
            new_path: path(new),
            hunks,
        });
    }
    if files.is_empty() {
        return Err(
            "no unified diff found: the patch needs `--- a/path`, `+++ b/path` \
                    and `@@ -line,count +line,count @@` hunks"
                .into(),
        );
    }
    Ok(files)
}

/// A `---`/`+++` line's path: without a timestamp after a tab, without
/// git's `a/`/`b/`; `None` for `/dev/null`.
fn path(given: &str) -> Option<String> {
    let name = name(given);
    if name == "/dev/null" {
        return None;
    }
    let name = name
        .strip_prefix("a/")
        .or_else(|| name.strip_prefix("b/"))
        .unwrap_or(name);
    Some(name.to_owned())
}

fn name(given: &str) -> &str {
    let name = given.split('\t').next().unwrap_or(given).trim_end();
    name.strip_prefix('"')
        .and_then(|n| n.strip_suffix('"'))
        .unwrap_or(name)
}

/// `-a,b +c,d` counts of a header.
fn counts(header: &str) -> Option<(usize, usize, usize)> {
    let inner = header.strip_prefix("@@ -")?;
    let (ranges, _) = inner.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |text: &str| -> Option<(usize, usize)> {
        match text.split_once(',') {
            Some((start, len)) => Some((start.parse().ok()?, len.parse().ok()?)),
            None => Some((text.parse().ok()?, 1)),
        }
    };
    let (old_start, old_len) = range(old)?;
    let (_, new_len) = range(new)?;
    Some((old_start, old_len, new_len))
}

/// The hunk whose header is `header` and whose lines start at `at`, and
/// where the next thing starts.
fn hunk(header: &str, lines: &[&str], mut at: usize) -> Result<(Hunk, usize), String> {
    let Some((old_start, mut old_left, mut new_left)) = counts(header) else {
        return Err(format!("cannot read the hunk header `{header}`"));
    };
    let mut hunk = Hunk {
        header: header.to_owned(),
        old_start,
        lines: vec![],
        old_no_eol: false,
        new_no_eol: false,
    };
    while old_left > 0 || new_left > 0 {
        let Some(&line) = lines.get(at) else {
            return Err(format!("the hunk `{header}` ends before its lines do"));
        };
        at += 1;
        let (kind, text) = match line.chars().next() {
            Some(' ') => ('c', &line[1..]),
            // Some tools strip the space of an empty context line.
            None => ('c', ""),
            Some('-') => ('-', &line[1..]),
            Some('+') => ('+', &line[1..]),
            // `\ No newline at end of file`, about the line before it.
            Some('\\') => {
                hunk.mark_no_eol();
                continue;
            }
            Some(_) => {
                return Err(format!(
                    "the hunk `{header}` has a line that is neither context, `-` nor `+`: `{line}`"
                ));
            }
        };
        let (old, new) = match kind {
            'c' => (1, 1),
            '-' => (1, 0),
            _ => (0, 1),
        };
        if old > old_left || new > new_left {
            return Err(format!(
                "the hunk `{header}` has more lines than its header counts"
            ));
        }
        old_left -= old;
        new_left -= new;
        hunk.lines.push(match kind {
            'c' => Line::Context(text.to_owned()),
            '-' => Line::Removed(text.to_owned()),
            _ => Line::Added(text.to_owned()),
        });
    }
    // `\ No newline at end of file` right after the hunk's last line.
    while lines.get(at).is_some_and(|l| l.starts_with('\\')) {
        hunk.mark_no_eol();
        at += 1;
    }
    Ok((hunk, at))
}

/// `text` (`\n` newlines; `eol`: it ends with one) with `file`'s hunks
/// applied: the new text, or which hunk does not apply and why.
pub fn apply(text: &str, file: &FilePatch) -> Result<String, String> {
    let mut eol = text.ends_with('\n');
    let mut lines: Vec<String> = match text.strip_suffix('\n').unwrap_or(text) {
        "" if !eol => vec![],
        body => body.split('\n').map(str::to_owned).collect(),
    };
    // Where the next hunk may start, and how far earlier hunks moved lines.
    let mut floor = 0usize;
    let mut shift: isize = 0;
    let count = file.hunks.len();
    for (index, hunk) in file.hunks.iter().enumerate() {
        let old = hunk.old();
        let wanted = (hunk.old_start.max(1) as isize - 1 + shift).max(0) as usize;
        let wanted = if old.is_empty() {
            // A pure insertion: after line old_start.
            (hunk.old_start as isize + shift).max(0) as usize
        } else {
            wanted
        };
        let matches = |at: usize| {
            at + old.len() <= lines.len()
                && old
                    .iter()
                    .zip(&lines[at..])
                    .all(|(want, have)| want == have)
        };
        let found = if wanted >= floor && matches(wanted) {
            Some(wanted)
        } else {
            (floor..=lines.len().saturating_sub(old.len()))
                .filter(|&at| matches(at))
                .min_by_key(|&at| at.abs_diff(wanted))
        };
        let Some(at) = found else {
            return Err(refusal(file.path(), index, count, hunk, &lines, wanted));
        };
        let new = hunk.new_lines();
        let added = new.len();
        let reaches_end = at + old.len() == lines.len();
        lines.splice(at..at + old.len(), new);
        if reaches_end {
            if hunk.new_no_eol {
                eol = false;
            } else if hunk.old_no_eol || (!eol && added > 0) {
                eol = true;
            }
        }
        shift += added as isize - old.len() as isize;
        floor = at + added;
    }
    let mut out = lines.join("\n");
    if eol && !lines.is_empty() {
        out.push('\n');
    }
    Ok(out)
}

/// Why hunk `index` of `path` does not apply: the first of its old lines
/// that differs from the file where it should be.
fn refusal(
    path: &str,
    index: usize,
    count: usize,
    hunk: &Hunk,
    lines: &[String],
    wanted: usize,
) -> String {
    let old = hunk.old();
    let mut why = format!(
        "hunk {} of {count} of {path} (`{}`) does not apply: its lines are nowhere in the file",
        index + 1,
        hunk.header
    );
    if let Some((offset, (want, have))) = old
        .iter()
        .zip(
            lines
                .iter()
                .skip(wanted)
                .map(Some)
                .chain(std::iter::repeat(None)),
        )
        .enumerate()
        .find(|(_, (want, have))| have.map(String::as_str) != Some(**want))
    {
        let line = wanted + offset + 1;
        match have {
            Some(have) => why.push_str(&format!(
                "; at line {line} the file has `{have}` where the patch expects `{want}`"
            )),
            None => why.push_str(&format!(
                "; the file ends before line {line}, where the patch expects `{want}`"
            )),
        }
    }
    why
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_FILES: &str = "diff --git a/a.py b/a.py\nindex 1..2 100644\n--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n x = 1\n-y = 2\n+y = 3\n z = 4\n@@ -8,2 +8,3 @@ def f():\n     pass\n     return\n+# end\n--- /dev/null\n+++ b/new/b.py\n@@ -0,0 +1,2 @@\n+one\n+two\n";

    #[test]
    fn a_git_diff_of_two_files_is_read_with_its_hunks() {
        let files = parse(TWO_FILES).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].path(), "a.py");
        assert_eq!(files[0].hunks.len(), 2);
        assert_eq!(files[0].hunks[1].old_start, 8);
        assert_eq!(
            files[0].hunks[0].lines,
            [
                Line::Context("x = 1".into()),
                Line::Removed("y = 2".into()),
                Line::Added("y = 3".into()),
                Line::Context("z = 4".into()),
            ]
        );
        assert_eq!(files[1].old_path, None);
        assert_eq!(files[1].path(), "new/b.py");
        assert_eq!(apply("", &files[1]).unwrap(), "one\ntwo\n");
    }

    #[test]
    fn hunks_apply_where_their_lines_are_even_when_the_file_moved() {
        let files = parse(TWO_FILES).unwrap();
        let text = "x = 1\ny = 2\nz = 4\na\nb\nc\nd\n    pass\n    return\n";
        assert_eq!(
            apply(text, &files[0]).unwrap(),
            "x = 1\ny = 3\nz = 4\na\nb\nc\nd\n    pass\n    return\n# end\n"
        );
        let moved = format!("# header\n# more\n{text}");
        let out = apply(&moved, &files[0]).unwrap();
        assert!(out.starts_with("# header\n# more\nx = 1\ny = 3\n"), "{out}");
        assert!(out.ends_with("    return\n# end\n"), "{out}");
    }

    #[test]
    fn a_hunk_that_does_not_apply_is_named_with_the_line_that_differs() {
        let files = parse(TWO_FILES).unwrap();
        let why = apply("x = 1\ny = 9\nz = 4\n", &files[0]).unwrap_err();
        assert!(
            why.contains("hunk 1 of 2 of a.py (`@@ -1,3 +1,3 @@`)"),
            "{why}"
        );
        assert!(
            why.contains("at line 2 the file has `y = 9` where the patch expects `y = 2`"),
            "{why}"
        );
        let short = apply("x = 1\ny = 2\nz = 4\n", &files[0]).unwrap_err();
        assert!(short.contains("hunk 2 of 2"), "{short}");
        assert!(short.contains("the file ends before line 8"), "{short}");
    }

    #[test]
    fn final_newlines_follow_the_markers_and_bad_patches_say_why() {
        let add_eol = "--- a/t\n+++ b/t\n@@ -1 +1 @@\n-last\n\\ No newline at end of file\n+last\n";
        assert_eq!(
            apply("last", &parse(add_eol).unwrap()[0]).unwrap(),
            "last\n"
        );
        let drop_eol =
            "--- a/t\n+++ b/t\n@@ -1 +1 @@\n-last\n+last\n\\ No newline at end of file\n";
        assert_eq!(
            apply("last\n", &parse(drop_eol).unwrap()[0]).unwrap(),
            "last"
        );
        let crlf = "--- a/t\r\n+++ b/t\r\n@@ -1,2 +1,2 @@\r\n a\r\n-b\r\n+c\r\n";
        assert_eq!(apply("a\nb\n", &parse(crlf).unwrap()[0]).unwrap(), "a\nc\n");
        assert!(parse("just text").unwrap_err().contains("no unified diff"));
        assert!(
            parse("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n")
                .unwrap_err()
                .contains("ends before")
        );
        assert!(
            parse("diff --git a/x b/y\nrename from x\nrename to y\n")
                .unwrap_err()
                .contains("renames")
        );
        let timestamped =
            "--- x.txt\t2026-01-01 00:00:00\n+++ x.txt\t2026-01-02\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(parse(timestamped).unwrap()[0].path(), "x.txt");
    }
}
