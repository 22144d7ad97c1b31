//! What a file looks like from outside: enough to tell that it changed
//! without reading it.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Modification time, size and inode of a file; `None` when it is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    mtime_ns: i128,
    size: u64,
    inode: u64,
}

impl Stamp {
    pub fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(Stamp {
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            size: meta.size(),
            // A rename onto the path (how many tools write) keeps the size
            // and may keep the mtime, never the inode.
            inode: meta.ino(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_or_a_removal_changes_the_stamp() {
        let dir = crate::scratch::Scratch::new("stamp");
        let file = dir.join("a.txt");
        std::fs::write(&file, "one").unwrap();
        let first = Stamp::of(&file).expect("a stamp");
        assert_eq!(Stamp::of(&file), Some(first), "unchanged");
        let other = dir.join("b.txt");
        std::fs::write(&other, "two").unwrap();
        std::fs::rename(&other, &file).unwrap();
        assert_ne!(Stamp::of(&file), Some(first), "renamed over it");
        std::fs::remove_file(&file).unwrap();
        assert_eq!(Stamp::of(&file), None);
    }
}
