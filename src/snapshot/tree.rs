//! What a store does with trees: take one of the work tree as it is, list
//! what differs between two, read a file's bytes out of one, and make a
//! new one where some files are settled at what they hold now.

use std::time::Duration;

use super::store::{Call, Store};

/// The first snapshot of a large project reads every file once; the next
/// ones only those whose size or time changed.
const TAKE_TIMEOUT: Duration = Duration::from_secs(180);
/// `diff-tree`'s listing beyond this is cut (and said to be).
const MAX_LISTING: usize = 4 << 20;

/// A tree object's id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree(pub String);

/// A file as a tree holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    pub id: String,
    /// git's mode: 100644, 100755, 120000 (a link), 160000 (a repository).
    pub mode: u32,
}

impl Blob {
    /// A file's bytes (rather than a link or a nested repository).
    pub fn is_file(&self) -> bool {
        matches!(self.mode, 0o100644 | 0o100755)
    }

    pub fn is_executable(&self) -> bool {
        self.mode == 0o100755
    }
}

/// One path that differs between two trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// Relative to the work tree.
    pub path: String,
    /// `None`: the first tree has no such path.
    pub before: Option<Blob>,
    /// `None`: the second tree has no such path.
    pub after: Option<Blob>,
}

/// What differs between two trees.
#[derive(Debug, Default)]
pub struct Differences {
    pub list: Vec<Difference>,
    /// More differ than were listed.
    pub cut: bool,
}

impl Store {
    /// A tree of every file below `prefix` (relative to the work tree, `""`
    /// for all) that git would not ignore, untracked ones included.
    pub async fn take(&self, prefix: &str) -> Result<Tree, String> {
        let call = Call {
            timeout: Some(TAKE_TIMEOUT),
            ..Call::default()
        };
        // An unreadable file is left out rather than failing the rest; git
        // then still exits 1.
        let below = if prefix.is_empty() { "." } else { prefix };
        let args = ["add", "--all", "--ignore-errors", "--", below];
        let added = self.git_output(&args, 64 * 1024, call).await?;
        if added.code != 0 {
            if !added.stderr.contains("adding files failed") {
                return Err(format!("git add failed: {}", added.stderr));
            }
            tracing::warn!("a snapshot left files out: {}", added.stderr);
        }
        let written = self.git(&["write-tree"], 4096, Call::default()).await?;
        Ok(Tree(written.text().trim().to_owned()))
    }

    /// The paths below `prefix` (relative to the work tree, `""` for all)
    /// that differ between `from` and `to`, renames as a deletion and a
    /// new file.
    pub async fn differences(
        &self,
        from: &Tree,
        to: &Tree,
        prefix: &str,
    ) -> Result<Differences, String> {
        let mut args = vec![
            "diff-tree",
            "-r",
            "-z",
            "--raw",
            "--no-renames",
            "--no-ext-diff",
            &from.0,
            &to.0,
        ];
        if !prefix.is_empty() {
            args.extend(["--", prefix]);
        }
        let out = self.git(&args, MAX_LISTING, Call::default()).await?;
        let mut list = parse_raw(&out.stdout);
        if out.cut {
            // The last entry may be half there.
            list.pop();
        }
        Ok(Differences { list, cut: out.cut })
    }

    /// Blob `id`'s bytes; `None` when it holds more than `max_bytes`.
    pub async fn read(&self, id: &str, max_bytes: usize) -> Result<Option<Vec<u8>>, String> {
        let args = ["cat-file", "blob", id];
        let out = self.git(&args, max_bytes, Call::default()).await?;
        Ok((!out.cut).then_some(out.stdout))
    }

    /// Stores `bytes` as a blob; its id.
    pub async fn hash(&self, bytes: Vec<u8>) -> Result<String, String> {
        let args = ["hash-object", "-w", "--no-filters", "--stdin"];
        let call = Call {
            input: Some(bytes),
            ..Call::default()
        };
        let out = self.git(&args, 4096, call).await?;
        Ok(out.text().trim().to_owned())
    }

