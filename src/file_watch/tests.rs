use std::time::Duration;

use tokio::sync::mpsc;

use super::*;
use crate::scratch::Scratch;

/// A watch whose batches arrive on a channel.
fn watch() -> (FileWatch, mpsc::UnboundedReceiver<Changes>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let watch = FileWatch::new(move |changes| {
        let _ = tx.send(changes);
    });
    (watch, rx)
}

async fn next(rx: &mut mpsc::UnboundedReceiver<Changes>) -> Changes {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("a batch within the deadline")
        .expect("the watch runs")
}

fn name(path: &Path) -> String {
    path.display().to_string()
}

#[tokio::test]
async fn only_wanted_files_that_changed_are_reported() {
    let dir = Scratch::new("watch-wanted");
    let (a, b, other) = (dir.join("a.txt"), dir.join("b.txt"), dir.join("other.txt"));
    for file in [&a, &b, &other] {
        std::fs::write(file, "before\n").unwrap();
    }
    let (watch, mut rx) = watch();
    watch.set(vec![name(&a), name(&b)]);
    // New files are named once the watch is in place, for Neovim to check
    // against what it read: a write just before the watch raised no event.
    let mut fresh = next(&mut rx).await.changed;
    fresh.sort();
    assert_eq!(fresh, [name(&a), name(&b)]);
    // Touched by a reader, and a file nobody has loaded: neither counts.
    std::fs::read(&a).unwrap();
    std::fs::write(&other, "not loaded\n").unwrap();
    std::fs::write(&b, "after\n").unwrap();
    let changes = next(&mut rx).await;
    assert_eq!(changes.changed, [name(&b)]);
    assert!(changes.gone.is_empty());

    std::fs::remove_file(&a).unwrap();
    let changes = next(&mut rx).await;
    assert_eq!((changes.changed.len(), changes.gone), (0, vec![name(&a)]));
}

#[tokio::test]
async fn neovims_own_writes_and_git_are_not_changes() {
    let dir = Scratch::new("watch-own");
    std::fs::create_dir(dir.join(".git")).unwrap();
    let (mine, theirs, head) = (
        dir.join("mine.rs"),
        dir.join("theirs.rs"),
        dir.join(".git/HEAD"),
    );
    for file in [&mine, &theirs, &head] {
        std::fs::write(file, "1\n").unwrap();
    }
    let (watch, mut rx) = watch();
    watch.set(vec![name(&mine), name(&theirs), name(&head)]);
    let mut fresh = next(&mut rx).await.changed;
    fresh.sort();
    assert_eq!(fresh, [name(&mine), name(&theirs)], ".git/ is not wanted");
    std::fs::write(&mine, "written by Neovim\n").unwrap();
    watch.written(&name(&mine));
    std::fs::write(&head, "ref: refs/heads/other\n").unwrap();
    std::fs::write(&theirs, "written by an agent\n").unwrap();
    let changes = next(&mut rx).await;
    assert_eq!(changes.changed, [name(&theirs)]);
}

#[tokio::test]
async fn a_burst_is_one_batch_per_quiet_period_naming_each_file_once() {
    let dir = Scratch::new("watch-burst");
    let files: Vec<PathBuf> = (0..300).map(|i| dir.join(format!("f{i}.txt"))).collect();
    for file in &files {
        std::fs::write(file, "old\n").unwrap();
    }
    let (watch, mut rx) = watch();
    watch.set(files.iter().take(100).map(|f| name(f)).collect());
    for round in 0..3 {
        for file in &files {
            std::fs::write(file, format!("new {round}\n")).unwrap();
        }
    }
    let mut seen = HashSet::new();
    let mut batches = 0;
    while seen.len() < 100 {
        let changes = next(&mut rx).await;
        batches += 1;
        assert!(changes.gone.is_empty());
        for changed in changes.changed {
            assert!(files[..100].iter().any(|f| name(f) == changed), "{changed}");
            seen.insert(changed);
        }
    }
    assert!(batches < 100, "{batches} batches for 100 files");
}

#[tokio::test]
async fn a_file_renamed_into_place_is_a_change_and_a_symlink_follows_its_target() {
    let dir = Scratch::new("watch-rename");
    std::fs::create_dir(dir.join("real")).unwrap();
    let target = dir.join("real/t.txt");
    std::fs::write(&target, "one\n").unwrap();
    let link = dir.join("link.txt");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let (watch, mut rx) = watch();
    watch.set(vec![name(&link)]);
    let temp = dir.join("real/.t.txt.tmp");
    std::fs::write(&temp, "two\n").unwrap();
    std::fs::rename(&temp, &target).unwrap();
    let changes = next(&mut rx).await;
    assert_eq!(changes.changed, [name(&link)], "{changes:?}");
}
