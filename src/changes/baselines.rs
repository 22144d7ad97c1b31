//! Taking a baseline, and finding the one a review compares with: this
//! host's, else the one kept in the store (a restarted Neovim still reviews
//! what changed since the baseline taken before).

use std::path::Path;

use serde_json::{Value as Json, json};

use super::{Baseline, Changes, Project};
use crate::nvim::seam::ChangesStart;
use crate::snapshot::{Kept, Tree, now};

/// Takes a baseline of the project at `dir`; with `keep`, this host's
/// baseline stays when files changed since it. What Lua is told.
pub async fn start(changes: &Changes, request: &ChangesStart, dir: &str) -> Result<Json, String> {
    let _one_at_a_time = changes.busy.lock().await;
    let project = Project::open(Path::new(&request.store), dir).await?;
    let root = project.root.real();
    let now_tree = project.store.take(&project.prefix).await?;
    if request.keep
        && let Some(taken) = changes.taken(root)
    {
        let since = project
            .store
            .differences(&taken.tree, &now_tree, &project.prefix)
            .await?;
        if !since.list.is_empty() {
            return Ok(answer(&project, taken.since, true));
        }
    }
    let baseline = Baseline {
        tree: now_tree,
        since: now(),
    };
    adopt(changes, &project, baseline.clone())?;
    Ok(answer(&project, baseline.since, false))
}

/// Makes `baseline` the project's, here and in its store.
pub fn adopt(changes: &Changes, project: &Project, baseline: Baseline) -> Result<(), String> {
    project.store.keep(&Kept {
        tree: baseline.tree.0.clone(),
        since: baseline.since,
    })?;
    changes.remember(project.root.real(), baseline);
    Ok(())
}

/// The baseline to review the project against, if one was taken.
pub fn current(changes: &Changes, project: &Project) -> Option<Baseline> {
    changes.taken(project.root.real()).or_else(|| {
        let kept = project.store.kept()?;
        Some(Baseline {
            tree: Tree(kept.tree),
            since: kept.since,
        })
    })
}

fn answer(project: &Project, since: u64, kept: bool) -> Json {
    json!({
        "ok": true,
        "since": since,
        "kept": kept,
        "git": project.store.in_git(),
        "root": project.root.given(),
    })
}