    /// `base` with each of `settled`'s paths holding the blob given, or
    /// gone (`None`).
    pub async fn settle(
        &self,
        base: &Tree,
        settled: &[(String, Option<Blob>)],
    ) -> Result<Tree, String> {
        if settled.is_empty() {
            return Ok(base.clone());
        }
        let settle = || Call {
            settle: true,
            ..Call::default()
        };
        self.git(&["read-tree", &base.0], 4096, settle()).await?;
        let mut info = Vec::new();
        for (path, blob) in settled {
            let line = match blob {
                Some(blob) => format!("{:o} {}\t{path}\0", blob.mode, blob.id),
                None => format!("0 {}\t{path}\0", "0".repeat(base.0.len())),
            };
            info.extend_from_slice(line.as_bytes());
        }
        let args = ["update-index", "-z", "--index-info"];
        let call = Call {
            input: Some(info),
            ..settle()
        };
        self.git(&args, 4096, call).await?;
        let written = self.git(&["write-tree"], 4096, settle()).await?;
        Ok(Tree(written.text().trim().to_owned()))
    }
}

/// `diff-tree --raw -z`: `:mode mode id id status\0path\0` for each path.
fn parse_raw(out: &[u8]) -> Vec<Difference> {
    let mut fields = out.split(|byte| *byte == 0);
    let mut list = Vec::new();
    while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
        let (Ok(meta), Ok(path)) = (std::str::from_utf8(meta), std::str::from_utf8(path)) else {
            tracing::warn!("a changed path that is not UTF-8 is left out");
            continue;
        };
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old_id, new_id, _status] = parts.as_slice() else {
            continue;
        };
        let blob = |mode: &str, id: &str| {
            let mode = u32::from_str_radix(mode, 8).ok()?;
            (mode != 0).then(|| Blob {
                id: id.to_owned(),
                mode,
            })
        };
        list.push(Difference {
            path: path.to_owned(),
            before: blob(old_mode, old_id),
            after: blob(new_mode, new_id),
        });
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_ide_test_support::git as person;

    #[test]
    fn raw_listings_parse_into_paths_and_blobs() {
        let zero = "0".repeat(40);
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        let raw = format!(
            ":100644 100644 {a} {b} M\0src/x y.rs\0:000000 100755 {zero} {b} A\0new\0\
             :100644 000000 {a} {zero} D\0gone\0"
        );
        let list = parse_raw(raw.as_bytes());
        assert_eq!(list.len(), 3);
        assert_eq!(list[0].path, "src/x y.rs");
        assert_eq!(
            list[0].after,
            Some(Blob {
                id: b.clone(),
                mode: 0o100644
            })
        );
        assert!(list[1].before.is_none() && list[1].after.as_ref().unwrap().is_executable());
        assert!(list[2].after.is_none() && list[2].before.as_ref().unwrap().is_file());
        assert!(parse_raw(b"").is_empty());
    }

    #[tokio::test]
    async fn a_repository_is_snapshotted_without_touching_it() {
        let scratch = crate::scratch::Scratch::new("snapshot-git");
        let root = scratch.canonicalize().unwrap().join("project");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/kept.txt"), "a\r\nb\r\n").unwrap();
        std::fs::write(root.join("gone.txt"), "bye\n").unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(root.join(".gitattributes"), "* text=auto eol=lf\n").unwrap();
        person(&root, &["init", "-q"]);
        person(&root, &["add", "-A"]);
        person(&root, &["commit", "-qm", "one"]);
        std::fs::write(root.join("stash.txt"), "stash me\n").unwrap();
        person(&root, &["stash", "push", "-u", "-q"]);
        std::fs::write(root.join("staged.txt"), "staged\n").unwrap();
        person(&root, &["add", "staged.txt"]);
        let index = std::fs::read(root.join(".git/index")).unwrap();
        let head = person(&root, &["rev-parse", "HEAD"]);
        let refs = person(&root, &["for-each-ref"]);
        let stash = person(&root, &["stash", "list"]);

        let states = scratch.join("states");
        let store = Store::open(&states, &root.join("src")).await.unwrap();
        assert!(store.in_git());
        assert_eq!(store.work_tree(), root);
        let baseline = store.take("").await.unwrap();
        std::fs::write(root.join("src/kept.txt"), "a\r\nB\r\n").unwrap();
        std::fs::remove_file(root.join("gone.txt")).unwrap();
        std::fs::write(root.join("new.txt"), "new\n").unwrap();
        std::fs::write(root.join("noise.log"), "ignored\n").unwrap();
        let now = store.take("").await.unwrap();
        let found = store.differences(&baseline, &now, "").await.unwrap();
        let paths: Vec<&str> = found.list.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(paths, ["gone.txt", "new.txt", "src/kept.txt"]);
        assert!(
            found.list[..2].iter().all(|d| d.path != "staged.txt"),
            "staged before the baseline: no change since"
        );
        let kept = &found.list[2];
        let before = kept.before.as_ref().unwrap();
        assert_eq!(
            store.read(&before.id, 1 << 20).await.unwrap().unwrap(),
            b"a\r\nb\r\n",
            "the bytes on disk, whatever the attributes say"
        );
        assert_eq!(store.read(&before.id, 3).await.unwrap(), None);
        let below = store.differences(&baseline, &now, "src").await.unwrap();
        assert_eq!(below.list.len(), 1);

        // Settling: the new file as it is, the deletion kept.
        let settled = vec![
            ("new.txt".to_owned(), found.list[1].after.clone()),
            ("gone.txt".to_owned(), None),
        ];
        let next = store.settle(&baseline, &settled).await.unwrap();
        let left = store.differences(&next, &now, "").await.unwrap();
        assert_eq!(left.list.len(), 1);
        assert_eq!(left.list[0].path, "src/kept.txt");
        let blob = store.hash(b"x\n".to_vec()).await.unwrap();
        assert_eq!(store.read(&blob, 100).await.unwrap().unwrap(), b"x\n");

        assert_eq!(std::fs::read(root.join(".git/index")).unwrap(), index);
        assert_eq!(person(&root, &["rev-parse", "HEAD"]), head);
        assert_eq!(person(&root, &["for-each-ref"]), refs);
        assert_eq!(person(&root, &["stash", "list"]), stash);
        assert_eq!(
            person(&root, &["status", "--porcelain"]),
            " D gone.txt\n M src/kept.txt\nA  staged.txt\n?? new.txt\n"
        );
        // Another store of the same work tree finds the baseline kept.
        store
            .keep(&super::super::Kept {
                tree: next.0.clone(),
                since: 7,
            })
            .unwrap();
        let again = Store::open(&states, &root).await.unwrap();
        assert_eq!(again.kept().unwrap().tree, next.0);
    }

    #[tokio::test]
    async fn a_directory_outside_git_is_snapshotted_too() {
        let scratch = crate::scratch::Scratch::new("snapshot-plain");
        let root = scratch.canonicalize().unwrap().join("plain");
        std::fs::create_dir_all(root.join("node_modules/dep")).unwrap();
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        std::fs::write(root.join("node_modules/dep/x.js"), "x\n").unwrap();
        let store = Store::open(&scratch.join("states"), &root).await.unwrap();
        assert!(!store.in_git());
        let baseline = store.take("").await.unwrap();
        std::fs::write(root.join("a.txt"), "A\n").unwrap();
        std::fs::write(root.join("node_modules/dep/x.js"), "y\n").unwrap();
        let now = store.take("").await.unwrap();
        let found = store.differences(&baseline, &now, "").await.unwrap();
        assert_eq!(found.list.len(), 1, "{found:?}");
        assert_eq!(found.list[0].path, "a.txt");
        assert!(!root.join(".git").exists());
    }
}
