//! Which project an MCP tool call is about. Neovim's roots are its cwd,
//! the cwd's git root and its language servers' workspace folders, each
//! confirmed ([`ProjectRoot`]: never `/`, the home directory or above).
//!
//! * Without `projectPath` a call starts at the cwd and may reach every
//!   root.
//! * With `projectPath` (any directory inside a root, e.g. pi's cwd) a
//!   call starts there, answers relative to it, and is confined to the
//!   checkout holding it: its git root when that lies inside a root, else
//!   the innermost root holding it. A git worktree nested in that checkout
//!   is another checkout and out of reach, so two agents on two worktrees
//!   of one project never see each other's files.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::Failure;
use crate::confine::{self, Confined, NotAProject, ProjectRoot, links, worktree};
use crate::nvim::seam::{LuaCall, ProjectRoots};
use crate::peer::Connection;
use crate::state::State;

/// The project a call is about.
#[derive(Clone)]
pub struct Project {
    /// Where relative paths start and what answers are relative to: the
    /// call's `projectPath`, else Neovim's cwd, as Neovim spells it.
    pub root: String,
    /// The roots paths may lead into.
    allowed: Vec<ProjectRoot>,
    /// Routed by `projectPath`: worktrees nested in the root are not in it.
    routed: bool,
    /// The connection the call came over, when known: the diffs of an
    /// edit go back to the agent terminal whose process asked.
    pub caller: Option<Connection>,
}

/// Neovim's roots, confirmed.
pub struct Roots {
    /// The cwd, or why it is no project.
    cwd: Result<ProjectRoot, NotAProject>,
    /// Every confirmed root once, the cwd first.
    all: Vec<ProjectRoot>,
}

impl Roots {
    /// The cwd, then the git root and workspace folders it does not
    /// already name; those that are no project are left out.
    pub fn confirm(found: ProjectRoots, git_root: String) -> Roots {
        let cwd = ProjectRoot::confirm(&found.cwd);
        let mut all: Vec<ProjectRoot> = cwd.iter().cloned().collect();
        for dir in std::iter::once(git_root).chain(found.folders) {
            if dir.is_empty() {
                continue;
            }
            if let Ok(root) = ProjectRoot::confirm(&dir)
                && !all.iter().any(|known| known.real() == root.real())
            {
                all.push(root);
            }
        }
        Roots { cwd, all }
    }

    fn names(&self) -> String {
        let names: Vec<&str> = self.all.iter().map(ProjectRoot::given).collect();
        names.join(", ")
    }

    /// Says that `project_path` lies in no root.
    fn not_here(&self, project_path: &str) -> Failure {
        let mut message = format!("projectPath {project_path} is not this Neovim's project");
        if !self.all.is_empty() {
            message.push_str(&format!("; its roots are {}", self.names()));
        }
        if let Err(not) = &self.cwd {
            message.push_str(&format!(" (Neovim's current directory {not})"));
        }
        Failure(message)
    }

    /// `real` spelled from the innermost root that holds it, as Neovim
    /// names its files.
    fn spell(&self, real: &Path) -> String {
        let holder = self
            .all
            .iter()
            .filter(|root| root.holds(real))
            .max_by_key(|root| root.real().components().count());
        match holder.and_then(|root| Some((root, real.strip_prefix(root.real()).ok()?))) {
            Some((root, rest)) if rest.as_os_str().is_empty() => root.given().to_owned(),
            Some((root, rest)) => format!("{}/{}", root.given(), rest.display()),
            None => real.to_string_lossy().into_owned(),
        }
    }
}

/// The project roots as Neovim sees them now.
async fn read_roots(state: &State) -> Result<ProjectRoots, Failure> {
    match state
        .editor()
        .query::<ProjectRoots>(LuaCall::ProjectRoots)
        .await
    {
        Ok(Some(found)) if !found.cwd.is_empty() => Ok(found),
        Ok(_) => Err(Failure("Neovim has no current directory".into())),
        Err(error) => Err(Failure(format!(
            "cannot read Neovim's project roots: {error}"
        ))),
    }
}

