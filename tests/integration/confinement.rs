//! No agent reaches outside the project, over any transport, against real
//! Neovim and the real host: a Neovim started in `$HOME` (or moved to `/`)
//! serves context but no file; a dangling symlink counts as where it
//! points; a link swapped in while the person reviews (or while Neovim
//! writes) never redirects the write.

use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::common::{Session, eventually, fresh_dir, open_diff_args, scratch_dir, texts};
use crate::health::health_report;
use crate::mcp_edits::{call_now, command, ok, refused, start_client};
use crate::mcp_http::endpoint;

const NO_PROJECT: &str = "start Neovim in a project directory, or `:cd` into one";

/// The one text item of a Claude tool result, parsed as JSON.
fn result_json(reply: &Value) -> Value {
    serde_json::from_str(&texts(reply)[0]).unwrap_or_else(|e| panic!("not JSON ({e}): {reply}"))
}

fn path_str(path: &Path) -> String {
    path.to_str().unwrap().to_owned()
}

/// Asks for a review over pi's context socket at `socket`; the answer.
async fn review(socket: &Path, files: &[&str]) -> Value {
    let stream = eventually("the context socket", || async {
        UnixStream::connect(socket).await.ok()
    })
    .await;
    let (reader, mut writer) = stream.into_split();
    let mut lines = BufReader::new(reader).lines();
    let request = format!("{}\n", json!({ "files": files }));
    writer.write_all(request.as_bytes()).await.unwrap();
    loop {
        let line = tokio::time::timeout(crate::common::DEADLINE, lines.next_line())
            .await
            .expect("an answer from the socket")
            .unwrap()
            .expect("the socket stays open");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["type"] == "reviewResult" {
            return message;
        }
    }
}

async fn told(session: &Session, wanted: &str) -> String {
    eventually(&format!("the person told {wanted:?}"), || async {
        let list = session.notifications().await;
        list.into_iter().find(|message| message.contains(wanted))
    })
    .await
}

#[tokio::test]
async fn a_neovim_started_in_home_gives_agents_context_but_no_file() {
    let home = fresh_dir("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY\n").unwrap();
    std::fs::write(home.join("notes.txt"), "one\ntwo\n").unwrap();
    let session = Session::start_in(home.clone(), &[("HOME", &home)], "{}").await;
    let real_home = path_str(&home.canonicalize().unwrap());

    // Agents still find this Neovim, for what the person does in it.
    let (_, lock) = session.lockfile().await;
    assert_eq!(lock["workspaceFolders"], json!([path_str(&home)]), "{lock}");

    let mcp = endpoint(&session).await;
    let calls = call_now(
        &mcp,
        json!([
            {"name": "get_file_text_by_path", "arguments": {"pathInProject": ".ssh/id_ed25519"}},
            {"name": "get_file_text_by_path", "arguments": {"pathInProject": ".ssh/id_ed25519", "projectPath": real_home}},
            {"name": "find_files_by_glob", "arguments": {"globPattern": "*"}},
            {"name": "create_new_file", "arguments": {"pathInProject": "new.txt", "text": "x"}},
        ]),
    )
    .await;
    for call in &calls {
        let text = refused(call);
        assert!(
            text.contains(NO_PROJECT) && text.contains("your home directory"),
            "{text}"
        );
        assert!(!text.contains("PRIVATE"), "{text}");
    }
    assert!(!home.join("new.txt").exists());

    session.exec("vim.cmd.edit('notes.txt')").await;
    let mut claude = session.connect_claude().await;
    let key = path_str(&home.join(".ssh/id_ed25519"));
    for (tool, arguments) in [
        ("openFile", json!({"filePath": ".ssh/id_ed25519"})),
        ("openFile", json!({"filePath": key})),
        ("saveDocument", json!({"filePath": "notes.txt"})),
        ("getWorkspaceFolders", json!({})),
    ] {
        let answer = result_json(&claude.call_tool(tool, arguments.clone()).await);
        assert_eq!(answer["success"], false, "{tool} {arguments}: {answer}");
        assert!(
            answer["message"].as_str().unwrap().contains(NO_PROJECT),
            "{tool}: {answer}"
        );
    }
    let loaded = session
        .lua_with("return vim.fn.bufloaded(...)", vec![json!(key)])
        .await;
    assert_eq!(loaded, 0, "the key never reached a buffer");
    let diff = open_diff_args(&home.join("notes.txt"), "changed\n", "home-diff");
    let answer = claude.call_tool("openDiff", diff).await;
    let answer = texts(&answer);
    assert_eq!(answer[..2], ["DIFF_REJECTED", "home-diff"], "{answer:?}");
    assert!(answer[2].contains(NO_PROJECT), "{answer:?}");
    told(&session, "the agent's diff home-diff was refused").await;
    assert!(session.wait_diffs(0).await.is_empty());
    // Context is still served.
    let editors = claude.call_tool("getOpenEditors", json!({})).await;
    assert!(texts(&editors)[0].contains("notes.txt"), "{editors}");

    // The context/review socket is there for context, but reviews are refused.
    let result = review(&home.join(".pi/ide/nvim.sock"), &[".ssh/id_ed25519"]).await;
    assert_eq!(result["status"], "cancelled", "{result}");
    let reason = told(&session, "review refused").await;
    assert!(reason.contains(NO_PROJECT), "{reason}");

    let report = health_report(&session).await;
    assert!(
        report.contains("is your home directory") && report.contains(NO_PROJECT),
        "{report}"
    );
}

