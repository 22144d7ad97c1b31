//! The files of Neovim's loaded buffers (and those a diff watches), watched
//! on disk so their buffers can follow changes made by anyone else (an
//! agent's shell, a formatter, `git checkout`). The one file watch of the
//! plugin: Lua only says what to watch and renders what changed.
//!
//! One OS watch per directory that holds a wanted file (inotify, FSEvents,
//! kqueue through `notify`); events for other files in it are dropped on
//! the watcher's thread. Changes are coalesced until the files have been
//! quiet for a moment ([`batch`]), compared with how each file looked when
//! last reported ([`stamp`]), and handed on as one batch naming only the
//! wanted files that really changed. A newly wanted file is named in the
//! first batch after its watch is in place, whatever its stamp: a write
//! between Neovim reading it and the watch starting raised no event, and
//! Neovim's own check against what it read decides. Files under `.git/`
//! are never wanted.

mod batch;
mod stamp;

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::mutex::lock;
pub use batch::Changes;
pub use stamp::Stamp;

/// Handle on the watch; cheap to share.
pub struct FileWatch {
    shared: Arc<Shared>,
    /// The OS watch; `None` when the platform refused one (logged).
    watcher: std::sync::Mutex<Option<RecommendedWatcher>>,
}

/// What the watcher's thread and the batching task share.
struct Shared {
    files: std::sync::Mutex<Files>,
    /// Woken for every event about a wanted file.
    wake: tokio::sync::Notify,
}

#[derive(Default)]
struct Files {
    /// Canonical path → the buffer names it goes by and how it looked last.
    wanted: HashMap<PathBuf, Wanted>,
    /// Buffer name → canonical path, so a new list resolves only new names.
    resolved: HashMap<String, PathBuf>,
    /// Directories watched, each for the wanted files it holds.
    dirs: HashSet<PathBuf>,
    /// Wanted files with events since the last batch, and when the last
    /// one came; never more than `wanted` holds, however many events a
    /// burst brings.
    pending: HashMap<PathBuf, Instant>,
}

struct Wanted {
    names: Vec<String>,
    stamp: Option<Stamp>,
    /// Newly wanted: a write between Neovim reading the file and the watch
    /// starting raised no event, so the first batch names it anyway and
    /// Neovim's own check (against what it read) decides.
    fresh: bool,
}

impl FileWatch {
    /// Starts watching nothing; `on_changes` gets each batch. Must run
    /// inside the runtime (the batching is a task).
    pub fn new(on_changes: impl Fn(Changes) + Send + 'static) -> FileWatch {
        let shared = Arc::new(Shared {
            files: Default::default(),
            wake: tokio::sync::Notify::new(),
        });
        let events = shared.clone();
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            events.on_event(event)
        })
        .map_err(|error| tracing::warn!("no file watching: {error}"))
        .ok();
        crate::task::spawn(batch::run(shared.clone(), on_changes));
        FileWatch {
            shared,
            watcher: std::sync::Mutex::new(watcher),
        }
    }

    /// Watches exactly the files `names` (absolute paths of loaded buffers).
    pub fn set(&self, names: Vec<String>) {
        // Held throughout, so two lists never interleave their watches.
        let mut guard = lock(&self.watcher);
        let Some(watcher) = guard.as_mut() else {
            return;
        };
        let (added, removed) = self.shared.want(names);
        // Outside the files' lock: the OS watcher's thread, which takes
        // that lock for each event, answers these calls.
        for dir in &removed {
            let _ = watcher.unwatch(dir);
        }
        let mut refused = vec![];
        for dir in added {
            if let Err(error) = watcher.watch(&dir, RecursiveMode::NonRecursive) {
                tracing::warn!("cannot watch {}: {error}", dir.display());
                refused.push(dir);
            }
        }
        let mut files = lock(&self.shared.files);
        for dir in &refused {
            files.dirs.remove(dir);
        }
        // The watches are in place: the first batch names the new files.
        if !files.pending.is_empty() {
            self.shared.wake.notify_one();
        }
        tracing::debug!(
            "watching {} files in {} directories",
            files.wanted.len(),
            files.dirs.len()
        );
    }

    /// Neovim wrote `name` itself: that version is no change to report.
    pub fn written(&self, name: &str) {
        let mut files = lock(&self.shared.files);
        let Some(path) = files.resolved.get(name).cloned() else {
            return;
        };
        if let Some(wanted) = files.wanted.get_mut(&path) {
            wanted.stamp = Stamp::of(&path);
        }
    }
}

