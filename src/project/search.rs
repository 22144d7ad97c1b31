//! `find_files_by_glob`, `find_files_by_name_keyword`,
//! `search_in_files_by_text`, `search_in_files_by_regex` and
//! `list_directory_tree`: walks of the project tree honouring `.gitignore`
//! (also outside a git repository), never leaving the root (links are not
//! followed), bounded by a count and a time limit, run off the event loop.
//! A result says when it was cut short.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use regex::{Regex, RegexBuilder};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Answer, Failure, Project};

/// Default and largest time limit of a walk, in milliseconds.
const DEFAULT_TIMEOUT_MS: u64 = 5_000;
const MAX_TIMEOUT_MS: u64 = 30_000;
/// Default and largest number of results.
const DEFAULT_LIMIT: usize = 1_000;
const MAX_LIMIT: usize = 10_000;
/// Files larger than this are not searched.
const MAX_SEARCHED_BYTES: u64 = 8 << 20;
/// A matching line longer than this is cut in the result.
const MAX_LINE_CHARS: usize = 500;

pub(crate) fn timeout_schema() -> Value {
    json!({"type": "integer", "minimum": 1, "description": "Time limit in milliseconds (default 5000, at most 30000)"})
}

pub(crate) fn search_properties(what: &str, description: &str) -> Value {
    json!({
        what: {"type": "string", "description": description},
        "directoryToSearch": {"type": "string", "description": "Search only this directory, relative to the project root"},
        "fileMask": {"type": "string", "description": "Glob the file name (or, with `/`, the relative path) must match, e.g. `*.rs`"},
        "caseSensitive": {"type": "boolean", "description": "Default true"},
        "maxUsageCount": {"type": "integer", "minimum": 1, "description": "Most matching lines returned (default 1000)"},
        "timeout": timeout_schema(),
    })
}

/// When a walk stops early, and why.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Cut {
    Complete,
    Limit,
    Timeout,
}

impl Cut {
    fn note(self, limit: usize, timeout: Duration) -> Option<String> {
        match self {
            Cut::Complete => None,
            Cut::Limit => Some(format!("(stopped at the limit of {limit} results)")),
            Cut::Timeout => Some(format!(
                "(stopped after the time limit of {} ms; results are incomplete)",
                timeout.as_millis()
            )),
        }
    }

    fn structured(self) -> (bool, bool) {
        (self == Cut::Limit, self == Cut::Timeout)
    }
}

fn timeout(ms: Option<u64>) -> Duration {
    Duration::from_millis(ms.unwrap_or(DEFAULT_TIMEOUT_MS).clamp(1, MAX_TIMEOUT_MS))
}

fn limit(count: Option<usize>) -> usize {
    count.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT)
}

/// A walker over `dir`: `.gitignore` (also without a git repository) and
/// hidden files honoured unless `everything`; `.git` and git worktrees
/// nested in `dir` (other checkouts) never; links not followed, so it
/// stays inside the root.
fn walker(dir: &Path, everything: bool, max_depth: Option<usize>) -> ignore::Walk {
    let mut builder = WalkBuilder::new(dir);
    builder
        .standard_filters(!everything)
        .require_git(false)
        .follow_links(false)
        .max_depth(max_depth)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| entry.file_name() != ".git" && !nested_worktree(entry));
    builder.build()
}

fn nested_worktree(entry: &ignore::DirEntry) -> bool {
    entry.depth() > 0
        && entry.file_type().is_some_and(|t| t.is_dir())
        && crate::confine::worktree::is_linked_worktree(entry.path())
}

/// The directory `given` (default the root), inside the root.
fn directory(project: &Project, given: Option<&str>) -> Result<PathBuf, Failure> {
    let path = match given.filter(|g| !g.is_empty()) {
        Some(given) => project.resolve(given)?,
        None => project.root.clone(),
    };
    if !Path::new(&path).is_dir() {
        return Err(Failure(format!(
            "{} is not a directory of the project",
            given.unwrap_or(".")
        )));
    }
    Ok(PathBuf::from(path))
}

/// `path` relative to `root`, `/`-separated.
fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// A glob matched against a relative path, or, without `/`, a file name.
struct PathGlob {
    matcher: GlobMatcher,
    by_name: bool,
}

