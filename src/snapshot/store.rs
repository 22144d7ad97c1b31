//! Where a project's snapshots live: a private git directory of its own
//! under the host's state directory, one per work tree. It has its own
//! index (kept between snapshots: git's stat cache is what makes the next
//! snapshot cost what changed) and its own object store, which borrows the
//! person's repository's objects instead of copying them. Nothing of the
//! person's repository is written: not its index, refs, stash or work tree.

use std::ffi::OsString;
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::git::{self, Options, Output};

/// Every path is stored exactly as its bytes are on disk: no line-ending
/// conversion, no clean filter, no keyword expansion, whatever the
/// repository's attributes say (this file has the last word).
const ATTRIBUTES: &str = "* -text -eol -filter -ident -working-tree-encoding\n";

/// Outside git nothing says what to leave out: the usual caches and
/// dependency trees are left out, and any `.gitignore` there is honoured.
const EXCLUDED_OUTSIDE_GIT: &str = "node_modules/\n.venv/\n__pycache__/\n.mypy_cache/\n";

/// A lock left by a git that was killed (it outlived its timeout) is
/// removed once it is this old.
const STALE_LOCK: Duration = Duration::from_secs(300);

/// The snapshots of one work tree.
#[derive(Debug, Clone)]
pub struct Store {
    /// The private git directory (bare: it never has a work tree of its own).
    git_dir: PathBuf,
    /// The index kept between snapshots.
    index: PathBuf,
    /// The index that builds baselines with some files settled.
    settle_index: PathBuf,
    /// The files snapshotted: the git work tree holding the project, or the
    /// project's directory outside git.
    work_tree: PathBuf,
    /// The person's repository's objects, borrowed read-only.
    borrowed: Option<PathBuf>,
}

/// How one git run on a store differs from the plain one.
#[derive(Default)]
pub(super) struct Call {
    /// On the index that builds settled baselines, not the one kept
    /// between snapshots.
    pub settle: bool,
    /// Written to git's stdin.
    pub input: Option<Vec<u8>>,
    /// A bound other than the runner's.
    pub timeout: Option<Duration>,
}

/// A baseline as kept on disk, so that a restarted host still knows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kept {
    pub tree: String,
    /// When it was taken, in seconds since the epoch.
    pub since: u64,
}

impl Store {
    /// The store for the project at `root` (created on first use) under
    /// `states`, the host's directory for them.
    pub async fn open(states: &Path, root: &Path) -> Result<Store, String> {
        let found = git::run(
            root,
            &[
                "rev-parse",
                "--path-format=absolute",
                "--show-toplevel",
                "--git-common-dir",
                "--show-object-format",
            ],
            64 * 1024,
        )
        .await?;
        let text = found.text();
        let lines: Vec<&str> = text.lines().collect();
        let (work_tree, repository, format) = match (found.code, lines.as_slice()) {
            (0, [top, common, format]) => (
                PathBuf::from(top),
                Some(PathBuf::from(common)),
                (*format).to_owned(),
            ),
            _ => (root.to_path_buf(), None, "sha1".to_owned()),
        };
        let home = states.join(store_name(&work_tree));
        private_dirs(&[states, &home])
            .map_err(|e| format!("cannot make the snapshot directory {}: {e}", home.display()))?;
        let store = Store {
            git_dir: home.join("git"),
            index: home.join("index"),
            settle_index: home.join("settle-index"),
            work_tree,
            borrowed: repository.as_ref().map(|git_dir| git_dir.join("objects")),
        };
        store.prepare(&format, repository.as_deref()).await?;
        Ok(store)
    }

    /// Whether the project is in a git work tree (else a plain snapshot).
    pub fn in_git(&self) -> bool {
        self.borrowed.is_some()
    }

    /// The directory whose files are snapshotted.
    pub fn work_tree(&self) -> &Path {
        &self.work_tree
    }

