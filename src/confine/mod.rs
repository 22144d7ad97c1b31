//! Where agents may read and write. Every transport confines the paths it
//! is sent here, the same way: against confirmed roots ([`ProjectRoot`],
//! never `/` or the home directory), after following every symbolic link
//! (dangling ones included), and outside any git worktree nested in the
//! root when asked to. What the host then reads or writes it opens below
//! the root without following links, so a link swapped in after the check
//! cannot redirect it.
//!
//! * [`links`]    – a path's final target, links followed by hand.
//! * [`root`]     – [`ProjectRoot`]: a directory that may be a project.
//! * [`worktree`] – git checkouts and linked worktrees.
//! * [`beneath`]  – reading and writing below a root, never through a link.
//! * [`fault`]    – the steps of a write, where a test build can stop.

pub mod beneath;
pub mod fault;
pub mod links;
pub mod root;
mod whole;
pub mod worktree;

use std::io;
use std::path::{Path, PathBuf};

pub use root::{NotAProject, ProjectRoot};

/// A path found inside a root: how it was named and where it leads.
#[derive(Debug, Clone)]
pub struct Confined {
    /// Absolute and lexically normalized, as named: how Neovim's buffer
    /// for it is named.
    pub path: String,
    /// The final target, every link resolved: what is read and written.
    pub real: PathBuf,
    /// The resolved root holding `real`.
    root: PathBuf,
}

/// Why a path is not confined.
#[derive(Debug)]
pub enum Escape {
    /// It leads outside every root: `named` (absolute) leads to `real`.
    Outside { named: PathBuf, real: PathBuf },
    /// It lies in a git worktree nested in the root: another checkout.
    InWorktree { worktree: PathBuf },
    /// Its links cannot be followed (a loop, no permission, …).
    Unresolvable(io::Error),
}

/// Confines the absolute `path` to the innermost of `roots` that holds its
/// final target; with `separate_worktrees`, a git worktree nested in that
/// root is not part of it.
pub fn confine(
    roots: &[ProjectRoot],
    path: &str,
    separate_worktrees: bool,
) -> Result<Confined, Escape> {
    let real = links::resolve(Path::new(path)).map_err(Escape::Unresolvable)?;
    let Some(root) = roots
        .iter()
        .filter(|root| root.holds(&real))
        .max_by_key(|root| root.real().components().count())
    else {
        return Err(Escape::Outside {
            named: PathBuf::from(path),
            real,
        });
    };
    if separate_worktrees && let Some(worktree) = worktree::nested_worktree(root.real(), &real) {
        return Err(Escape::InWorktree { worktree });
    }
    Ok(Confined {
        path: path.to_owned(),
        root: root.real().to_path_buf(),
        real,
    })
}

impl Escape {
    /// Why `given` is refused, for the agent; `roots` names where paths
    /// may lead.
    pub fn explain(&self, given: &str, roots: &str) -> String {
        match self {
            Escape::Outside { named, real } if named != real => format!(
                "{given} leads to {} (through a symbolic link), outside {roots}",
                real.display()
            ),
            Escape::Outside { .. } => format!("{given} is outside {roots}"),
            Escape::InWorktree { worktree } => format!(
                "{given} is in the git worktree {}, another checkout than {roots}: \
                 its own projectPath reaches it",
                worktree.display()
            ),
            Escape::Unresolvable(error) => format!("{given} cannot be resolved: {error}"),
        }
    }
}

impl Confined {
    /// Where `real` is below the root.
    fn below(&self) -> &Path {
        self.real.strip_prefix(&self.root).unwrap_or(Path::new(""))
    }

    /// The file's bytes, read without following any link (off the event
    /// loop).
    pub async fn read(&self) -> io::Result<Vec<u8>> {
        let (root, below) = (self.root.clone(), self.below().to_path_buf());
        crate::task::spawn_blocking(move || beneath::read(&root, &below))
            .await
            .map_err(io::Error::other)?
    }

    /// Creates the missing directories on the way to the file.
    pub async fn create_parents(&self) -> io::Result<()> {
        let (root, below) = (self.root.clone(), self.below().to_path_buf());
        crate::task::spawn_blocking(move || beneath::create_parents(&root, &below))
            .await
            .map_err(io::Error::other)?
    }

    /// Writes `contents` if the file holds `expected` (`None`: does not
    /// exist), never through a link.
    pub async fn write(
        &self,
        contents: Vec<u8>,
        expected: Option<Vec<u8>>,
    ) -> Result<(), beneath::WriteError> {
        let (root, below) = (self.root.clone(), self.below().to_path_buf());
        crate::task::spawn_blocking(move || {
            beneath::write(&root, &below, &contents, expected.as_deref())
        })
        .await
        .map_err(|e| beneath::WriteError::Io(io::Error::other(e)))?
    }

    /// Creates the file (and its directories) with `contents` where none
    /// exists, executable when asked, never through a link.
    pub async fn create(
        &self,
        contents: Vec<u8>,
        executable: bool,
    ) -> Result<(), beneath::WriteError> {
        let (root, below) = (self.root.clone(), self.below().to_path_buf());
        crate::task::spawn_blocking(move || beneath::create(&root, &below, &contents, executable))
            .await
            .map_err(|e| beneath::WriteError::Io(io::Error::other(e)))?
    }

    /// Removes the file if it holds `expected`, never through a link.
    pub async fn remove(&self, expected: Vec<u8>) -> Result<(), beneath::WriteError> {
        let (root, below) = (self.root.clone(), self.below().to_path_buf());
        crate::task::spawn_blocking(move || beneath::remove(&root, &below, &expected))
            .await
            .map_err(|e| beneath::WriteError::Io(io::Error::other(e)))?
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;
    use crate::scratch::Scratch;

    #[test]
    fn a_path_is_confined_by_where_it_finally_leads() {
        let scratch = Scratch::new("confine");
        let real = scratch.canonicalize().unwrap();
        let (root_dir, outside) = (real.join("root"), real.join("outside"));
        std::fs::create_dir_all(root_dir.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let s = |p: &Path| p.to_str().unwrap().to_owned();
        let roots = [ProjectRoot::confirm(&s(&root_dir)).unwrap()];
        let at = |name: &str| confine(&roots, &s(&root_dir.join(name)), false);

        let inside = at("src/a.rs").unwrap();
        assert_eq!(inside.real, root_dir.join("src/a.rs"));
        assert_eq!(inside.below(), Path::new("src/a.rs"));
        assert!(at("new/file").is_ok(), "missing, inside");
        symlink(outside.join("missing"), root_dir.join("notes.md")).unwrap();
        let dangling = at("notes.md").unwrap_err();
        let told = dangling.explain("notes.md", "the project root");
        assert!(
            told.contains(&s(&outside.join("missing"))) && told.contains("symbolic link"),
            "{told}"
        );
        symlink("src", root_dir.join("code")).unwrap();
        assert_eq!(at("code/b.rs").unwrap().real, root_dir.join("src/b.rs"));
        symlink(root_dir.join("src/later"), root_dir.join("pending")).unwrap();
        assert!(at("pending").is_ok(), "dangling, but inside");
        assert!(confine(&roots, &s(&real.join("root-sibling/a")), false).is_err());
        symlink("loop", root_dir.join("loop")).unwrap();
        assert!(matches!(at("loop"), Err(Escape::Unresolvable(_))));
    }
}