impl PathGlob {
    fn new(pattern: &str) -> Result<PathGlob, Failure> {
        let pattern = pattern.trim_start_matches("./");
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| Failure(format!("bad glob {pattern}: {e}")))?;
        Ok(PathGlob {
            matcher: glob.compile_matcher(),
            by_name: !pattern.contains('/'),
        })
    }

    fn matches(&self, relative: &str) -> bool {
        if self.by_name {
            let name = relative.rsplit('/').next().unwrap_or(relative);
            self.matcher.is_match(name)
        } else {
            self.matcher.is_match(relative)
        }
    }
}

/// Runs `walk` on the blocking pool.
async fn blocking<T: Send + 'static>(
    walk: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Failure> {
    crate::task::spawn_blocking(walk)
        .await
        .map_err(|e| Failure(format!("the search failed: {e}")))
}

/// Files under `dir` (relative to `root`) that `keep`, at most `limit`,
/// within `timeout`.
fn find_files(
    root: &Path,
    dir: &Path,
    everything: bool,
    limit: usize,
    timeout: Duration,
    keep: impl Fn(&str) -> bool,
) -> (Vec<String>, Cut) {
    let deadline = Instant::now() + timeout;
    let mut found = vec![];
    for entry in walker(dir, everything, None).flatten() {
        if Instant::now() >= deadline {
            return (found, Cut::Timeout);
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = relative(root, entry.path());
        if keep(&path) {
            if found.len() == limit {
                return (found, Cut::Limit);
            }
            found.push(path);
        }
    }
    (found, Cut::Complete)
}

fn files_answer(files: Vec<String>, cut: Cut, limit: usize, timeout: Duration) -> Answer {
    let mut text = files.join("\n");
    if files.is_empty() {
        text = "No files found".into();
    }
    if let Some(note) = cut.note(limit, timeout) {
        text = format!("{text}\n{note}");
    }
    let (limit_reached, timed_out) = cut.structured();
    Ok((
        text,
        json!({"files": files, "limitReached": limit_reached, "timedOut": timed_out}),
    ))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GlobArgs {
    glob_pattern: String,
    sub_directory_relative_path: Option<String>,
    #[serde(default)]
    add_excluded: bool,
    file_count_limit: Option<usize>,
    timeout: Option<u64>,
}

pub async fn by_glob(project: &Project, args: GlobArgs) -> Answer {
    let glob = PathGlob::new(&args.glob_pattern)?;
    let dir = directory(project, args.sub_directory_relative_path.as_deref())?;
    let root = PathBuf::from(&project.root);
    let (limit, timeout) = (limit(args.file_count_limit), timeout(args.timeout));
    let everything = args.add_excluded;
    let (files, cut) = blocking(move || {
        find_files(&root, &dir, everything, limit, timeout, |path| {
            glob.matches(path)
        })
    })
    .await?;
    files_answer(files, cut, limit, timeout)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeywordArgs {
    name_keyword: String,
    file_count_limit: Option<usize>,
    timeout: Option<u64>,
}

pub async fn by_name_keyword(project: &Project, args: KeywordArgs) -> Answer {
    if args.name_keyword.is_empty() {
        return Err(Failure("nameKeyword must not be empty".into()));
    }
    let keyword = args.name_keyword.to_lowercase();
    let root = PathBuf::from(&project.root);
    let (limit, timeout) = (limit(args.file_count_limit), timeout(args.timeout));
    let (files, cut) = blocking(move || {
        find_files(&root, &root, false, limit, timeout, |path| {
            let name = path.rsplit('/').next().unwrap_or(path);
            name.to_lowercase().contains(&keyword)
        })
    })
    .await?;
    files_answer(files, cut, limit, timeout)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchArgs {
    search_text: Option<String>,
    regex_pattern: Option<String>,
    directory_to_search: Option<String>,
    file_mask: Option<String>,
    #[serde(default = "yes")]
    case_sensitive: bool,
    max_usage_count: Option<usize>,
    timeout: Option<u64>,
}

fn yes() -> bool {
    true
}

/// One matching line.
#[derive(Debug, PartialEq)]
struct Usage {
    file_path: String,
    line: usize,
    line_text: String,
}

/// `search_in_files_by_text` (`regex` false) or `…_by_regex`.
pub async fn in_files(project: &Project, args: SearchArgs, regex: bool) -> Answer {
    let tool = if regex {
        "search_in_files_by_regex"
    } else {
        "search_in_files_by_text"
    };
    let pattern = if regex {
        args.regex_pattern
            .ok_or_else(|| Failure(format!("{tool}: missing field `regexPattern`")))?
    } else {
        let text = args
            .search_text
            .ok_or_else(|| Failure(format!("{tool}: missing field `searchText`")))?;
        regex::escape(&text)
    };
    if pattern.is_empty() {
        return Err(Failure(format!("{tool}: the pattern must not be empty")));
    }
    let matcher = RegexBuilder::new(&pattern)
        .case_insensitive(!args.case_sensitive)
        .build()
        .map_err(|e| Failure(format!("bad regular expression: {e}")))?;
    let mask = args.file_mask.as_deref().map(PathGlob::new).transpose()?;
    let dir = directory(project, args.directory_to_search.as_deref())?;
    let root = PathBuf::from(&project.root);
    let (limit, timeout) = (limit(args.max_usage_count), timeout(args.timeout));
    let (usages, cut) =
        blocking(move || search(&root, &dir, &matcher, mask.as_ref(), limit, timeout)).await?;
    let mut text = usages
        .iter()
        .map(|u| format!("{}:{}: {}", u.file_path, u.line, u.line_text))
        .collect::<Vec<_>>()
        .join("\n");
    if usages.is_empty() {
        text = "No occurrences found".into();
    }
    if let Some(note) = cut.note(limit, timeout) {
        text = format!("{text}\n{note}");
    }
    let (limit_reached, timed_out) = cut.structured();
    let entries: Vec<Value> = usages
        .into_iter()
        .map(|u| json!({"filePath": u.file_path, "line": u.line, "lineText": u.line_text}))
        .collect();
    Ok((
        text,
        json!({"entries": entries, "limitReached": limit_reached, "timedOut": timed_out}),
    ))
}

fn search(
    root: &Path,
    dir: &Path,
    matcher: &Regex,
    mask: Option<&PathGlob>,
    limit: usize,
    timeout: Duration,
) -> (Vec<Usage>, Cut) {
    let deadline = Instant::now() + timeout;
    let mut usages = vec![];
    for entry in walker(dir, false, None).flatten() {
        if Instant::now() >= deadline {
            return (usages, Cut::Timeout);
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = relative(root, entry.path());
        if mask.is_some_and(|mask| !mask.matches(&path)) {
            continue;
        }
        if entry
            .metadata()
            .map_or(true, |m| m.len() > MAX_SEARCHED_BYTES)
        {
            continue;
        }
        let Ok(bytes) = std::fs::read(entry.path()) else {
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        for (index, line) in text.lines().enumerate() {
            if !matcher.is_match(line) {
                continue;
            }
            if usages.len() == limit {
                return (usages, Cut::Limit);
            }
            let line_text = match line.char_indices().nth(MAX_LINE_CHARS) {
                Some((at, _)) => format!("{}…", &line[..at]),
                None => line.to_owned(),
            };
            usages.push(Usage {
                file_path: path.clone(),
                line: index + 1,
                line_text,
            });
        }
    }
    (usages, Cut::Complete)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeArgs {
    directory_path: String,
    #[serde(default = "default_depth")]
    max_depth: usize,
    timeout: Option<u64>,
}

fn default_depth() -> usize {
    5
}

/// Most entries a tree shows.
const MAX_TREE_ENTRIES: usize = 5_000;

pub async fn tree(project: &Project, args: TreeArgs) -> Answer {
    let dir = directory(project, Some(&args.directory_path))?;
    let root = PathBuf::from(&project.root);
    let shown = relative(&root, &dir);
    let shown = if shown.is_empty() { ".".into() } else { shown };
    let timeout = timeout(args.timeout);
    let depth = args.max_depth.max(1);
    let (entries, cut) = blocking(move || walk_tree(&root, &dir, depth, timeout)).await?;
    let mut text = format!("{shown}/");
    for (path, is_dir, depth) in &entries {
        let name = path.rsplit('/').next().unwrap_or(path);
        let slash = if *is_dir { "/" } else { "" };
        text.push_str(&format!("\n{}{name}{slash}", "  ".repeat(*depth)));
    }
    if let Some(note) = cut.note(MAX_TREE_ENTRIES, timeout) {
        text = format!("{text}\n{note}");
    }
    let (limit_reached, timed_out) = cut.structured();
    let entries: Vec<Value> = entries
        .into_iter()
        .map(|(path, is_dir, depth)| {
            json!({"path": path, "type": if is_dir { "directory" } else { "file" }, "depth": depth})
        })
        .collect();
    Ok((
        text,
        json!({"directoryPath": shown, "entries": entries, "limitReached": limit_reached, "timedOut": timed_out}),
    ))
}

/// `(relative path, is a directory, depth from 1)` in tree order.
fn walk_tree(
    root: &Path,
    dir: &Path,
    max_depth: usize,
    timeout: Duration,
) -> (Vec<(String, bool, usize)>, Cut) {
    let deadline = Instant::now() + timeout;
    let mut entries = vec![];
    for entry in walker(dir, false, Some(max_depth)).flatten() {
        if Instant::now() >= deadline {
            return (entries, Cut::Timeout);
        }
        if entry.depth() == 0 {
            continue;
        }
        if entries.len() == MAX_TREE_ENTRIES {
            return (entries, Cut::Limit);
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        entries.push((relative(root, entry.path()), is_dir, entry.depth()));
    }
    (entries, Cut::Complete)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> crate::scratch::Scratch {
        let root = crate::scratch::Scratch::new("search");
        let write = |path: &str, text: &[u8]| {
            let full = root.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        };
        write(".gitignore", b"ignored.txt\n");
        write("ignored.txt", b"needle\n");
        write("a.rs", b"fn main() {}\nlet needle = 1;\n");
        write("sub/deep/b.rs", b"Needle\nneedle\n");
        write("latin1.txt", b"needle \xe9\n");
        root
    }

    #[test]
    fn globs_match_paths_or_names() {
        assert!(PathGlob::new("*.rs").unwrap().matches("sub/deep/b.rs"));
        assert!(
            PathGlob::new("sub/**/*.rs")
                .unwrap()
                .matches("sub/deep/b.rs")
        );
        assert!(!PathGlob::new("sub/*.rs").unwrap().matches("sub/deep/b.rs"));
    }

    #[test]
    fn walks_honour_gitignore_limits_and_utf8() {
        let root = fixture();
        let (files, cut) = find_files(&root, &root, false, 10, timeout(None), |_| true);
        assert_eq!(cut, Cut::Complete);
        assert!(!files.iter().any(|f| f == "ignored.txt"), "{files:?}");
        assert!(files.iter().any(|f| f == "sub/deep/b.rs"), "{files:?}");
        let (all, _) = find_files(&root, &root, true, 10, timeout(None), |_| true);
        assert!(all.iter().any(|f| f == "ignored.txt"), "{all:?}");
        let (one, cut) = find_files(&root, &root, false, 1, timeout(None), |_| true);
        assert_eq!((one.len(), cut), (1, Cut::Limit));

        let needle = Regex::new("needle").unwrap();
        let (usages, cut) = search(&root, &root, &needle, None, 10, timeout(None));
        assert_eq!(cut, Cut::Complete);
        let found: Vec<(&str, usize)> = usages
            .iter()
            .map(|u| (u.file_path.as_str(), u.line))
            .collect();
        assert_eq!(found, [("a.rs", 2), ("sub/deep/b.rs", 2)]);
        let (none, cut) = search(&root, &root, &needle, None, 10, Duration::ZERO);
        assert_eq!((none.len(), cut), (0, Cut::Timeout));
        assert!(cut.note(10, Duration::ZERO).unwrap().contains("time limit"));
        let (tree, _) = walk_tree(&root, &root, 1, timeout(None));
        assert!(tree.iter().all(|(_, _, depth)| *depth == 1), "{tree:?}");
    }
}
