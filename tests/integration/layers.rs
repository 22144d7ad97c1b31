//! The host's modules depend one way: wiring → transports → protocol and
//! features → state → Neovim seam → pure helpers. Read from the sources, so
//! an import against the grain fails here rather than in review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::common::repo_root;

/// Top-level modules of `src/`, by layer, highest first.
const LAYERS: &[&[&str]] = &[
    &[
        "main", "cli", "host", "config", "logging", "limits", "fuzzing",
    ],
    &[
        "ws",
        "http",
        "acp",
        "socket",
        "codex_ipc",
        "opencode",
        "listen",
        "lockfile",
        "discovery",
        "auth",
    ],
    &[
        "mcp_ws",
        "mcp_http",
        "ide_companion",
        "suggest",
        "context_review",
        "changes",
        "codex",
    ],
    &["tools"],
    &["project"],
    &["state"],
    &["nvim"],
    &[
        "confine",
        "diagnostics",
        "diff",
        "file_watch",
        "outline",
        "selection",
        "uri",
        "git",
        "snapshot",
        "jsonrpc",
        "client",
        "mutex",
        "peer",
        "memory",
        "private_file",
        "scratch",
        "task",
        "lib",
    ],
];

fn layer_of(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|layer| layer.contains(&module))
        .unwrap_or_else(|| panic!("src/{module} is in no layer: add it to LAYERS"))
}

/// `module → modules it names as crate::…`, outside tests and comments.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let mut found = BTreeMap::new();
    let src = repo_root().join("src");
    visit(&src, &src, &mut found);
    found
}

fn visit(src: &Path, dir: &Path, found: &mut BTreeMap<String, BTreeSet<String>>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            visit(src, &path, found);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let relative = path.strip_prefix(src).unwrap();
        let top = relative.components().next().unwrap().as_os_str();
        let module = top.to_str().unwrap().trim_end_matches(".rs").to_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        let names: &mut BTreeSet<String> = found.entry(module.clone()).or_default();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (at, _) in line.match_indices("crate::") {
                let name: String = line[at + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if name != module && !name.is_empty() {
                    names.insert(name);
                }
            }
        }
    }
}

#[test]
fn modules_depend_only_on_their_layer_or_below() {
    let imports = imports();
    assert!(imports.len() > 10, "read too few modules: {imports:?}");
    let mut against = vec![];
    for (module, names) in &imports {
        for name in names {
            if layer_of(name) < layer_of(module) {
                against.push(format!("{module} → {name}"));
            }
        }
    }
    assert!(
        against.is_empty(),
        "imports against the layers: {against:?}"
    );
}

#[test]
fn no_two_modules_import_each_other() {
    let imports = imports();
    for (module, names) in &imports {
        for name in names {
            let back = imports.get(name).is_some_and(|n| n.contains(module));
            assert!(!back, "{module} and {name} import each other");
        }
    }
}

/// Every call into Neovim runs in a task of its own, so no caller can drop
/// one half-way: only `src/nvim/editor.rs` holds the nvim-rs handle, and
/// each of its nvim-rs calls sits inside a spawned task.
#[test]
fn only_the_editor_calls_into_neovim_and_it_spawns_each_call() {
    let src = repo_root().join("src");
    let mut files = vec![];
    collect(&src, &mut files);
    let calls = [".exec_lua(", "nvim.call(", ".command(", ".call_function("];
    let mut outside = vec![];
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        let relative = path.strip_prefix(&src).unwrap().display().to_string();
        if relative == "nvim/editor.rs" {
            let direct = ["nvim.exec_lua(", "nvim.call(", "nvim.command("];
            let uses = direct
                .iter()
                .map(|c| code.matches(c).count())
                .sum::<usize>();
            let spawned = code.matches("task::spawn(call)").count();
            assert!(uses > 0, "the editor makes no call?");
            assert_eq!(uses, spawned, "each nvim-rs call of the editor is spawned");
            continue;
        }
        // The handler's trait hands it a handle; it must leave it unused.
        let named_handle = code.contains(": Neovim<") && !code.contains("_: Neovim<");
        if calls.iter().any(|c| code.contains(c)) || named_handle {
            outside.push(relative);
        }
    }
    assert!(files.len() > 10, "read too few files");
    assert!(
        outside.is_empty(),
        "nvim-rs called outside the editor: {outside:?}"
    );
}

/// One of each mechanism: git runs only through `src/git.rs`, and files
/// are watched on disk only by the host's watch (no Lua module starts a
/// watcher of its own).
#[test]
fn git_runs_in_one_place_and_files_are_watched_in_one() {
    let src = repo_root().join("src");
    let mut files = vec![];
    collect(&src, &mut files);
    let mut running_git: Vec<String> = files
        .iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap().to_owned();
            code.contains("Command::new(\"git\")")
        })
        .map(|path| path.strip_prefix(&src).unwrap().display().to_string())
        .collect();
    running_git.sort();
    assert_eq!(running_git, ["git.rs"], "git run outside src/git.rs");

    let mut lua = vec![];
    collect_ext(&repo_root().join("lua"), "lua", &mut lua);
    assert!(lua.len() > 10, "read too few Lua files");
    let watching: Vec<String> = lua
        .iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            ["new_fs_event", "new_fs_poll"]
                .iter()
                .any(|watcher| text.contains(watcher))
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        watching.is_empty(),
        "Lua watches files itself: {watching:?}"
    );
}

fn collect(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    collect_ext(dir, "rs", files);
}

fn collect_ext(dir: &Path, ext: &str, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_ext(&path, ext, files);
        } else if path.extension().is_some_and(|e| e == ext) {
            files.push(path);
        }
    }
}

/// The README's Architecture section names every entry of `src/` (and
/// nothing that is gone), so a newcomer's map matches `ls src`.
#[test]
fn the_readme_architecture_names_every_entry_of_src() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let section = readme
        .split("\n## Architecture\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("README has an Architecture section");
    let entries: BTreeSet<String> = std::fs::read_dir(repo_root().join("src"))
        .unwrap()
        .flatten()
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.path().is_dir() {
                format!("src/{name}/")
            } else {
                format!("src/{name}")
            }
        })
        .collect();
    let named: BTreeSet<String> = section
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| {
            let Some(entry) = quoted.strip_prefix("src/") else {
                return false;
            };
            let entry = entry.strip_suffix('/').unwrap_or(entry);
            !entry.is_empty() && !entry.contains('/')
        })
        .map(str::to_owned)
        .collect();
    let missing: Vec<_> = entries.difference(&named).collect();
    let stale: Vec<_> = named.difference(&entries).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "README Architecture: not named {missing:?}; gone {stale:?}"
    );
}
