//! The text of the lines a language server's answer names: from Neovim for
//! files whose buffer has unsaved edits (one batched call for just those
//! lines), else read from disk here, off the UI thread and within bounds.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::Failure;
use crate::nvim::seam::{BufferRows, LuaCall, ModifiedBuffer};
use crate::state::State;

/// At most this many files are read for one answer; the callers cut
/// answers that name more.
pub const MAX_FILES: usize = 1000;
/// At most this much of one file is read looking for its lines.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Line texts by file and 0-based row.
#[derive(Debug, Default)]
pub struct LineTexts(HashMap<String, HashMap<u64, String>>);

impl LineTexts {
    /// Row `row` of `path`, "" when unknown (unreadable, past the end).
    pub fn get(&self, path: &str, row: u64) -> &str {
        self.0
            .get(path)
            .and_then(|rows| rows.get(&row))
            .map_or("", String::as_str)
    }
}

/// Drops the items of files past the first [`MAX_FILES`] (in path order);
/// true when it dropped any.
pub fn keep_files<T>(items: &mut Vec<T>, path_of: impl Fn(&T) -> &str) -> bool {
    let files: BTreeSet<&str> = items.iter().map(&path_of).collect();
    let Some(last) = files.iter().nth(MAX_FILES).map(|p| p.to_string()) else {
        return false;
    };
    items.retain(|item| path_of(item) < last.as_str());
    true
}

/// The rows each file's `(path, row)` pairs name.
pub fn rows<'a>(pairs: impl Iterator<Item = (&'a str, u64)>) -> BTreeMap<String, BTreeSet<u64>> {
    let mut wanted: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    for (path, row) in pairs {
        wanted.entry(path.to_owned()).or_default().insert(row);
    }
    wanted
}

