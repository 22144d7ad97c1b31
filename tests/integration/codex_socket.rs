//! Codex CLI's IDE socket against the real host, spoken as Codex 0.169
//! speaks it (length-prefixed JSON frames, `ide-context` per prompt), and
//! `pi-ide codex-hook` run as Codex runs it (hook input on stdin, the
//! answer on stdout). The real Codex CLI against the same is in
//! `real_codex.rs`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use crate::common::{Session, eventually, fresh_dir, host_binary};

/// A short temporary directory (a socket's path must fit in 108 bytes),
/// removed at the end.
pub struct ShortTmp(pub PathBuf);

impl ShortTmp {
    pub fn new() -> ShortTmp {
        let name = uuid::Uuid::new_v4().simple().to_string();
        let dir = std::env::temp_dir().join(format!("cx{}", &name[..8]));
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        ShortTmp(dir)
    }
}

impl Drop for ShortTmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Neovim in `work` serving Codex's socket under `tmp`; the socket's
/// places once the host reports them.
pub async fn serving_codex(
    work: PathBuf,
    tmp: &ShortTmp,
    extra: &[(&str, &Path)],
) -> (Session, Value) {
    let mut env: Vec<(&str, &Path)> = vec![("TMPDIR", &tmp.0)];
    env.extend_from_slice(extra);
    let session = Session::start_in(work, &env, "{ codex = true }").await;
    let codex = eventually("the host serving Codex's socket", || async {
        let codex = session.lua("return require('pi-ide').status().codex").await;
        codex.is_object().then_some(codex)
    })
    .await;
    (session, codex)
}

async fn send(stream: &mut UnixStream, message: &Value) {
    let bytes = message.to_string().into_bytes();
    stream
        .write_all(&(bytes.len() as u32).to_le_bytes())
        .await
        .unwrap();
    stream.write_all(&bytes).await.unwrap();
}

/// The next frame, `None` at the end of the stream.
async fn receive(stream: &mut UnixStream) -> Option<Value> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).await.ok()?;
    let mut bytes = vec![0; u32::from_le_bytes(len) as usize];
    stream.read_exact(&mut bytes).await.ok()?;
    Some(serde_json::from_slice(&bytes).unwrap())
}

fn request(id: &str, method: &str, params: Value) -> Value {
    json!({"type": "request", "requestId": id, "sourceClientId": "codex-tui",
           "version": 0, "method": method, "params": params})
}

