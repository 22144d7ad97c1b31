//! Paths as agents name them, and where they finally lead. Symbolic links
//! are followed by hand, so a dangling one still says where it points:
//! `root/notes.md -> /outside/missing` leads to `/outside/missing`, which a
//! write would create, not to `root/notes.md`.

use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::uri::path_of;

/// As many links as Linux follows in one lookup before `ELOOP`.
pub const MAX_HOPS: usize = 40;

/// The absolute, lexically normalized path `given` (a path or `file://`
/// url) names; a relative one is taken from `base`.
pub fn absolute(base: &str, given: &str) -> String {
    let joined = Path::new(base).join(path_of(given));
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

/// Where the absolute `path` finally leads: every existing component with
/// its links followed (a relative target from the link's directory, `..`
/// from where the links before it led), the missing rest as it is.
pub fn resolve(path: &Path) -> io::Result<PathBuf> {
    if !path.is_absolute() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not absolute", path.display()),
        ));
    }
    // Components still to walk, the next one last.
    let mut pending: Vec<OsString> = vec![];
    push_components(&mut pending, path);
    let mut resolved = PathBuf::from("/");
    // From this depth on nothing exists, so no link can be met.
    let mut missing_from: Option<usize> = None;
    let mut hops = 0;
    while let Some(name) = pending.pop() {
        if name == ".." {
            resolved.pop();
            if missing_from.is_some_and(|depth| depth > depth_of(&resolved)) {
                missing_from = None;
            }
            continue;
        }
        let next = resolved.join(&name);
        if missing_from.is_some() {
            resolved = next;
            continue;
        }
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                hops += 1;
                if hops > MAX_HOPS {
                    return Err(io::Error::from_raw_os_error(libc::ELOOP));
                }
                let target = std::fs::read_link(&next)?;
                if target.is_absolute() {
                    resolved = PathBuf::from("/");
                }
                push_components(&mut pending, &target);
            }
            Ok(_) => resolved = next,
            Err(error) if absent(&error) => {
                missing_from = Some(depth_of(&resolved) + 1);
                resolved = next;
            }
            Err(error) => return Err(error),
        }
    }
    Ok(resolved)
}

/// Pushes `path`'s components so that its first is popped next.
fn push_components(pending: &mut Vec<OsString>, path: &Path) {
    let mut names: Vec<OsString> = vec![];
    for component in path.components() {
        match component {
            Component::Normal(name) => names.push(name.to_owned()),
            Component::ParentDir => names.push("..".into()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    pending.extend(names.into_iter().rev());
}

fn depth_of(path: &Path) -> usize {
    path.components().count()
}

/// Nothing is there: the name, or a directory on the way, is missing.
fn absent(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::NotFound || error.raw_os_error() == Some(libc::ENOTDIR)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;
    use crate::scratch::Scratch;

    #[test]
    fn absolute_paths_are_lexically_normalized() {
        assert_eq!(absolute("/w", "src/a.rs"), "/w/src/a.rs");
        assert_eq!(absolute("/w", "/x/b.rs"), "/x/b.rs");
        assert_eq!(absolute("/w", "./a/../b"), "/w/b");
        assert_eq!(absolute("/w", "../../etc/passwd"), "/etc/passwd");
        assert_eq!(absolute("/w", "file:///w/a%20b.rs"), "/w/a b.rs");
    }

    #[test]
    fn links_are_followed_even_when_they_dangle() {
        let scratch = Scratch::new("links");
        let real = scratch.canonicalize().unwrap();
        let (root, outside) = (real.join("root"), real.join("outside"));
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("src/a.rs"), "a").unwrap();
        let at = |name: &str| resolve(&root.join(name)).unwrap();

        assert_eq!(at("src/a.rs"), root.join("src/a.rs"));
        assert_eq!(at("new/dir/file"), root.join("new/dir/file"), "missing");
        symlink(outside.join("missing"), root.join("notes.md")).unwrap();
        assert_eq!(
            at("notes.md"),
            outside.join("missing"),
            "dangling, absolute"
        );
        symlink("../outside/gone", root.join("rel.md")).unwrap();
        assert_eq!(at("rel.md"), outside.join("gone"), "from the link's dir");
        symlink("src", root.join("code")).unwrap();
        assert_eq!(at("code/a.rs"), root.join("src/a.rs"), "a link on the way");
        symlink("../../outside", root.join("src/up")).unwrap();
        assert_eq!(at("src/up/x"), outside.join("x"), "`..` after a link");
        symlink("notes.md", root.join("chain")).unwrap();
        assert_eq!(at("chain"), outside.join("missing"), "a chain of links");
        symlink("nope/../../outside/y", root.join("through-missing")).unwrap();
        assert_eq!(at("through-missing"), outside.join("y"));

        symlink("loop-b", root.join("loop-a")).unwrap();
        symlink("loop-a", root.join("loop-b")).unwrap();
        let looped = resolve(&root.join("loop-a")).unwrap_err();
        assert_eq!(looped.raw_os_error(), Some(libc::ELOOP), "{looped}");
        assert!(resolve(Path::new("relative")).is_err());
    }
}
