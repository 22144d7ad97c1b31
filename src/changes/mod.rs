//! The review of what changed since a baseline: agents that write files
//! themselves (their shell, a formatter, an auto-accepted edit) bypass
//! every diff, so a baseline of the project is taken when an agent starts
//! (or on `:PiIde changes start`), and `:PiIde changes` lists every file
//! changed since, whoever changed it, and shows each in the two-pane diff:
//! baseline on the left, the file now on the right, kept or reverted as a
//! whole or hunk by hunk. What the person decides is written here; a file
//! they decided is settled into the baseline, so the next review shows
//! only what changed after.
//!
//! * [`baselines`] – taking a baseline, and finding the one to review from.
//! * [`listing`]   – the changed files, read for the review.
//! * [`decide`]    – a reviewed file's decision, written to disk.
//! * [`review`]    – one review: list, show, decide, settle, report.

mod baselines;
mod decide;
mod listing;
mod review;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value as Json, json};

use crate::confine::ProjectRoot;
use crate::nvim::seam::{ChangesReview, ChangesStart, LuaCall};
use crate::snapshot::{Store, Tree};
use crate::state::State;

/// The baselines of this host, and the one review that may be open.
#[derive(Default)]
pub struct Changes {
    /// One git run at a time on the stores: an index has one writer.
    busy: tokio::sync::Mutex<()>,
    /// The baseline of each project root (real path) this host took.
    taken: std::sync::Mutex<HashMap<PathBuf, Baseline>>,
    /// A review is open: a second `:PiIde changes` shows it instead.
    reviewing: AtomicBool,
}

/// What the files are compared with.
#[derive(Debug, Clone)]
struct Baseline {
    tree: Tree,
    /// Seconds since the epoch.
    since: u64,
}

/// A project and its store.
struct Project {
    root: ProjectRoot,
    store: Store,
    /// The root below the store's work tree (`""`: the work tree itself).
    prefix: String,
}

impl Project {
    /// The project at `dir` (its store opened under `states`), unless `dir`
    /// is never a project (`/`, the home directory).
    async fn open(states: &Path, dir: &str) -> Result<Project, String> {
        let root = ProjectRoot::confirm(dir).map_err(|refused| refused.to_string())?;
        let store = Store::open(states, root.real()).await?;
        let prefix = root
            .real()
            .strip_prefix(store.work_tree())
            .map(|below| below.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Project {
            root,
            store,
            prefix,
        })
    }
}

impl Changes {
    fn remember(&self, root: &Path, baseline: Baseline) {
        self.lock_taken().insert(root.to_path_buf(), baseline);
    }

    fn taken(&self, root: &Path) -> Option<Baseline> {
        self.lock_taken().get(root).cloned()
    }

    fn lock_taken(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Baseline>> {
        crate::mutex::lock(&self.taken)
    }
}

/// Seam event `changes_start`: takes a baseline and says so.
pub async fn start(state: Arc<State>, changes: Arc<Changes>, request: ChangesStart) {
    let dir = request
        .root
        .clone()
        .unwrap_or_else(|| state.root().to_string_lossy().into_owned());
    let result = baselines::start(&changes, &request, &dir).await;
    if let Err(error) = &result {
        tracing::warn!("no baseline of {dir}: {error}");
    }
    done(&state, request.id, result).await;
}

/// Seam event `changes_review`: reviews what changed since the baseline,
/// one review at a time.
pub async fn review(state: Arc<State>, changes: Arc<Changes>, request: ChangesReview) {
    if changes.reviewing.swap(true, Ordering::SeqCst) {
        let open = json!({
            "ok": false,
            "open": true,
            "error": "a review of the changes is open already: :PiIde diff shows it",
        });
        done(&state, request.id, Ok(open)).await;
        return;
    }
    let reviewing = Reviewing(&changes.reviewing);
    let result = review::run(&state, &changes, &request).await;
    drop(reviewing);
    done(&state, request.id, result).await;
}

/// Marks the review closed when it ends, however it ends.
struct Reviewing<'a>(&'a AtomicBool);

impl Drop for Reviewing<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// Tells Lua what became of request `id`.
async fn done(state: &State, id: u64, result: Result<Json, String>) {
    let result = result.unwrap_or_else(|error| json!({ "ok": false, "error": error }));
    answer(state, LuaCall::ChangesDone { id, result }).await;
}

/// Tells Lua; a Neovim that cannot hear it is logged.
async fn answer(state: &State, call: LuaCall) {
    if let Err(error) = state.editor().call(call).await {
        tracing::warn!("cannot tell Neovim about the changes: {error}");
    }
}

/// What a listing or a result says about a file.
fn file_json(path: &str, fields: Json) -> Json {
    let mut file = json!({ "path": path });
    if let (Some(file), Json::Object(fields)) = (file.as_object_mut(), fields) {
        file.extend(fields);
    }
    file
}
