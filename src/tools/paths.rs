//! Paths agents send: `file://` urls or paths, relative ones resolved
//! against Neovim's cwd, and whether one stays inside the workspace folder.

use std::path::{Component, Path, PathBuf};

use crate::selection::uri_path;

/// The absolute, lexically normalized path `given` names; a relative one
/// is taken from `cwd`.
pub fn resolve(cwd: &str, given: &str) -> String {
    let joined = Path::new(cwd).join(uri_path(given));
    let mut normal = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    normal.to_string_lossy().into_owned()
}

/// Whether `path` (from [`resolve`]) lies inside `root`, with symlinks
/// resolved as far as the path exists: a link out of the workspace is out.
pub fn inside(root: &str, path: &str) -> bool {
    real(Path::new(path)).starts_with(real(Path::new(root)))
}

/// `path` with symlinks resolved in its longest existing prefix.
fn real(path: &Path) -> PathBuf {
    let mut missing = vec![];
    let mut at = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            return missing
                .iter()
                .rev()
                .fold(real, |real, name| real.join(name));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name);
                at = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_paths_urls_and_dot_dot() {
        assert_eq!(resolve("/w", "src/a.rs"), "/w/src/a.rs");
        assert_eq!(resolve("/w", "/x/b.rs"), "/x/b.rs");
        assert_eq!(resolve("/w", "./a/../b"), "/w/b");
        assert_eq!(resolve("/w", "../../etc/passwd"), "/etc/passwd");
        assert_eq!(resolve("/w", "file:///w/a%20b.rs"), "/w/a b.rs");
    }

    #[test]
    fn only_paths_under_the_root_are_inside() {
        let root = crate::scratch::Scratch::new("paths");
        let root_str = root.to_str().unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        let within = |p: &str| inside(root_str, &resolve(root_str, p));
        assert!(within("src/a.rs"));
        assert!(within("new/dir/file"));
        assert!(within("."));
        assert!(!within("../elsewhere"));
        assert!(!within("/etc/passwd"));
        std::os::unix::fs::symlink("/etc", root.join("out")).unwrap();
        assert!(!within("out/passwd"), "a symlink out of the workspace");
        let sibling = format!("{root_str}-sibling/a");
        assert!(!inside(root_str, &sibling), "a prefix that is not a parent");
    }
}