/// The texts of `wanted` rows by file (at most [`MAX_FILES`] files).
pub async fn read(
    state: &State,
    wanted: BTreeMap<String, BTreeSet<u64>>,
) -> Result<LineTexts, Failure> {
    let modified = state
        .editor()
        .query::<Vec<ModifiedBuffer>>(LuaCall::ModifiedBuffers)
        .await
        .map_err(|e| Failure(format!("Neovim could not list its edited buffers: {e}")))?
        .unwrap_or_default();
    let (from_buffers, from_disk) = if modified.is_empty() {
        (vec![], wanted)
    } else {
        blocking(move || split(modified, wanted)).await?
    };
    let mut texts = LineTexts::default();
    if !from_buffers.is_empty() {
        let asked: Vec<BufferRows> = from_buffers
            .iter()
            .map(|(_, buf, rows)| BufferRows {
                buf: *buf,
                rows: rows.iter().copied().collect(),
            })
            .collect();
        let lines = state
            .editor()
            .query::<Vec<Vec<String>>>(LuaCall::BufferLines(asked))
            .await
            .map_err(|e| Failure(format!("Neovim could not read its buffers: {e}")))?
            .unwrap_or_default();
        for ((path, _, rows), lines) in from_buffers.into_iter().zip(lines) {
            texts.0.insert(path, rows.into_iter().zip(lines).collect());
        }
    }
    let read = blocking(move || {
        from_disk
            .into_iter()
            .take(MAX_FILES)
            .map(|(path, rows)| {
                let lines = rows_of(Path::new(&path), &rows);
                (path, lines)
            })
            .collect::<Vec<_>>()
    })
    .await?;
    texts.0.extend(read);
    Ok(texts)
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Failure> {
    crate::task::spawn_blocking(work)
        .await
        .map_err(|e| Failure(format!("reading the answer's lines failed: {e}")))
}

type Rows = BTreeSet<u64>;
/// A file whose rows come from its edited buffer.
type FromBuffer = (String, i64, Rows);

/// `wanted` split into files with an edited buffer (path, buffer, rows) and
/// the rest, comparing paths with symlinks resolved.
fn split(
    modified: Vec<ModifiedBuffer>,
    wanted: BTreeMap<String, Rows>,
) -> (Vec<FromBuffer>, BTreeMap<String, Rows>) {
    let buffers: HashMap<PathBuf, i64> = modified
        .into_iter()
        .flat_map(|m| {
            let given = PathBuf::from(&m.path);
            let real = std::fs::canonicalize(&given).ok();
            [Some((given, m.buf)), real.map(|r| (r, m.buf))]
        })
        .flatten()
        .collect();
    let mut from_buffers = vec![];
    let mut from_disk = BTreeMap::new();
    for (path, rows) in wanted {
        let found = buffers.get(Path::new(&path)).copied().or_else(|| {
            let real = std::fs::canonicalize(&path).ok()?;
            buffers.get(&real).copied()
        });
        match found {
            Some(buf) => from_buffers.push((path, buf, rows)),
            None => {
                from_disk.insert(path, rows);
            }
        }
    }
    (from_buffers, from_disk)
}

/// Rows `rows` of the file at `path`, as a buffer shows them (no `\r` of a
/// CRLF line end, invalid UTF-8 replaced); rows it cannot read are left out.
fn rows_of(path: &Path, rows: &Rows) -> HashMap<u64, String> {
    let mut found = HashMap::with_capacity(rows.len());
    let Some(&last) = rows.last() else {
        return found;
    };
    let Ok(file) = std::fs::File::open(path) else {
        return found;
    };
    let mut reader = std::io::BufReader::new(std::io::Read::take(file, MAX_FILE_BYTES));
    let mut line = Vec::new();
    for row in 0..=last {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if rows.contains(&row) {
            let end = line
                .strip_suffix(b"\n")
                .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
                .unwrap_or(&line);
            found.insert(row, String::from_utf8_lossy(end).into_owned());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_read_as_a_buffer_shows_them() {
        let dir = crate::scratch::Scratch::new("line-text");
        let path = dir.join("a.txt");
        std::fs::write(&path, b"zero\r\none \xff\ntwo\nthree").unwrap();
        let rows: Rows = [0, 1, 3, 9].into_iter().collect();
        let found = rows_of(&path, &rows);
        assert_eq!(found[&0], "zero", "no \\r");
        assert_eq!(found[&1], "one \u{fffd}");
        assert_eq!(found[&3], "three", "no final newline");
        assert!(!found.contains_key(&9), "past the end");
        assert!(rows_of(&dir.join("missing"), &rows).is_empty());
    }

    #[test]
    fn answers_naming_too_many_files_keep_the_first_ones() {
        let mut items: Vec<String> = (0..MAX_FILES + 5)
            .rev()
            .map(|i| format!("/w/{i:05}"))
            .collect();
        items.push("/w/00000".into());
        assert!(keep_files(&mut items, String::as_str));
        assert_eq!(
            items.len(),
            MAX_FILES + 1,
            "both items of the first file stay"
        );
        assert!(items.iter().all(|p| p.as_str() < "/w/01000"));
        let mut few = vec!["/a".to_owned()];
        assert!(!keep_files(&mut few, String::as_str));
        let wanted = rows([("/a", 3), ("/b", 1), ("/a", 1)].into_iter());
        assert_eq!(wanted["/a"], [1, 3].into());
    }

    #[test]
    fn files_with_edited_buffers_are_told_apart_through_symlinks() {
        let dir = crate::scratch::Scratch::new("line-split");
        let real = dir.join("real.txt");
        std::fs::write(&real, "x\n").unwrap();
        std::os::unix::fs::symlink(&real, dir.join("link.txt")).unwrap();
        let path = |name: &str| dir.join(name).to_str().unwrap().to_owned();
        let wanted: BTreeMap<String, Rows> = [
            (path("real.txt"), [0].into()),
            (path("other.txt"), [1].into()),
        ]
        .into_iter()
        .collect();
        let modified = vec![ModifiedBuffer {
            buf: 4,
            path: path("link.txt"),
        }];
        let (buffers, disk) = split(modified, wanted);
        assert_eq!(buffers, [(path("real.txt"), 4, [0].into())]);
        assert_eq!(disk.keys().collect::<Vec<_>>(), [&path("other.txt")]);
    }
}