    /// The baseline kept on disk, if any.
    pub fn kept(&self) -> Option<Kept> {
        let bytes = std::fs::read(self.record()).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Keeps `baseline` on disk.
    pub fn keep(&self, baseline: &Kept) -> Result<(), String> {
        let body = serde_json::to_vec(baseline).map_err(|e| e.to_string())?;
        crate::private_file::replace(&self.record(), &body)
            .map_err(|e| format!("cannot keep the baseline: {e}"))
    }

    fn record(&self) -> PathBuf {
        self.index.with_file_name("baseline")
    }

    /// Creates the private repository once; then, each time, the rules it
    /// stores files by: raw bytes, and the person's own exclusions.
    async fn prepare(&self, format: &str, repository: Option<&Path>) -> Result<(), String> {
        if !self.git_dir.join("HEAD").exists() {
            let format = format!("--object-format={format}");
            // GIT_DIR names the repository to create, whatever Neovim's
            // environment held.
            let options = Options {
                env: vec![("GIT_DIR", self.git_dir.clone().into())],
                ..Options::default()
            };
            let made = git::run_with(
                &self.work_tree,
                &["init", "--quiet", "--bare", &format],
                4096,
                options,
            )
            .await?;
            if made.code != 0 {
                return Err(format!("cannot make the snapshot store: {}", made.stderr));
            }
        }
        let info = self.git_dir.join("info");
        let mut exclude = match repository {
            Some(repository) => std::fs::read(repository.join("info/exclude")).unwrap_or_default(),
            None => EXCLUDED_OUTSIDE_GIT.as_bytes().to_vec(),
        };
        if !exclude.is_empty() && !exclude.ends_with(b"\n") {
            exclude.push(b'\n');
        }
        private_dirs(&[&info])
            .and_then(|()| write_if_changed(&info.join("attributes"), ATTRIBUTES.as_bytes()))
            .and_then(|()| write_if_changed(&info.join("exclude"), &exclude))
            .map_err(|e| format!("cannot set up the snapshot store: {e}"))
    }

    /// Runs git on the store; a failure is an error with git's words.
    pub(super) async fn git(
        &self,
        args: &[&str],
        max_bytes: usize,
        call: Call,
    ) -> Result<Output, String> {
        let out = self.git_output(args, max_bytes, call).await?;
        // Output past its bound stops git, which then exits as killed.
        if out.code != 0 && !out.cut {
            return Err(format!(
                "git {} failed: {}",
                args.first().copied().unwrap_or_default(),
                out.stderr
            ));
        }
        Ok(out)
    }

    /// Runs git on the store, whatever it exits with.
    pub(super) async fn git_output(
        &self,
        args: &[&str],
        max_bytes: usize,
        call: Call,
    ) -> Result<Output, String> {
        let index = if call.settle {
            &self.settle_index
        } else {
            &self.index
        };
        remove_stale_lock(index);
        let mut options = Options {
            env: self.env(index),
            input: call.input,
            ..Options::default()
        };
        if let Some(timeout) = call.timeout {
            options.timeout = timeout;
        }
        let mut with_config = vec![
            "-c",
            "core.autocrlf=false",
            "-c",
            "core.safecrlf=false",
            "-c",
            "core.untrackedCache=true",
            "-c",
            "advice.addEmbeddedRepo=false",
            "-c",
            "gc.auto=0",
        ];
        with_config.extend_from_slice(args);
        let started = SystemTime::now();
        let ran = git::run_with(&self.work_tree, &with_config, max_bytes, options).await;
        if ran.is_err() {
            // Stopped past its bound: the lock it held is no one's now.
            remove_lock_since(index, started);
        }
        ran
    }

    /// The private repository, its index and objects, and no other: set
    /// explicitly, so nothing inherited from Neovim's environment leads
    /// git into the person's repository.
    fn env(&self, index: &Path) -> Vec<(&'static str, OsString)> {
        let objects = self.git_dir.join("objects");
        vec![
            ("GIT_DIR", self.git_dir.clone().into()),
            ("GIT_COMMON_DIR", self.git_dir.clone().into()),
            ("GIT_WORK_TREE", self.work_tree.clone().into()),
            ("GIT_INDEX_FILE", index.into()),
            ("GIT_OBJECT_DIRECTORY", objects.clone().into()),
            (
                "GIT_ALTERNATE_OBJECT_DIRECTORIES",
                self.borrowed.clone().unwrap_or(objects).into(),
            ),
            // Paths given are paths, never patterns.
            ("GIT_LITERAL_PATHSPECS", "1".into()),
            ("GIT_NO_REPLACE_OBJECTS", "1".into()),
        ]
    }
}

/// A readable and stable name for the store of `work_tree`: its last
/// component and a hash of the whole path.
fn store_name(work_tree: &Path) -> String {
    let bytes = work_tree.as_os_str().as_encoded_bytes();
    // FNV-1a: stable across builds, unlike std's hasher.
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    });
    let base: String = work_tree
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{base}-{hash:016x}")
}

/// Creates each of `dirs` that is missing, readable by this user alone.
fn private_dirs(dirs: &[&Path]) -> io::Result<()> {
    for dir in dirs {
        match std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
        {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

fn write_if_changed(path: &Path, body: &[u8]) -> io::Result<()> {
    if std::fs::read(path).is_ok_and(|found| found == body) {
        return Ok(());
    }
    crate::private_file::replace(path, body)
}

/// Removes `index`'s lock when a killed git left it long ago (another
/// host's, say).
fn remove_stale_lock(index: &Path) {
    let lock = index.with_extension("lock");
    let old = std::fs::metadata(&lock)
        .and_then(|meta| meta.modified())
        .is_ok_and(|at| at.elapsed().is_ok_and(|age| age > STALE_LOCK));
    if old {
        tracing::warn!("removing a stale lock: {}", lock.display());
        let _ = std::fs::remove_file(&lock);
    }
}

/// Removes `index`'s lock if it was made since `started`: by the git this
/// host just stopped (runs on a store are one at a time).
fn remove_lock_since(index: &Path, started: SystemTime) {
    let lock = index.with_extension("lock");
    let ours = std::fs::metadata(&lock)
        .and_then(|meta| meta.modified())
        .is_ok_and(|at| at >= started);
    if ours {
        tracing::warn!("removing the lock of a stopped git: {}", lock.display());
        let _ = std::fs::remove_file(&lock);
    }
}

/// Seconds since the epoch, now.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_names_are_stable_readable_and_distinct() {
        let a = store_name(Path::new("/home/me/my project"));
        assert_eq!(a, store_name(Path::new("/home/me/my project")));
        assert!(a.starts_with("my_project-"), "{a}");
        assert_ne!(a, store_name(Path::new("/srv/my project")));
    }
}
