//! [`ProjectRoot`]: a directory confirmed to be a project, the only thing
//! paths are confined to. `/`, the home directory and every directory
//! above it are never one, however they are spelled (symlinks, trailing
//! slashes, a `$HOME` that is itself a symlink): Neovim started in `~`
//! would otherwise serve `~/.ssh` to every agent.

use std::fmt;
use std::path::{Path, PathBuf};

/// A directory paths may be confined to. Only [`ProjectRoot::confirm`]
/// makes one.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectRoot {
    /// As Neovim (or the client) spells it: where relative paths start and
    /// how buffers are named.
    given: String,
    /// With every symlink resolved: what paths are compared with.
    real: PathBuf,
}

/// Why a directory is not a project root.
#[derive(Debug, Clone, PartialEq)]
pub struct NotAProject {
    pub dir: String,
    why: Why,
}

#[derive(Debug, Clone, PartialEq)]
enum Why {
    FilesystemRoot,
    Home,
    AboveHome(PathBuf),
    Unusable(String),
}

impl ProjectRoot {
    /// `dir` (absolute), unless it is `/`, the home directory or above it,
    /// or no directory at all.
    pub fn confirm(dir: &str) -> Result<ProjectRoot, NotAProject> {
        Self::confirm_with_home(dir, dirs::home_dir().as_deref())
    }

    fn confirm_with_home(dir: &str, home: Option<&Path>) -> Result<ProjectRoot, NotAProject> {
        let refuse = |why| NotAProject {
            dir: dir.to_owned(),
            why,
        };
        if !Path::new(dir).is_absolute() {
            return Err(refuse(Why::Unusable("it is not an absolute path".into())));
        }
        let real = std::fs::canonicalize(dir).map_err(|e| refuse(Why::Unusable(e.to_string())))?;
        if !real.is_dir() {
            return Err(refuse(Why::Unusable("it is not a directory".into())));
        }
        if real.parent().is_none() {
            return Err(refuse(Why::FilesystemRoot));
        }
        // The home as spelled and as resolved: either may be what `dir` is
        // or lies above.
        let homes = home
            .into_iter()
            .flat_map(|home| [Some(home.to_path_buf()), std::fs::canonicalize(home).ok()])
            .flatten();
        for home in homes {
            if home == real {
                return Err(refuse(Why::Home));
            }
            if home.starts_with(&real) {
                return Err(refuse(Why::AboveHome(home)));
            }
        }
        Ok(ProjectRoot {
            given: dir.trim_end_matches('/').to_owned(),
            real,
        })
    }

    /// A root taken as it is, for unit tests that touch no files.
    #[cfg(test)]
    pub fn assumed(dir: &str) -> ProjectRoot {
        ProjectRoot {
            given: dir.to_owned(),
            real: PathBuf::from(dir),
        }
    }

    pub fn given(&self) -> &str {
        &self.given
    }

    pub fn real(&self) -> &Path {
        &self.real
    }

    /// Whether `real` (a resolved path) lies in this root.
    pub fn holds(&self, real: &Path) -> bool {
        real.starts_with(&self.real)
    }

    /// The same root spelled as `given` (a directory that resolves to it).
    pub fn spelled(&self, given: &str) -> ProjectRoot {
        ProjectRoot {
            given: given.trim_end_matches('/').to_owned(),
            real: self.real.clone(),
        }
    }
}

impl fmt::Display for NotAProject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match &self.why {
            Why::Unusable(error) => {
                return write!(f, "{} cannot be a project root: {error}", self.dir);
            }
            Why::FilesystemRoot => "the filesystem root".to_owned(),
            Why::Home => "your home directory".to_owned(),
            Why::AboveHome(home) => format!("above your home directory {}", home.display()),
        };
        write!(
            f,
            "{} is {what}, which is never a project, so agents get context from this \
             Neovim but no file through it: start Neovim in a project directory, or `:cd` into one",
            self.dir
        )
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;
    use crate::scratch::Scratch;

    #[test]
    fn the_filesystem_root_home_and_above_are_never_a_project() {
        let scratch = Scratch::new("roots");
        let real = scratch.canonicalize().unwrap();
        let home = real.join("users/me");
        std::fs::create_dir_all(home.join("code/app")).unwrap();
        symlink(&home, real.join("home-link")).unwrap();
        let s = |p: &Path| p.to_str().unwrap().to_owned();
        let confirm = |dir: &str, home: &Path| ProjectRoot::confirm_with_home(dir, Some(home));

        let app = confirm(&s(&home.join("code/app/")), &home).unwrap();
        assert_eq!(app.given(), s(&home.join("code/app")), "no trailing slash");
        assert_eq!(app.real(), home.join("code/app"));
        for refused in [
            s(&home),
            format!("{}/", home.display()),
            s(&real.join("home-link")),
            s(&home.join("code/..")),
        ] {
            let why = confirm(&refused, &home).unwrap_err().to_string();
            assert!(why.contains("your home directory"), "{refused}: {why}");
            assert!(
                why.contains("start Neovim in a project directory, or `:cd` into one"),
                "{why}"
            );
        }
        for above in [s(&real.join("users")), s(&real)] {
            let why = confirm(&above, &home).unwrap_err().to_string();
            assert!(why.contains("above your home directory"), "{above}: {why}");
        }
        let why = confirm("/", &home).unwrap_err().to_string();
        assert!(why.contains("the filesystem root"), "{why}");
        let why = confirm("//", &home).unwrap_err().to_string();
        assert!(why.contains("the filesystem root"), "{why}");

        // $HOME itself a symlink: its target is home too, and so are the
        // directories above either spelling.
        let linked_home = real.join("home-link");
        let why = confirm(&s(&home), &linked_home).unwrap_err().to_string();
        assert!(why.contains("your home directory"), "{why}");
        assert!(confirm(&s(&real.join("users")), &linked_home).is_err());
        assert!(confirm(&s(&home.join("code")), &linked_home).is_ok());

        assert!(confirm("relative", &home).is_err());
        assert!(confirm(&s(&real.join("missing")), &home).is_err());
        std::fs::write(real.join("file"), "").unwrap();
        let why = confirm(&s(&real.join("file")), &home)
            .unwrap_err()
            .to_string();
        assert!(why.contains("not a directory"), "{why}");
        assert!(ProjectRoot::confirm_with_home(&s(&home), None).is_ok());
    }
}
