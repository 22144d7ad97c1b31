//! What the language servers last reported for each file, kept after its
//! buffer goes (a tool loaded it for one call, the person closed it), so
//! the project's problems do not depend on which buffers happen to be
//! loaded. A file's entry holds until the file changes on disk or a newer
//! report replaces it; past [`MAX_FILES`] the oldest entries go.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use serde_json::Value;

use crate::file_watch::Stamp;
use crate::mutex::lock;

/// At most this many files are kept.
pub const MAX_FILES: usize = 1000;
/// At most this many diagnostics of one file are kept.
pub const MAX_PER_FILE: usize = 500;

/// What a kept report's columns count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Columns {
    Utf16,
    /// Bytes: vim.diagnostic's own, for a buffer without lines to count in.
    Utf8,
    Utf32,
}

/// One file's kept report.
#[derive(Debug, Clone)]
pub struct Report {
    /// Absolute.
    pub path: String,
    /// `[{severity, message, source?, range}]`, 0-based, at most
    /// [`MAX_PER_FILE`].
    pub diagnostics: Vec<Value>,
    pub columns: Columns,
}

/// What became of a pull of the servers' workspace diagnostics.
#[derive(Debug, Clone, Default)]
pub struct Pulled {
    /// Servers that did not answer in time.
    pub silent: Vec<String>,
    /// Servers' errors, and why nothing could be asked.
    pub errors: Vec<String>,
}

struct Entry {
    report: Report,
    /// The file when it was reported on; a report about other text is none
    /// about this one.
    stamp: Option<Stamp>,
    /// Order of recording, to let the oldest go first.
    seq: u64,
}

#[derive(Default)]
pub struct Kept {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    files: HashMap<String, Entry>,
    next: u64,
}

impl Kept {
    /// The server's newest report on `path`: kept as the file is now; an
    /// empty one forgets the file. Reads the file's stamp (one `stat`).
    pub fn record(&self, path: &str, diagnostics: &[Value], columns: Columns) {
        if diagnostics.is_empty() {
            return self.forget(path);
        }
        let stamp = Stamp::of(Path::new(path));
        let report = Report {
            path: path.to_owned(),
            diagnostics: diagnostics.iter().take(MAX_PER_FILE).cloned().collect(),
            columns,
        };
        let mut inner = lock(&self.inner);
        inner.next += 1;
        let seq = inner.next;
        inner
            .files
            .insert(path.to_owned(), Entry { report, stamp, seq });
        if inner.files.len() > MAX_FILES
            && let Some(oldest) = inner
                .files
                .iter()
                .min_by_key(|(_, entry)| entry.seq)
                .map(|(path, _)| path.clone())
        {
            inner.files.remove(&oldest);
        }
    }

    /// Nothing is known about `path` any more (its text changed in a buffer).
    pub fn forget(&self, path: &str) {
        lock(&self.inner).files.remove(path);
    }

    /// The reports on files that are as they were when reported, by path;
    /// the others are forgotten. Reads every kept file's stamp: call it off
    /// the runtime's thread.
    pub fn current(&self) -> Vec<Report> {
        let kept: Vec<(String, Option<Stamp>, u64)> = lock(&self.inner)
            .files
            .iter()
            .map(|(path, entry)| (path.clone(), entry.stamp, entry.seq))
            .collect();
        let stale: Vec<(String, u64)> = kept
            .into_iter()
            .filter(|(path, stamp, _)| Stamp::of(Path::new(path)) != *stamp)
            .map(|(path, _, seq)| (path, seq))
            .collect();
        let mut inner = lock(&self.inner);
        for (path, seq) in stale {
            // Unless a newer report came in meanwhile.
            if inner.files.get(&path).is_some_and(|entry| entry.seq == seq) {
                inner.files.remove(&path);
            }
        }
        let mut reports: Vec<Report> = inner
            .files
            .values()
            .map(|entry| entry.report.clone())
            .collect();
        reports.sort_by(|a, b| a.path.cmp(&b.path));
        reports
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;
    use serde_json::json;

    fn paths(kept: &Kept) -> Vec<String> {
        kept.current().into_iter().map(|r| r.path).collect()
    }

    #[test]
    fn a_report_holds_until_its_file_changes_or_a_newer_one_replaces_it() {
        let dir = Scratch::new("kept");
        let a = dir.join("a.py");
        let b = dir.join("b.py");
        std::fs::write(&a, "x = undefined\n").unwrap();
        std::fs::write(&b, "y = undefined\n").unwrap();
        let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
        let kept = Kept::default();
        kept.record(
            a,
            &[json!({"severity": 1, "message": "boom"})],
            Columns::Utf16,
        );
        kept.record(b, &[json!({"severity": 2, "message": "hm"})], Columns::Utf8);
        assert_eq!(paths(&kept), [a, b]);
        assert_eq!(kept.current()[1].columns, Columns::Utf8);

        std::fs::write(a, "x = 1  # fixed\n").unwrap();
        assert_eq!(paths(&kept), [b], "a changed on disk");

        kept.record(
            b,
            &[json!({"severity": 1, "message": "newer"})],
            Columns::Utf16,
        );
        assert_eq!(kept.current()[0].diagnostics[0]["message"], "newer");
        kept.record(b, &[], Columns::Utf16);
        assert!(paths(&kept).is_empty(), "an empty report forgets");

        kept.record(a, &[json!({"severity": 1})], Columns::Utf16);
        std::fs::remove_file(a).unwrap();
        assert!(paths(&kept).is_empty(), "a file gone is no problem");
    }

    #[test]
    fn the_oldest_go_first_and_a_file_keeps_a_bounded_list() {
        let dir = Scratch::new("kept-bounds");
        let kept = Kept::default();
        let many: Vec<Value> = (0..MAX_PER_FILE + 5)
            .map(|i| json!({"severity": 1, "message": i}))
            .collect();
        for i in 0..=MAX_FILES {
            let path = dir.join(format!("f{i:04}.c"));
            std::fs::write(&path, "").unwrap();
            kept.record(path.to_str().unwrap(), &many[..1], Columns::Utf16);
        }
        let all = paths(&kept);
        assert_eq!(all.len(), MAX_FILES);
        assert!(all[0].ends_with("f0001.c"), "f0000 went first: {}", all[0]);
        let last = dir.join("f0000.c");
        kept.record(last.to_str().unwrap(), &many, Columns::Utf16);
        let kept_last = kept
            .current()
            .into_iter()
            .find(|r| r.path.ends_with("f0000.c"));
        assert_eq!(kept_last.unwrap().diagnostics.len(), MAX_PER_FILE);
    }
}