/// Why a call has no project.
#[derive(Debug)]
pub enum NoProject {
    /// Its `projectPath` lies in none of Neovim's roots: another project.
    Elsewhere(Failure),
    /// Anything else: the roots could not be read, the path is no
    /// directory, Neovim's cwd is no project.
    Failed(Failure),
}

impl From<NoProject> for Failure {
    fn from(no: NoProject) -> Failure {
        match no {
            NoProject::Elsewhere(why) | NoProject::Failed(why) => why,
        }
    }
}

impl Project {
    /// The project of a call with `arguments` (its `projectPath`).
    pub async fn open(state: &State, arguments: &Value) -> Result<Project, Failure> {
        Ok(Project::open_telling(state, arguments).await?)
    }

    /// As [`Project::open`], telling another project from a failure.
    pub async fn open_telling(state: &State, arguments: &Value) -> Result<Project, NoProject> {
        let found = match state.project_roots().get() {
            Ok(kept) => kept,
            Err(generation) => {
                let found = read_roots(state).await.map_err(NoProject::Failed)?;
                state.project_roots().store(generation, found.clone());
                found
            }
        };
        let git_root = state.root().to_string_lossy().into_owned();
        Project::route(
            Roots::confirm(found, git_root),
            arguments.get("projectPath"),
        )
    }

    /// The project `project_path` names (none: the cwd's), or why none.
    fn route(roots: Roots, project_path: Option<&Value>) -> Result<Project, NoProject> {
        use NoProject::{Elsewhere, Failed};
        let given = match project_path {
            None | Some(Value::Null) => None,
            Some(Value::String(given)) if given.is_empty() => None,
            Some(Value::String(given)) => Some(given.as_str()),
            Some(other) => {
                return Err(Failed(Failure(format!(
                    "projectPath must be a string, got {other}"
                ))));
            }
        };
        let Some(given) = given else {
            let cwd = match &roots.cwd {
                Ok(cwd) => cwd.given().to_owned(),
                Err(not) => {
                    return Err(Failed(Failure(format!("Neovim's current directory {not}"))));
                }
            };
            return Ok(Project {
                root: cwd,
                allowed: roots.all,
                routed: false,
                caller: None,
            });
        };
        if !Path::new(given).is_absolute() {
            return Err(Failed(Failure(format!(
                "projectPath must be an absolute path, got {given}"
            ))));
        }
        let real =
            links::resolve(Path::new(given)).map_err(|_| Elsewhere(roots.not_here(given)))?;
        if !roots.all.iter().any(|root| root.holds(&real)) {
            return Err(Elsewhere(roots.not_here(given)));
        }
        if !real.is_dir() {
            return Err(Failed(Failure(format!(
                "projectPath {given} is not a directory"
            ))));
        }
        let innermost = roots
            .all
            .iter()
            .filter(|root| root.holds(&real))
            .max_by_key(|root| root.real().components().count())
            .cloned();
        let checkout = worktree::checkout_of(&real)
            .filter(|dir| roots.all.iter().any(|root| root.holds(dir)))
            .and_then(|dir| ProjectRoot::confirm(&dir.to_string_lossy()).ok());
        let Some(root) = checkout.or(innermost) else {
            return Err(Elsewhere(roots.not_here(given)));
        };
        let root = root.spelled(&roots.spell(root.real()));
        Ok(Project {
            root: roots.spell(&real),
            allowed: vec![root],
            routed: true,
            caller: None,
        })
    }

    /// A project at `root` that touches no files, for unit tests.
    #[cfg(test)]
    pub fn at(root: &str) -> Project {
        Project {
            root: root.to_owned(),
            allowed: vec![ProjectRoot::assumed(root)],
            routed: false,
            caller: None,
        }
    }

