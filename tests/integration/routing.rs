//! `projectPath` routes an MCP call exactly, as the pi bridge sends it
//! (pi's own cwd), through the npm SDK against real Neovim: any directory
//! inside a root, relative paths resolved against it and answered relative
//! to it, the git checkout holding it as the boundary, a nested worktree
//! its own project, and two worktrees that never see each other's files.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{Session, scratch_dir};
use crate::mcp_edits::{call_now, ok, refused};
use crate::mcp_http::endpoint;

fn path_str(path: &Path) -> String {
    path.to_str().unwrap().to_owned()
}

fn structured(call: &Value) -> &Value {
    ok(call);
    &call["structuredContent"]
}

fn read(path: &str, project: &Path) -> Value {
    json!({"name": "get_file_text_by_path",
           "arguments": {"pathInProject": path, "projectPath": path_str(project)}})
}

fn search(text: &str, project: &Path) -> Value {
    json!({"name": "search_in_files_by_text",
           "arguments": {"searchText": text, "projectPath": path_str(project)}})
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The files a search result names.
fn found_in(call: &Value) -> Vec<String> {
    let mut files: Vec<String> = structured(call)["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("no entries: {call}"))
        .iter()
        .map(|usage| usage["filePath"].as_str().unwrap().to_owned())
        .collect();
    files.dedup();
    files
}

#[tokio::test]
async fn project_path_may_be_any_directory_inside_a_root_and_answers_relative_to_it() {
    let session = Session::start().await;
    let root = session.work_dir.canonicalize().unwrap();
    std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
    session.write_file("x.txt", "in the root\n");
    session.write_file("sub/x.txt", "in sub\n");
    session.write_file("sub/deeper/y.txt", "deeper\n");
    let elsewhere = scratch_dir("elsewhere");
    let sub = root.join("sub");
    let mcp = endpoint(&session).await;
    let calls = call_now(
        &mcp,
        json!([
            read("x.txt", &sub),
            read("../x.txt", &sub),
            {"name": "find_files_by_glob", "arguments": {"globPattern": "**/*.txt", "projectPath": path_str(&sub)}},
            read("x.txt", &root.join("sub/missing")),
            read("x.txt", &elsewhere),
            read("x.txt", &root.join("sub/x.txt")),
        ]),
    )
    .await;
    let inside = structured(&calls[0]);
    assert_eq!(
        inside["text"], "in sub",
        "relative to projectPath: {inside}"
    );
    assert_eq!(inside["pathInProject"], "x.txt");
    let above = structured(&calls[1]);
    assert_eq!(above["text"], "in the root");
    assert_eq!(
        above["pathInProject"], "../x.txt",
        "as pi's own read names it"
    );
    assert_eq!(
        structured(&calls[2])["files"],
        json!(["deeper/y.txt", "x.txt"]),
        "found below projectPath, relative to it"
    );
    let missing = refused(&calls[3]);
    assert!(missing.contains("not a directory"), "{missing}");
    let outside = refused(&calls[4]);
    assert!(
        outside.contains("not this Neovim's project") && outside.contains(&path_str(&root)),
        "names the roots: {outside}"
    );
    assert!(refused(&calls[5]).contains("not a directory"), "a file");
}

#[tokio::test]
async fn each_worktree_is_its_own_project_and_none_sees_the_others_files() {
    let session = Session::start().await;
    let cwd = session.work_dir.canonicalize().unwrap();
    let main = cwd.join("main");
    std::fs::create_dir_all(&main).unwrap();
    std::fs::write(main.join("shared.txt"), "committed\n").unwrap();
    git(&main, &["init", "-q"]);
    git(&main, &["add", "shared.txt"]);
    git(&main, &["commit", "-q", "-m", "one"]);
    git(&main, &["worktree", "add", "-q", "../feat"]);
    git(&main, &["worktree", "add", "-q", "wt/nested"]);
    let (feat, nested) = (cwd.join("feat"), main.join("wt/nested"));
    std::fs::write(main.join("main-only.txt"), "SECRET of main\n").unwrap();
    std::fs::write(feat.join("feat-only.txt"), "SECRET of feat\n").unwrap();
    std::fs::write(nested.join("nested-only.txt"), "SECRET of nested\n").unwrap();
    let mcp = endpoint(&session).await;

    let calls = call_now(
        &mcp,
        json!([
            read("main-only.txt", &main),
            read("../feat/feat-only.txt", &main),
            read("wt/nested/nested-only.txt", &main),
            search("SECRET", &main),
            read("feat-only.txt", &feat),
            read("../main/main-only.txt", &feat),
            read(&path_str(&main.join("main-only.txt")), &feat),
            search("SECRET", &feat),
            read("nested-only.txt", &nested),
            read("../../main-only.txt", &nested),
            search("SECRET", &nested),
            {"name": "get_file_text_by_path", "arguments": {"pathInProject": "feat/feat-only.txt"}},
        ]),
    )
    .await;
    assert_eq!(structured(&calls[0])["text"], "SECRET of main");
    let sibling = refused(&calls[1]);
    assert!(
        sibling.contains("outside the project root") && sibling.contains(&path_str(&main)),
        "confined to its own checkout: {sibling}"
    );
    let inner = refused(&calls[2]);
    assert!(
        inner.contains("git worktree") && inner.contains(&path_str(&nested)),
        "a nested worktree is another checkout: {inner}"
    );
    assert_eq!(found_in(&calls[3]), ["main-only.txt"]);

    assert_eq!(structured(&calls[4])["text"], "SECRET of feat");
    for call in &calls[5..7] {
        let text = refused(call);
        assert!(text.contains(&path_str(&feat)), "{text}");
    }
    assert_eq!(found_in(&calls[7]), ["feat-only.txt"]);

    let own = structured(&calls[8]);
    assert_eq!(
        own["text"], "SECRET of nested",
        "the nested worktree routes to itself"
    );
    assert!(refused(&calls[9]).contains(&path_str(&nested)));
    assert_eq!(found_in(&calls[10]), ["nested-only.txt"]);

    assert_eq!(
        structured(&calls[11])["text"],
        "SECRET of feat",
        "without projectPath: every root of this Neovim"
    );
}
