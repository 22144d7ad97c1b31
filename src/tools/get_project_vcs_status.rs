//! `get_project_vcs_status {}`: the git branch (and its upstream, ahead,
//! behind) and the project's changed files, split as git sees them: staged
//! (index against HEAD), unstaged (work tree against the index), untracked,
//! conflicted. Paths relative to the project; files outside it left out.

use std::path::Path;

use serde_json::{Value, json};

use async_trait::async_trait;

use super::{NoArgs, ProjectTool, Spec, object};
use crate::git;
use crate::project::{Answer, Failure, Project};
use crate::state::State;

/// At most this many files are listed; git's own output is bounded too.
const MAX_FILES: usize = 1000;
const MAX_OUTPUT: usize = 4 << 20;

pub struct GetProjectVcsStatus;

#[async_trait]
impl ProjectTool for GetProjectVcsStatus {
    type Args = NoArgs;

    const SPEC: Spec = Spec::project(
        "get_project_vcs_status",
        "The project's git status: branch (upstream, ahead, behind), and the changed files: staged (in the index), unstaged (changed in the work tree), untracked and conflicted, each {filePath, status} with paths relative to the project root. get_file_diff shows one file's changes.",
        || object(json!({}), &[]),
    );

    async fn run(_state: &State, project: &Project, _args: Self::Args) -> Answer {
        let root = Path::new(&project.root);
        let top = git::top(root).await?;
        let out = git::run(
            root,
            &[
                "status",
                "--porcelain=v1",
                "-z",
                "--branch",
                "--untracked-files=all",
            ],
            MAX_OUTPUT,
        )
        .await?;
        if out.code != 0 {
            return Err(Failure(format!("git status failed: {}", out.stderr)));
        }
        let status = parse(&out.text());
        let inside = |path: &str| {
            let full = format!("{top}/{path}");
            project.confine(&full).ok().map(|_| project.relative(&full))
        };
        let mut lists: [Vec<Value>; 4] = Default::default();
        let mut listed = 0;
        let mut cut = out.cut;
        for entry in &status.entries {
            let Some(file_path) = inside(&entry.path) else {
                continue;
            };
            if listed == MAX_FILES {
                cut = true;
                break;
            }
            listed += 1;
            let mut item = json!({"filePath": file_path});
            if let Some(from) = entry.from.as_deref().and_then(inside) {
                item["renamedFrom"] = json!(from);
            }
            let (x, y) = (entry.index, entry.tree);
            let conflicted = x == 'U' || y == 'U' || (x, y) == ('A', 'A') || (x, y) == ('D', 'D');
            if (x, y) == ('?', '?') {
                lists[2].push(item);
            } else if conflicted {
                lists[3].push(item);
            } else {
                if x != ' ' {
                    let mut staged = item.clone();
                    staged["status"] = json!(word(x));
                    lists[0].push(staged);
                }
                if y != ' ' {
                    item["status"] = json!(word(y));
                    lists[1].push(item);
                }
            }
        }
        let [staged, unstaged, untracked, conflicted] = lists;
        let mut text = vec![match &status.branch {
            Some(branch) => format!("On branch {branch}"),
            None => "Not on a branch (detached HEAD)".to_owned(),
        }];
        if let Some(upstream) = &status.upstream {
            text.push(format!(
                "Upstream {upstream}: {} ahead, {} behind",
                status.ahead, status.behind
            ));
        }
        for (title, list) in [
            ("Staged", &staged),
            ("Unstaged", &unstaged),
            ("Untracked", &untracked),
            ("Conflicted", &conflicted),
        ] {
            if list.is_empty() {
                continue;
            }
            text.push(format!("{title}:"));
            for item in list {
                let status = item["status"]
                    .as_str()
                    .map(|s| format!("{s}: "))
                    .unwrap_or_default();
                text.push(format!(
                    "  {status}{}",
                    item["filePath"].as_str().unwrap_or_default()
                ));
            }
        }
        if staged.is_empty() && unstaged.is_empty() && untracked.is_empty() && conflicted.is_empty()
        {
            text.push("Nothing changed.".into());
        }
        if cut {
            text.push(format!("(cut to the first {MAX_FILES} files)"));
        }
        Ok((
            text.join("\n"),
            json!({
                "branch": status.branch,
                "upstream": status.upstream,
                "ahead": status.ahead,
                "behind": status.behind,
                "staged": staged,
                "unstaged": unstaged,
                "untracked": untracked,
                "conflicted": conflicted,
                "limitReached": cut,
            }),
        ))
    }
}

