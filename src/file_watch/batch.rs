//! Coalescing: events about wanted files are held until the files have
//! been quiet for [`QUIET`] (a write arrives as truncate + writes, a
//! `git checkout` as thousands of events), or for at most [`LONGEST`]
//! while they keep coming; then the files quiet for [`QUIET`] each (never
//! one still being written) are compared with their last stamp.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::time::Instant;

use super::Shared;
use super::stamp::Stamp;
use crate::mutex::lock;

/// Quiet time that ends a batch.
const QUIET: Duration = Duration::from_millis(50);
/// A batch never waits longer than this after its first event, so a file
/// written without pause still shows within a few hundred milliseconds.
const LONGEST: Duration = Duration::from_millis(200);
/// Above this many files, stamps are taken on a blocking thread.
const STAMPS_INLINE: usize = 64;

/// The buffer names whose files changed, and those whose files are gone
/// (deleted, or renamed away).
#[derive(Debug, Default, Serialize, PartialEq)]
pub struct Changes {
    pub changed: Vec<String>,
    pub gone: Vec<String>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.gone.is_empty()
    }
}

pub(super) async fn run(shared: Arc<Shared>, on_changes: impl Fn(Changes) + Send + 'static) {
    loop {
        shared.wake.notified().await;
        let first = Instant::now();
        loop {
            let quiet = tokio::time::sleep(QUIET);
            tokio::select! {
                _ = shared.wake.notified() => if first.elapsed() >= LONGEST { break },
                _ = quiet => break,
            }
        }
        let (changes, later) = settle(&shared).await;
        if !changes.is_empty() {
            on_changes(changes);
        }
        if later {
            shared.wake.notify_one();
        }
    }
}

/// Takes the pending files that have been quiet and keeps those whose
/// stamp differs from the last one seen (which then becomes theirs); says
/// whether files are left for a later batch.
async fn settle(shared: &Arc<Shared>) -> (Changes, bool) {
    let (pending, later) = {
        let mut files = lock(&shared.files);
        let now = std::time::Instant::now();
        let mut quiet = vec![];
        files.pending.retain(|path, last| {
            let settled = now.duration_since(*last) >= QUIET;
            if settled {
                quiet.push(path.clone());
            }
            !settled
        });
        (quiet, !files.pending.is_empty())
    };
    let inline = pending.len() <= STAMPS_INLINE;
    let stamp_all = move || {
        pending
            .into_iter()
            .map(|path| {
                let stamp = Stamp::of(&path);
                (path, stamp)
            })
            .collect::<Vec<_>>()
    };
    let stamps = if inline {
        stamp_all()
    } else {
        crate::task::spawn_blocking(stamp_all)
            .await
            .unwrap_or_default()
    };
    let mut files = lock(&shared.files);
    let mut changes = Changes::default();
    for (path, stamp) in stamps {
        let Some(wanted) = files.wanted.get_mut(&path) else {
            continue;
        };
        let fresh = std::mem::take(&mut wanted.fresh);
        if wanted.stamp == stamp && !(fresh && stamp.is_some()) {
            continue;
        }
        wanted.stamp = stamp;
        let list = match stamp {
            Some(_) => &mut changes.changed,
            None => &mut changes.gone,
        };
        list.extend(wanted.names.iter().cloned());
    }
    (changes, later)
}