    /// The absolute path of `given` (relative to the root, or absolute),
    /// refused unless it leads into the project.
    pub fn resolve(&self, given: &str) -> Result<String, Failure> {
        self.confine(given).map(|confined| confined.path)
    }

    /// `given` confined to the project: where it is and where it leads.
    pub fn confine(&self, given: &str) -> Result<Confined, Failure> {
        let path = links::absolute(&self.root, given);
        confine::confine(&self.allowed, &path, self.routed)
            .map_err(|escape| Failure(escape.explain(given, &self.where_paths_may_lead())))
    }

    fn where_paths_may_lead(&self) -> String {
        match self.allowed.as_slice() {
            [one] => format!("the project root {}", one.given()),
            all => {
                let names: Vec<&str> = all.iter().map(ProjectRoot::given).collect();
                format!("this Neovim's project roots {}", names.join(", "))
            }
        }
    }

    /// `path` relative to the root (`../` when it lies above it in the
    /// project), else as it is.
    pub fn relative(&self, path: &str) -> String {
        let base = real_or_lexical(&self.root);
        let full = real_or_lexical(path);
        if let Ok(rest) = full.strip_prefix(&base) {
            return match rest.as_os_str().is_empty() {
                true => ".".into(),
                false => rest.to_string_lossy().into_owned(),
            };
        }
        let shared = self
            .allowed
            .iter()
            .find(|root| root.holds(&full) && root.holds(&base));
        if let Some(root) = shared {
            return upwards(root.real(), &base, &full);
        }
        match Path::new(path).strip_prefix(&self.root) {
            Ok(rest) => rest.to_string_lossy().into_owned(),
            Err(_) => path.to_owned(),
        }
    }
}

/// `path` with its links resolved, or as it is when they cannot be.
fn real_or_lexical(path: &str) -> PathBuf {
    links::resolve(Path::new(path)).unwrap_or_else(|_| PathBuf::from(path))
}

