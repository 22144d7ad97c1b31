//! Git checkouts: which one holds a directory, and whether a directory is
//! a linked worktree (`git worktree add`), another checkout of the same
//! repository even when it lies inside this one. Two agents on two
//! worktrees of one project must not see each other's files.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// A `.git` file is one line; anything longer is not one.
const MAX_GIT_FILE: u64 = 4096;

/// The innermost directory from `dir` (resolved) upwards with a `.git`:
/// the repository or worktree `dir` belongs to.
pub fn checkout_of(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|at| std::fs::symlink_metadata(at.join(".git")).is_ok())
        .map(Path::to_path_buf)
}

/// Whether `dir` is a linked worktree: its `.git` is a file naming a git
/// directory with a `commondir` (a submodule's has none).
pub fn is_linked_worktree(dir: &Path) -> bool {
    let marker = dir.join(".git");
    if !std::fs::symlink_metadata(&marker).is_ok_and(|meta| meta.is_file()) {
        return false;
    }
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&marker)
    else {
        return false;
    };
    let mut text = String::new();
    if file.take(MAX_GIT_FILE).read_to_string(&mut text).is_err() {
        return false;
    }
    let Some(git_dir) = text.lines().next().and_then(|l| l.strip_prefix("gitdir:")) else {
        return false;
    };
    dir.join(git_dir.trim()).join("commondir").is_file()
}

/// The linked worktree strictly below `root` that holds `real` (both
/// resolved), if any.
pub fn nested_worktree(root: &Path, real: &Path) -> Option<PathBuf> {
    real.ancestors()
        .take_while(|at| *at != root && at.starts_with(root))
        .find(|at| is_linked_worktree(at))
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;

    #[test]
    fn a_linked_worktree_is_told_from_a_repository_and_a_submodule() {
        let scratch = Scratch::new("worktrees");
        let main = scratch.canonicalize().unwrap().join("main");
        let nested = main.join(".worktrees/feat");
        let module = main.join("vendor/lib");
        std::fs::create_dir_all(main.join(".git/worktrees/feat")).unwrap();
        std::fs::write(main.join(".git/worktrees/feat/commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(main.join(".git/modules/lib")).unwrap();
        std::fs::create_dir_all(nested.join("src")).unwrap();
        std::fs::create_dir_all(&module).unwrap();
        let git_dir = main.join(".git/worktrees/feat");
        std::fs::write(
            nested.join(".git"),
            format!("gitdir: {}\n", git_dir.display()),
        )
        .unwrap();
        std::fs::write(module.join(".git"), "gitdir: ../../.git/modules/lib\n").unwrap();

        assert!(is_linked_worktree(&nested));
        assert!(!is_linked_worktree(&module), "a submodule");
        assert!(!is_linked_worktree(&main), "a repository");
        assert_eq!(checkout_of(&nested.join("src")), Some(nested.clone()));
        assert_eq!(checkout_of(&main.join("vendor")), Some(main.clone()));
        assert_eq!(
            nested_worktree(&main, &nested.join("src/a.rs")),
            Some(nested.clone())
        );
        assert_eq!(nested_worktree(&main, &module.join("a.c")), None);
        assert_eq!(nested_worktree(&nested, &nested.join("src/a.rs")), None);
        assert_eq!(nested_worktree(&main, &main.join("a.rs")), None);
    }
}