/// One `ide-context` on a connection of its own, as Codex asks (it gives
/// up after 6 s; this waits as long as any test step).
async fn ide_context(socket: &str, workspace: &Path) -> Value {
    let ask = async {
        let mut stream = UnixStream::connect(socket).await.unwrap();
        send(
            &mut stream,
            &request("r", "ide-context", json!({"workspaceRoot": workspace})),
        )
        .await;
        receive(&mut stream).await.expect("an answer")
    };
    tokio::time::timeout(crate::common::DEADLINE, ask)
        .await
        .expect("an answer to ide-context in time")
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn codex_is_told_the_file_and_selection_from_what_the_host_keeps_even_while_neovim_is_busy() {
    let tmp = ShortTmp::new();
    let work = fresh_dir("codex-socket");
    std::fs::write(work.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(work.join("b.txt"), "bee\n").unwrap();
    let (session, codex) = serving_codex(work.clone(), &tmp, &[]).await;
    let private = codex["socket"].as_str().unwrap().to_owned();
    let shared = codex["shared"].as_str().expect("the shared place was free");
    for socket in [private.as_str(), shared] {
        assert_eq!(mode(Path::new(socket)), 0o600, "{socket}");
        assert_eq!(mode(Path::new(socket).parent().unwrap()), 0o700, "{socket}");
    }
    assert_eq!(
        Path::new(shared),
        tmp.0
            .join(format!("codex-ipc/ipc-{}.sock", unsafe { libc::getuid() }))
    );
    session
        .exec(&format!("vim.cmd.edit('{}')", work.join("b.txt").display()))
        .await;
    eventually("b.txt to be the active file", || async {
        let answer = ide_context(&private, &work).await;
        (answer["result"]["ideContext"]["activeFile"]["path"] == "b.txt").then_some(())
    })
    .await;
    session
        .exec(&format!("vim.cmd.edit('{}')", work.join("a.txt").display()))
        .await;
    session.place_cursor(2, 0).await;
    session.input("V").await;
    let context = eventually("the selection in Codex's context", || async {
        let answer = ide_context(&private, &work).await;
        let file = &answer["result"]["ideContext"]["activeFile"];
        (file["activeSelectionContent"] == "two").then(|| answer["result"]["ideContext"].clone())
    })
    .await;
    let active = &context["activeFile"];
    assert_eq!(active["path"], "a.txt");
    assert_eq!(active["label"], "a.txt");
    assert_eq!(active["fsPath"], json!(work.join("a.txt")));
    assert_eq!(
        active["selection"],
        json!({"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 3}})
    );
    let tabs: Vec<&str> = context["openTabs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tab| tab["path"].as_str().unwrap())
        .collect();
    assert_eq!(tabs, ["a.txt", "b.txt"], "newest first");

    // Answered while Neovim cannot take a call: nothing is asked of it.
    // Neovim is held longer than the test waits for the answer, and then
    // let go whatever happens.
    let (blocked, release) = (tmp.0.join("blocked"), tmp.0.join("release"));
    let hold_ns = 4 * crate::common::DEADLINE.as_nanos();
    session
        .exec(&format!(
            "vim.defer_fn(function()
               io.open('{}', 'w'):close()
               local until_ns = vim.uv.hrtime() + {hold_ns}
               while not vim.uv.fs_stat('{}') and vim.uv.hrtime() < until_ns do
                 vim.uv.sleep(10)
               end
             end, 0)",
            blocked.display(),
            release.display()
        ))
        .await;
    eventually("Neovim to be busy", || async {
        blocked.exists().then_some(())
    })
    .await;
    let busy = ide_context(&private, &work).await;
    std::fs::write(&release, "").unwrap();
    assert_eq!(
        busy["result"]["ideContext"]["activeFile"]["activeSelectionContent"],
        "two"
    );
    session.lua("return 1").await;

    // A workspace that is not this project's, or no project at all.
    let elsewhere = fresh_dir("codex-elsewhere");
    for workspace in [elsewhere.as_path(), Path::new("/")] {
        let answer = ide_context(shared, workspace).await;
        assert_eq!(answer["resultType"], "error", "{workspace:?}");
        assert_eq!(answer["error"], "no-client-found");
    }
    let _ = std::fs::remove_dir_all(&elsewhere);
}

#[tokio::test]
async fn one_connection_skips_what_is_not_a_request_and_closes_on_a_frame_too_large() {
    let tmp = ShortTmp::new();
    let work = fresh_dir("codex-frames");
    let (_session, codex) = serving_codex(work.clone(), &tmp, &[]).await;
    let socket = codex["socket"].as_str().unwrap();
    let mut stream = UnixStream::connect(socket).await.unwrap();
    // Older Codex versions say hello first.
    send(
        &mut stream,
        &request("i", "initialize", json!({"clientType": "desktop"})),
    )
    .await;
    let hello = receive(&mut stream).await.unwrap();
    assert_eq!(hello["requestId"], "i");
    assert!(hello["result"]["clientId"].is_string(), "{hello}");
    send(
        &mut stream,
        &json!({"type": "broadcast", "method": "client-status-changed"}),
    )
    .await;
    stream.write_all(&5u32.to_le_bytes()).await.unwrap();
    stream.write_all(b"oops!").await.unwrap();
    send(
        &mut stream,
        &request("x", "thread-follower-start-turn", json!({})),
    )
    .await;
    let unknown = receive(&mut stream).await.unwrap();
    assert_eq!(
        unknown["requestId"], "x",
        "the broadcast and the junk had no answer"
    );
    assert_eq!(unknown["error"], "no-handler-for-request");
    // 17 MiB announced: over the cap, the connection goes.
    stream
        .write_all(&(17u32 << 20).to_le_bytes())
        .await
        .unwrap();
    assert_eq!(receive(&mut stream).await, None);
    // The next client is served.
    let again = ide_context(socket, &work).await;
    assert_eq!(again["resultType"], "success");
}

/// Adds `line` to the end of diff `tab`'s proposal, as the person would,
/// and accepts it.
pub async fn accept_with_line(session: &Session, tab: &str, line: &str) {
    let accepted = session
        .lua_with(
            "local tab, line = ...
             for _, d in ipairs(require('pi-ide.diff').list()) do
               if d.tab_name == tab then vim.api.nvim_buf_set_lines(d.proposed_buf, -1, -1, false, { line }) end
             end
             return require('pi-ide.diff').accept(tab)",
            vec![json!(tab), json!(line)],
        )
        .await;
    assert_eq!(accepted, true);
}

/// `pi-ide codex-hook` as Codex runs it: `input` on stdin, `TMPDIR` leading
/// to Neovim; its stdout.
async fn run_hook(tmpdir: &str, input: &Value) -> tokio::process::Child {
    let mut child = tokio::process::Command::new(host_binary())
        .arg("codex-hook")
        .env("TMPDIR", tmpdir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.to_string().as_bytes()).await.unwrap();
    drop(stdin);
    child
}

async fn hook_output(child: tokio::process::Child) -> String {
    let out = child.wait_with_output().await.unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn hook_input(work: &Path, patch: &str) -> Value {
    json!({"session_id": "s", "turn_id": "t", "cwd": work, "hook_event_name": "PreToolUse",
           "model": "stub", "permission_mode": "default", "tool_name": "apply_patch",
           "tool_input": {"command": patch}, "tool_use_id": "call_1"})
}

/// Waits for diff `n` (1-based) to open; its tab name.
async fn diff_opened(session: &Session, n: usize) -> String {
    let opened = eventually(&format!("diff {n}"), || async {
        let list = session.lua("return require('pi-ide.diff').list()").await;
        let list = list.as_array()?.clone();
        (list.len() == 1 && list[0]["loading"] == false).then(|| list[0].clone())
    })
    .await;
    assert_eq!(opened["client"], "codex", "{opened}");
    opened["tab_name"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn codex_hook_shows_the_patch_and_tells_codex_what_the_person_decided() {
    let tmp = ShortTmp::new();
    let work = fresh_dir("codex-hook-review");
    let a = work.join("a.txt");
    std::fs::write(&a, "one\ntwo\nthree\n").unwrap();
    let (session, codex) = serving_codex(work.clone(), &tmp, &[]).await;
    let tmpdir = codex["tmpdir"].as_str().unwrap().to_owned();
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@ one\n-two\n+TWO\n*** End Patch";

    // Rejected, saying why: Codex blocks it and its model reads why.
    let hook = run_hook(&tmpdir, &hook_input(&work, patch)).await;
    let tab = diff_opened(&session, 1).await;
    let proposal = session
        .lua_with(
            "for _, d in ipairs(require('pi-ide.diff').list()) do
               if d.tab_name == ... then return vim.api.nvim_buf_get_lines(d.proposed_buf, 0, -1, false) end
             end",
            vec![json!(tab)],
        )
        .await;
    assert_eq!(proposal, json!(["one", "TWO", "three"]));
    session
        .lua_with(
            "return require('pi-ide.diff').reject(..., 'keep it lower case')",
            vec![json!(tab)],
        )
        .await;
    let said: Value = serde_json::from_str(&hook_output(hook).await).unwrap();
    assert_eq!(
        said,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "The person rejected this patch in Neovim: keep it lower case"}})
    );

    // Accepted as proposed: nothing to say, Codex applies its own patch.
    let hook = run_hook(&tmpdir, &hook_input(&work, patch)).await;
    let tab = diff_opened(&session, 1).await;
    session
        .lua_with(
            "return require('pi-ide.diff').accept(...)",
            vec![json!(tab)],
        )
        .await;
    assert_eq!(hook_output(hook).await, "");

    // Accepted with the person's own line: Codex gets a patch of it.
    let hook = run_hook(&tmpdir, &hook_input(&work, patch)).await;
    let tab = diff_opened(&session, 1).await;
    accept_with_line(&session, &tab, "mine").await;
    let said: Value = serde_json::from_str(&hook_output(hook).await).unwrap();
    let output = &said["hookSpecificOutput"];
    assert_eq!(output["permissionDecision"], "allow", "{said}");
    assert_eq!(
        output["updatedInput"]["command"],
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n-two\n-three\n+one\n+TWO\n+three\n+mine\n*** End of File\n*** End Patch"
    );
    assert!(
        output["additionalContext"]
            .as_str()
            .unwrap()
            .contains("the person changed your change to a.txt"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(&a).unwrap(),
        "one\ntwo\nthree\n",
        "Codex writes, not Neovim"
    );

    // A patch that does not apply is blocked, naming why; nothing is shown.
    let stale = "*** Begin Patch\n*** Update File: a.txt\n-nowhere\n+x\n*** End Patch";
    let said: Value = serde_json::from_str(
        &hook_output(run_hook(&tmpdir, &hook_input(&work, stale)).await).await,
    )
    .unwrap();
    let reason = said["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("does not apply to a.txt"), "{reason}");
    // No Neovim where the hook looks: Codex goes on, and says so.
    let nowhere = fresh_dir("codex-hook-nowhere");
    let said: Value = serde_json::from_str(
        &hook_output(run_hook(nowhere.to_str().unwrap(), &hook_input(&work, patch)).await).await,
    )
    .unwrap();
    assert!(
        said["systemMessage"]
            .as_str()
            .unwrap()
            .contains("no Neovim to review this patch"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&nowhere);
}

#[tokio::test]
async fn codex_hook_denies_a_patch_neovim_could_not_review() {
    let tmp = ShortTmp::new();
    let work = fresh_dir("codex-hook-deny");
    std::fs::write(work.join("a.txt"), "one\n").unwrap();
    let (session, codex) = serving_codex(work.clone(), &tmp, &[]).await;
    let tmpdir = codex["tmpdir"].as_str().unwrap().to_owned();
    let reason = |said: &str| -> String {
        let said: Value = serde_json::from_str(said).unwrap();
        let output = &said["hookSpecificOutput"];
        assert_eq!(output["permissionDecision"], "deny", "{said}");
        output["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_owned()
    };

    // Larger than one frame to Neovim: never half sent, never let through.
    let huge = format!(
        "*** Begin Patch\n*** Add File: big.txt\n{}*** End Patch",
        "+0123456789abcdef\n".repeat(1 << 20)
    );
    let said = hook_output(run_hook(&tmpdir, &hook_input(&work, &huge)).await).await;
    assert!(reason(&said).contains("larger than the 16 MiB"), "{said}");

    // Neovim's roots cannot be read: not a question of another project.
    session
        .exec(
            "require('pi-ide.seam').calls.project_roots = function() error('roots unreadable') end",
        )
        .await;
    let patch = "*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n*** End Patch";
    let said = hook_output(run_hook(&tmpdir, &hook_input(&work, patch)).await).await;
    assert!(
        reason(&said).contains("cannot read Neovim's project roots"),
        "{said}"
    );
    assert!(!work.join("big.txt").exists());
    assert_eq!(
        session.lua("return #require('pi-ide.diff').list()").await,
        0
    );
}
