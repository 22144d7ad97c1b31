//! One review of the changes: snapshot the project, list what differs from
//! the baseline, show each file in the two-pane diff (the baseline left,
//! the file now right), carry out each decision as it comes, settle the
//! decided files into the baseline, and report.

use std::path::Path;

use futures_util::future::join_all;
use serde_json::{Value as Json, json};

use super::baselines;
use super::decide::{self, Fate};
use super::listing::{self, Listed, Shown, Texts};
use super::{Baseline, Changes, Project, answer, file_json};
use crate::client::Requester;
use crate::diff::prepare::{EditInfo, TurnFile, prepare_lines};
use crate::diff::text::Lines;
use crate::nvim::seam::{ChangesReview, LuaCall};
use crate::snapshot::Blob;
use crate::state::{DiffTarget, State};

/// At most this many files are shown at once; the rest wait for the next
/// `:PiIde changes`.
pub const MAX_SHOWN: usize = 20;

/// Runs review `request`; the result Lua reports.
pub async fn run(
    state: &State,
    changes: &Changes,
    request: &ChangesReview,
) -> Result<Json, String> {
    let dir = request
        .root
        .clone()
        .unwrap_or_else(|| state.root().to_string_lossy().into_owned());
    let (project, baseline, files, more) = {
        let _one_at_a_time = changes.busy.lock().await;
        let project = Project::open(Path::new(&request.store), &dir).await?;
        let Some(baseline) = baselines::current(changes, &project) else {
            return Ok(json!({
                "ok": false,
                "error": "no baseline of this project yet: :PiIde changes start takes one \
                          (:PiIde agent takes one as the agent starts)",
            }));
        };
        let now = project.store.take(&project.prefix).await?;
        let found = project
            .store
            .differences(&baseline.tree, &now, &project.prefix)
            .await?;
        let files = listing::read(&project, found.list).await;
        (project, baseline, files, found.cut)
    };
    let listing = json!({
        "since": baseline.since,
        "root": project.root.given(),
        "files": files.iter().map(listing::describe).collect::<Vec<_>>(),
        "more": more,
        "max_shown": MAX_SHOWN,
    });
    answer(
        state,
        LuaCall::ChangesListed {
            id: request.id,
            listing,
        },
    )
    .await;
    let as_is: Vec<(String, Settled)> = files
        .iter()
        .filter_map(|file| match &file.shown {
            Shown::No {
                settle: Some(blob), ..
            } => Some((file.in_tree.clone(), Settled::As(Some(blob.clone())))),
            _ => None,
        })
        .collect();
    settle(changes, &project, as_is).await;
    let shown: Vec<(&Listed, &Texts)> = files
        .iter()
        .filter_map(|file| match &file.shown {
            Shown::Yes(texts) => Some((file, texts)),
            Shown::No { .. } => None,
        })
        .take(MAX_SHOWN)
        .collect();
    let group = crate::project::edits::new_group();
    let count = shown.len();
    let each = shown.iter().enumerate().map(|(index, (file, texts))| {
        let info = EditInfo {
            turn: Some(TurnFile {
                change: file.change.as_str(),
                since: baseline.since,
            }),
            ..EditInfo::new(group, index + 1, count, "changes", false)
        };
        review_file(state, changes, &project, file, texts, info)
    });
    let fates = join_all(each).await;
    let decided: Vec<Json> = shown
        .iter()
        .zip(&fates)
        .map(|((file, _), fate)| {
            let mut fields = json!({ "relative": file.relative, "fate": fate.as_str() });
            if let Fate::Failed(why) = fate {
                fields["why"] = json!(why);
            }
            file_json(&file.path, fields)
        })
        .collect();
    Ok(json!({
        "ok": true,
        "since": baseline.since,
        "listed": files.len(),
        "files": decided,
    }))
}

/// Shows one file, waits for the person, carries out their decision and
/// settles the file into the baseline when they decided.
async fn review_file(
    state: &State,
    changes: &Changes,
    project: &Project,
    file: &Listed,
    texts: &Texts,
    info: EditInfo,
) -> Fate {
    let before = texts.before.as_ref().map(|(text, _)| text.as_str());
    let sides = prepare_lines(
        Lines::split(before.unwrap_or_default()),
        before.is_some(),
        Lines::split(texts.now.as_deref().unwrap_or_default()),
    );
    let outcome = match sides.await {
        Ok(sides) => {
            let target = DiffTarget {
                tab_name: format!("changes:{}", file.relative),
                path: file.path.clone(),
                original_path: file.path.clone(),
                edit: Some(info),
            };
            state.show_diff(Requester::Changes, target, sides).await
        }
        Err(reason) => crate::diff::pending::DiffOutcome::rejected(reason),
    };
    let fate = decide::apply(texts, outcome).await;
    if let Some(settled) = fate.settled(texts) {
        let settled = match settled {
            None => Settled::As(None),
            Some(text) => Settled::Text(text.as_bytes().to_vec(), texts.mode.mode),
        };
        settle(changes, project, vec![(file.in_tree.clone(), settled)]).await;
    }
    fate
}

/// What a file of the baseline becomes.
enum Settled {
    /// This blob, or no file.
    As(Option<Blob>),
    /// These bytes, with this mode.
    Text(Vec<u8>, u32),
}

/// Makes the baseline hold `settled` (each a path in the work tree), so
/// the next review does not show those files again.
async fn settle(changes: &Changes, project: &Project, settled: Vec<(String, Settled)>) {
    if settled.is_empty() {
        return;
    }
    let _one_at_a_time = changes.busy.lock().await;
    let Some(baseline) = baselines::current(changes, project) else {
        return;
    };
    let mut entries = Vec::with_capacity(settled.len());
    for (path, settled) in settled {
        let blob = match settled {
            Settled::As(blob) => blob,
            Settled::Text(bytes, mode) => match project.store.hash(bytes).await {
                Ok(id) => Some(Blob { id, mode }),
                Err(error) => {
                    tracing::warn!("{path} not settled: {error}");
                    continue;
                }
            },
        };
        entries.push((path, blob));
    }
    match project.store.settle(&baseline.tree, &entries).await {
        Ok(tree) => {
            let since = baseline.since;
            if let Err(error) = baselines::adopt(changes, project, Baseline { tree, since }) {
                tracing::warn!("the settled baseline is not kept: {error}");
            }
        }
        Err(error) => tracing::warn!("files not settled into the baseline: {error}"),
    }
}