/// A status letter as a word.
fn word(letter: char) -> &'static str {
    match letter {
        'M' => "modified",
        'A' => "added",
        'D' => "deleted",
        'R' => "renamed",
        'C' => "copied",
        'T' => "type changed",
        _ => "changed",
    }
}

/// One file of `git status --porcelain=v1 -z`.
#[derive(Debug, PartialEq)]
struct Entry {
    index: char,
    tree: char,
    /// Relative to the top of the work tree.
    path: String,
    /// A rename's or copy's source.
    from: Option<String>,
}

#[derive(Debug, Default, PartialEq)]
struct Status {
    branch: Option<String>,
    upstream: Option<String>,
    ahead: u64,
    behind: u64,
    entries: Vec<Entry>,
}

fn parse(output: &str) -> Status {
    let mut status = Status::default();
    let mut fields = output.split('\0').filter(|f| !f.is_empty());
    while let Some(field) = fields.next() {
        if let Some(header) = field.strip_prefix("## ") {
            branch(header, &mut status);
            continue;
        }
        let mut chars = field.chars();
        let (Some(index), Some(tree), Some(' ')) = (chars.next(), chars.next(), chars.next())
        else {
            continue;
        };
        let from = match index {
            'R' | 'C' => fields.next().map(str::to_owned),
            _ => None,
        };
        status.entries.push(Entry {
            index,
            tree,
            path: chars.as_str().to_owned(),
            from,
        });
    }
    status
}

/// `main...origin/main [ahead 1, behind 2]`, `No commits yet on main`,
/// `HEAD (no branch)`.
fn branch(header: &str, status: &mut Status) {
    let (names, counts) = match header.split_once(" [") {
        Some((names, counts)) => (names, counts.trim_end_matches(']')),
        None => (header, ""),
    };
    let names = names
        .strip_prefix("No commits yet on ")
        .or_else(|| names.strip_prefix("Initial commit on "))
        .unwrap_or(names);
    if names.starts_with("HEAD (no branch)") {
        return;
    }
    match names.split_once("...") {
        Some((local, upstream)) => {
            status.branch = Some(local.to_owned());
            status.upstream = Some(upstream.to_owned());
        }
        None => status.branch = Some(names.to_owned()),
    }
    for count in counts.split(", ") {
        if let Some(n) = count.strip_prefix("ahead ") {
            status.ahead = n.parse().unwrap_or(0);
        } else if let Some(n) = count.strip_prefix("behind ") {
            status.behind = n.parse().unwrap_or(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_entries_renames_and_the_branch_line_are_read() {
        let out = "## main...origin/main [ahead 2, behind 1]\0M  staged.py\0 M tree.py\0MM both.py\0R  new.py\0old.py\0?? fresh dir/x.py\0UU clash.py\0";
        let status = parse(out);
        assert_eq!(status.branch.as_deref(), Some("main"));
        assert_eq!(status.upstream.as_deref(), Some("origin/main"));
        assert_eq!((status.ahead, status.behind), (2, 1));
        let summary: Vec<(char, char, &str, Option<&str>)> = status
            .entries
            .iter()
            .map(|e| (e.index, e.tree, e.path.as_str(), e.from.as_deref()))
            .collect();
        assert_eq!(
            summary,
            [
                ('M', ' ', "staged.py", None),
                (' ', 'M', "tree.py", None),
                ('M', 'M', "both.py", None),
                ('R', ' ', "new.py", Some("old.py")),
                ('?', '?', "fresh dir/x.py", None),
                ('U', 'U', "clash.py", None),
            ]
        );
        assert_eq!(
            parse("## No commits yet on trunk\0").branch.as_deref(),
            Some("trunk")
        );
        assert_eq!(parse("## HEAD (no branch)\0").branch, None);
        assert_eq!(parse("## dev\0").upstream, None);
    }
}