impl Shared {
    /// Makes `names` the wanted files; returns the directories to start
    /// and to stop watching.
    fn want(&self, names: Vec<String>) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let mut files = lock(&self.files);
        let files = &mut *files;
        let mut resolved = HashMap::with_capacity(names.len());
        let mut wanted: HashMap<PathBuf, Wanted> = HashMap::with_capacity(names.len());
        for name in names {
            let Some(path) = files
                .resolved
                .remove(&name)
                .or_else(|| canonical(Path::new(&name)))
            else {
                continue;
            };
            if under_git(&path) {
                continue;
            }
            resolved.insert(name.clone(), path.clone());
            let known = files.wanted.get(&path);
            let fresh = known.is_none_or(|old| old.fresh);
            let stamp = known.map_or_else(|| Stamp::of(&path), |old| old.stamp);
            let entry = wanted.entry(path.clone()).or_insert_with(|| Wanted {
                names: vec![],
                stamp,
                fresh,
            });
            entry.names.push(name);
        }
        let dirs: HashSet<PathBuf> = wanted
            .keys()
            .filter_map(|path| path.parent().map(Path::to_path_buf))
            .collect();
        let added = dirs.difference(&files.dirs).cloned().collect();
        let removed = files.dirs.difference(&dirs).cloned().collect();
        files.pending.retain(|path, _| wanted.contains_key(path));
        let now = Instant::now();
        for (path, _) in wanted.iter().filter(|(_, wanted)| wanted.fresh) {
            files.pending.entry(path.clone()).or_insert(now);
        }
        files.wanted = wanted;
        files.resolved = resolved;
        files.dirs = dirs;
        (added, removed)
    }

    /// Runs on the watcher's thread: notes the wanted files an event is
    /// about, nothing else.
    fn on_event(&self, event: notify::Result<notify::Event>) {
        let mut files = lock(&self.files);
        let files = &mut *files;
        let now = Instant::now();
        let mut woken = false;
        match event {
            Ok(event) if !event.need_rescan() && matters(&event.kind) => {
                for path in event.paths {
                    if files.wanted.contains_key(&path) {
                        files.pending.insert(path, now);
                        woken = true;
                    }
                }
            }
            Ok(event) if !event.need_rescan() => {}
            // The OS dropped events: any wanted file may have changed.
            result => {
                if let Err(error) = result {
                    tracing::warn!("file watch: {error}");
                }
                let all = files.wanted.keys().map(|path| (path.clone(), now));
                files.pending.extend(all);
                woken = true;
            }
        }
        if woken {
            self.wake.notify_one();
        }
    }
}

/// Events that can change what a file holds or whether it is there;
/// opening and reading it cannot.
fn matters(kind: &EventKind) -> bool {
    !matches!(kind, EventKind::Access(access) if !matches!(access, notify::event::AccessKind::Close(notify::event::AccessMode::Write)))
}

fn under_git(path: &Path) -> bool {
    path.components()
        .any(|part| part == Component::Normal(".git".as_ref()))
}

/// `path` with symlinks resolved; for a file not there (yet), its
/// directory resolved.
fn canonical(path: &Path) -> Option<PathBuf> {
    if let Ok(path) = path.canonicalize() {
        return Some(path);
    }
    let name = path.file_name()?;
    Some(path.parent()?.canonicalize().ok()?.join(name))
}

#[cfg(test)]
mod tests;