#[tokio::test]
async fn the_filesystem_root_is_no_project_either() {
    let session = Session::start().await;
    let mcp = endpoint(&session).await;
    session.exec("vim.cmd.cd('/')").await;
    let calls = call_now(
        &mcp,
        json!([
            {"name": "get_file_text_by_path", "arguments": {"pathInProject": "etc/hostname"}},
            {"name": "list_directory_tree", "arguments": {"directoryPath": "/", "projectPath": "/"}},
        ]),
    )
    .await;
    for call in &calls {
        let text = refused(call);
        assert!(text.contains(NO_PROJECT), "{text}");
    }
    assert!(refused(&calls[0]).contains("the filesystem root"));
    let mut pi = session.connect().await;
    let answer = pi
        .call_tool(
            "openDiff",
            open_diff_args(Path::new("/etc/hostname"), "x\n", "root-diff"),
        )
        .await;
    assert_eq!(texts(&answer)[0], "DIFF_REJECTED", "{answer}");
    let report = health_report(&session).await;
    assert!(report.contains("/ is the filesystem root"), "{report}");
}

#[tokio::test]
async fn a_dangling_symlink_counts_as_where_it_points() {
    let session = Session::start().await;
    let root = session.work_dir.canonicalize().unwrap();
    let outside = scratch_dir("outside");
    let outside_name = outside.file_name().unwrap().to_str().unwrap().to_owned();
    symlink(outside.join("missing"), root.join("notes.md")).unwrap();
    symlink(
        format!("../{outside_name}/also-missing"),
        root.join("relative.md"),
    )
    .unwrap();
    symlink(root.join("inner-missing.md"), root.join("inner.md")).unwrap();
    let mcp = endpoint(&session).await;

    let calls = call_now(
        &mcp,
        json!([
            {"name": "get_file_text_by_path", "arguments": {"pathInProject": "notes.md"}},
            {"name": "get_file_text_by_path", "arguments": {"pathInProject": "relative.md"}},
            {"name": "replace_text_in_file", "arguments": {"pathInProject": "notes.md", "oldText": "a", "newText": "b"}},
            {"name": "create_new_file", "arguments": {"pathInProject": "notes.md", "text": "planted"}},
            {"name": "create_new_file", "arguments": {"pathInProject": "relative.md", "text": "planted", "overwrite": true}},
        ]),
    )
    .await;
    for call in &calls {
        let text = refused(call);
        assert!(
            text.contains("outside the project root") && text.contains("symbolic link"),
            "{text}"
        );
    }
    assert!(
        refused(&calls[0]).contains(&path_str(&outside.join("missing"))),
        "says where it leads"
    );
    assert!(
        session.wait_diffs(0).await.is_empty(),
        "no diff was offered"
    );
    let mut pi = session.connect().await;
    let answer = pi
        .call_tool(
            "openDiff",
            open_diff_args(&root.join("notes.md"), "planted\n", "link"),
        )
        .await;
    assert_eq!(texts(&answer)[0], "DIFF_REJECTED", "{answer}");
    assert!(!outside.join("missing").exists() && !outside.join("also-missing").exists());

    // A dangling link inside the project is a file to create, where it points.
    let calls = json!([{"name": "create_new_file", "arguments": {"pathInProject": "inner.md", "text": "made\n"}}]);
    let mut client = start_client(&mcp, calls, false);
    client.diffs(&session, 1).await;
    command(&session, "PiIde accept").await;
    let text = ok(&client.result().await);
    assert!(
        text.contains("saved: inner-missing.md"),
        "names the file written: {text}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("inner-missing.md")).unwrap(),
        "made\n"
    );
    assert!(
        std::fs::symlink_metadata(root.join("inner.md"))
            .unwrap()
            .is_symlink()
    );
}