/// `full` relative to `base`, both below `root`: `../` up to where they
/// part, then down.
fn upwards(root: &Path, base: &Path, full: &Path) -> String {
    let from: Vec<Component<'_>> = base.components().collect();
    let to: Vec<Component<'_>> = full.components().collect();
    let floor = root.components().count();
    let mut shared = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    shared = shared.max(floor);
    let mut parts: Vec<String> = vec!["..".into(); from.len().saturating_sub(shared)];
    parts.extend(
        to.iter()
            .skip(shared)
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use serde_json::json;

    use super::*;
    use crate::scratch::Scratch;

    fn string(path: &Path) -> String {
        path.to_str().unwrap().to_owned()
    }

    #[test]
    fn paths_are_confined_to_the_root_and_shown_relative() {
        let root = Scratch::new("project");
        let project = Project::route(
            Roots::confirm(
                ProjectRoots {
                    cwd: string(&root),
                    folders: vec![],
                },
                String::new(),
            ),
            None,
        )
        .unwrap();
        let inside = project.resolve("src/a.rs").unwrap();
        assert_eq!(project.relative(&inside), "src/a.rs");
        assert!(project.resolve("../x").is_err());
        assert!(project.resolve("/etc/passwd").is_err());
        assert_eq!(project.relative("/elsewhere/b"), "/elsewhere/b");
    }

    #[test]
    fn project_path_names_one_root_through_symlinks_and_trailing_slashes() {
        let scratch = Scratch::new("roots");
        let (cwd, lib) = (scratch.join("app"), scratch.join("lib"));
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(&lib).unwrap();
        std::os::unix::fs::symlink(&lib, scratch.join("lib-link")).unwrap();
        let found = ProjectRoots {
            cwd: string(&cwd),
            folders: vec![string(&lib), string(&cwd), "/".into()],
        };
        let home = dirs::home_dir().map(|h| string(&h)).unwrap_or_default();
        let roots = || Roots::confirm(found.clone(), home.clone());
        let names: Vec<String> = roots().all.iter().map(|r| r.given().into()).collect();
        assert_eq!(
            names,
            [string(&cwd), string(&lib)],
            "once each; / and ~ out"
        );

        let pick = |given: Value| Project::route(roots(), Some(&given));
        assert_eq!(Project::route(roots(), None).unwrap().root, string(&cwd));
        assert_eq!(pick(json!("")).unwrap().root, string(&cwd));
        let linked = format!("{}/", scratch.join("lib-link").display());
        let project = pick(json!(linked)).unwrap();
        assert_eq!(project.root, string(&lib), "symlink and slash resolved");
        assert_eq!(
            project.resolve("src/x.rs").unwrap(),
            format!("{}/src/x.rs", lib.display())
        );
        let in_app = format!("{}/main.rs", cwd.display());
        let routed = project.resolve(&in_app).unwrap_err().0;
        assert!(routed.contains(&string(&lib)), "routed to lib: {routed}");
        let all = Project::route(roots(), None).unwrap();
        assert_eq!(all.resolve(&in_app).unwrap(), in_app);
        assert!(
            all.resolve(&format!("{}/x", lib.display())).is_ok(),
            "any root"
        );
        let outside = all.resolve("../elsewhere").unwrap_err().0;
        assert!(
            outside.contains(&string(&cwd)) && outside.contains(&string(&lib)),
            "{outside}"
        );

        let Some(NoProject::Elsewhere(Failure(wrong))) = pick(json!(string(&scratch))).err() else {
            panic!("a directory above the roots is another project");
        };
        assert!(wrong.contains("not this Neovim's project"), "{wrong}");
        assert!(
            wrong.contains(&string(&cwd)) && wrong.contains(&string(&lib)),
            "names the roots: {wrong}"
        );
        assert!(matches!(
            pick(json!(string(&scratch.join("missing")))),
            Err(NoProject::Elsewhere(_))
        ));
        // Not a question of which project: nothing a call may pass for none.
        assert!(matches!(pick(json!(7)), Err(NoProject::Failed(_))));
        assert!(matches!(
            pick(json!("relative/dir")),
            Err(NoProject::Failed(_))
        ));
    }

    #[test]
    fn a_subdirectory_routes_to_its_checkout_and_answers_relative_to_itself() {
        let scratch = Scratch::new("checkouts");
        let cwd = scratch.canonicalize().unwrap();
        let main = cwd.join("main");
        std::fs::create_dir_all(main.join("src/deep")).unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args(args)
                .current_dir(&main)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        git(&["init", "-q"]);
        git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ]);
        git(&["worktree", "add", "-q", ".worktrees/feat"]);
        let roots = || {
            Roots::confirm(
                ProjectRoots {
                    cwd: string(&cwd),
                    folders: vec![],
                },
                String::new(),
            )
        };
        let at = |dir: &Path| Project::route(roots(), Some(&json!(string(dir)))).unwrap();

        let deep = at(&main.join("src/deep"));
        assert_eq!(deep.root, string(&main.join("src/deep")));
        assert_eq!(deep.allowed[0].real(), main, "the checkout, not the cwd");
        let up = deep.resolve("../../README").unwrap();
        assert_eq!(deep.relative(&up), "../../README");
        assert!(
            deep.resolve("../../../other").is_err(),
            "out of the checkout"
        );
        assert!(
            deep.resolve("../../.worktrees/feat/a").is_err(),
            "a worktree"
        );

        let feat = at(&main.join(".worktrees/feat"));
        assert_eq!(feat.allowed[0].real(), main.join(".worktrees/feat"));
        assert!(feat.resolve("../../README").is_err());
        assert!(feat.resolve("a.rs").is_ok());

        let unrouted = Project::route(roots(), None).unwrap();
        assert!(unrouted.resolve("main/.worktrees/feat/a").is_ok());
        assert!(Project::route(roots(), Some(&json!(string(&main.join("missing"))))).is_err());
    }
}