/// Replaces `path` by a symlink to `target`.
fn swap_for_link(path: &Path, target: &Path) {
    std::fs::remove_file(path).unwrap();
    symlink(target, path).unwrap();
}

#[tokio::test]
async fn a_link_swapped_in_during_review_never_redirects_the_write() {
    let session = Session::start().await;
    let root = session.work_dir.canonicalize().unwrap();
    let outside = scratch_dir("outside");
    std::fs::write(
        outside.join("present.txt"),
        "outside
",
    )
    .unwrap();
    session.write_file("a.txt", "one\n");
    let mcp = endpoint(&session).await;

    // No buffer: the host writes. The link appears once the diff is open.
    let calls = json!([{"name": "create_new_file",
        "arguments": {"pathInProject": "new.txt", "text": "planted\n"}}]);
    let mut client = start_client(&mcp, calls, false);
    client.diffs(&session, 1).await;
    symlink(outside.join("missing.txt"), root.join("new.txt")).unwrap();
    command(&session, "PiIde accept").await;
    let text = refused(&client.result().await);
    assert!(
        text.contains("Not applied to new.txt") && text.contains("outside the project root"),
        "the agent is told: {text}"
    );
    assert!(
        !outside.join("missing.txt").exists(),
        "nothing created outside"
    );

    let calls = json!([{"name": "replace_text_in_file",
        "arguments": {"pathInProject": "a.txt", "oldText": "one", "newText": "ONE"}}]);
    let mut client = start_client(&mcp, calls, false);
    client.diffs(&session, 1).await;
    swap_for_link(&root.join("a.txt"), &outside.join("present.txt"));
    command(&session, "PiIde accept").await;
    let text = refused(&client.result().await);
    assert!(text.contains("outside the project root"), "{text}");
    assert_eq!(
        std::fs::read_to_string(outside.join("present.txt")).unwrap(),
        "outside\n"
    );
}

/// The person's own BufWritePre that swaps `b.txt` for a link to `target`
/// while Neovim writes it, after every check made before the write.
fn swap_while_writing(target: &Path) -> String {
    format!(
        "vim.api.nvim_create_autocmd('BufWritePre', {{ pattern = '*/b.txt', callback = function()
           if not vim.uv.fs_lstat({target:?}) and vim.uv.fs_lstat('b.txt').type == 'file' then
             os.remove('b.txt'); vim.uv.fs_symlink({target:?}, 'b.txt')
           end
         end }})",
        target = path_str(target),
    )
}

#[tokio::test]
async fn a_link_swapped_in_while_neovim_writes_a_buffer_stops_the_write() {
    let session = Session::start().await;
    let root = session.work_dir.canonicalize().unwrap();
    let outside = scratch_dir("outside");
    let target = outside.join("from-buffer.txt");
    session.write_file("b.txt", "two\n");
    session.exec("vim.cmd.edit('b.txt')").await;
    session.exec(&swap_while_writing(&target)).await;
    let mcp = endpoint(&session).await;

    let calls = json!([{"name": "replace_text_in_file",
        "arguments": {"pathInProject": "b.txt", "oldText": "two", "newText": "TWO"}}]);
    let mut client = start_client(&mcp, calls, false);
    client.diffs(&session, 1).await;
    command(&session, "PiIde accept").await;
    let text = refused(&client.result().await);
    assert!(
        text.contains("symbolic link to a missing file now"),
        "the agent is told: {text}"
    );
    assert!(!target.exists(), "nothing written outside");
    assert!(
        std::fs::symlink_metadata(root.join("b.txt"))
            .unwrap()
            .is_symlink()
    );
}

#[tokio::test]
async fn save_document_never_writes_through_a_link_swapped_in_while_writing() {
    let session = Session::start().await;
    let outside = scratch_dir("outside");
    let target = outside.join("from-buffer.txt");
    session.write_file("b.txt", "two\n");
    session
        .exec("vim.cmd.edit('b.txt'); vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'unsaved' })")
        .await;
    session.exec(&swap_while_writing(&target)).await;
    let mut claude = session.connect_claude().await;
    let saved = result_json(
        &claude
            .call_tool("saveDocument", json!({"filePath": "b.txt"}))
            .await,
    );
    assert_eq!(saved["saved"], false, "{saved}");
    assert!(
        saved["message"].as_str().unwrap().contains("symbolic link"),
        "{saved}"
    );
    assert!(!target.exists(), "nothing written outside");
}
