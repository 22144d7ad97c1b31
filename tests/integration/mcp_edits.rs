//! The MCP tools that change files, driven by the official npm SDK
//! (`tests/mcp/client.mjs`) against real headless Neovim, with the person
//! deciding in the diff tab as they would (`:PiIde accept`, `:w`, keys):
//! accepted, declined (`isError`), edited before accepting, new files,
//! edits without approval (undoable), progress while the person thinks,
//! cancelled calls, and paths outside the root. The language-server edits
//! are in [`crate::mcp_edits_lsp`].

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;
use tokio::sync::mpsc;

use crate::common::{Session, repo_root};
use crate::mcp_http::endpoint;
use crate::pi_extension::require_node_deps;

/// The SDK client making its calls in the background, while the test
/// plays the person.
pub(crate) struct Running {
    child: Child,
    /// `progress …` lines the client prints as notifications arrive.
    progress: mpsc::UnboundedReceiver<String>,
}

pub(crate) fn start_client(
    session_url: &(String, String),
    calls: Value,
    progress: bool,
) -> Running {
    start_client_with(session_url, calls, json!({"progress": progress}))
}

/// `options` as client.mjs takes them: `progress`, `timeout`.
pub(crate) fn start_client_with(
    session_url: &(String, String),
    calls: Value,
    options: Value,
) -> Running {
    require_node_deps();
    let (url, token) = session_url;
    let options = options.to_string();
    let mut child = tokio::process::Command::new("node")
        .arg(repo_root().join("tests/mcp/client.mjs"))
        .args([url.as_str(), token.as_str(), &calls.to_string(), &options])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run node");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let _ = tx.send(line);
        }
    });
    Running {
        child,
        progress: rx,
    }
}

impl Running {
    /// Waits for `n` diffs, failing at once with the client's report when
    /// its call ended without opening them.
    pub(crate) async fn diffs(&mut self, session: &Session, n: usize) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let list = session.lua("return require('pi-ide.diff').list()").await;
            let list = list.as_array().cloned().unwrap_or_default();
            if list.len() == n && list.iter().all(|d| d["loading"] == false) {
                return list;
            }
            if let Ok(Some(_)) = self.child.try_wait() {
                let out = self.child.stdout.take().unwrap();
                let mut text = String::new();
                tokio::io::AsyncReadExt::read_to_string(&mut BufReader::new(out), &mut text)
                    .await
                    .unwrap();
                let report: Value = serde_json::from_str(&text).unwrap_or(Value::String(text));
                panic!(
                    "the call ended before {n} diffs opened: {}",
                    report["calls"]
                );
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {n} diffs: {list:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits for the client to print `wanted` on stderr.
    pub(crate) async fn said(&mut self, wanted: &str) {
        let heard = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = self.progress.recv().await {
                if line == wanted {
                    return true;
                }
            }
            false
        })
        .await;
        assert_eq!(heard, Ok(true), "the client never said {wanted:?}");
    }

    /// The client's report once all its calls returned.
    pub(crate) async fn report(self) -> Value {
        let out = tokio::time::timeout(Duration::from_secs(60), self.child.wait_with_output())
            .await
            .expect("the client finished")
            .expect("node ran");
        assert!(
            out.status.success(),
            "client.mjs failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout)
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
    }

    /// The first call's result.
    pub(crate) async fn result(self) -> Value {
        self.report().await["calls"][0].clone()
    }
}

/// Runs `calls` to completion (none may wait for the person).
pub(crate) async fn call_now(endpoint: &(String, String), calls: Value) -> Vec<Value> {
    let report = start_client(endpoint, calls, false).report().await;
    report["calls"].as_array().unwrap().clone()
}

pub(crate) fn text_of(call: &Value) -> String {
    call["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {call}"))
        .to_owned()
}

pub(crate) fn ok(call: &Value) -> String {
    assert_eq!(call["isError"], false, "{call}");
    text_of(call)
}

pub(crate) fn refused(call: &Value) -> String {
    assert_eq!(call["isError"], true, "{call}");
    text_of(call)
}

pub(crate) fn read(session: &Session, name: &str) -> String {
    std::fs::read_to_string(session.work_dir.join(name)).unwrap()
}

/// Runs an Ex command as the person types it.
pub(crate) async fn command(session: &Session, ex: &str) {
    session.exec(&format!("vim.cmd({ex:?})")).await;
}

#[tokio::test]
async fn a_replacement_waits_for_the_person_and_is_saved_when_accepted() {
    let session = Session::start().await;
    let endpoint = endpoint(&session).await;
    session.write_file("a.py", "x = 1\ny = 2\n");
    // Open with an unsaved edit: the edit is computed from the buffer.
    session
        .exec("vim.cmd.edit('a.py'); vim.api.nvim_buf_set_lines(0, 0, 1, false, { 'x = 10' })")
        .await;
    let calls = json!([{"name": "replace_text_in_file",
        "arguments": {"pathInProject": "a.py", "oldText": "y = 2", "newText": "y = 20"}}]);
    let mut client = start_client(&endpoint, calls, false);
    let diffs = client.diffs(&session, 1).await;
    assert_eq!(diffs[0]["client"], "mcp", "{diffs:?}");
    let bars = session
        .lua(
            "local l = require('pi-ide.diff').list()[1]
              local left = vim.fn.win_findbuf(l.original_buf)[1]
              local right = vim.fn.win_findbuf(l.proposed_buf)[1]
              return { vim.wo[left].winbar, vim.wo[right].winbar,
                       vim.api.nvim_buf_get_lines(l.original_buf, 0, -1, false) }",
        )
        .await;
    assert!(
        bars[0]
            .as_str()
            .unwrap()
            .contains("your buffer, unsaved edits included: accepting saves them"),
        "the left side is the buffer, and accepting saves its edits: {bars}"
    );
    assert!(
        bars[1]
            .as_str()
            .unwrap()
            .contains("mcp: replace_text_in_file"),
        "{bars}"
    );
    assert_eq!(bars[2], json!(["x = 10", "y = 2"]), "unsaved edits shown");
    command(&session, "PiIde status").await;
    let told = session.notifications().await.join("\n");
    assert!(told.contains("from mcp waiting for you"), "{told}");
    assert_eq!(
        read(&session, "a.py"),
        "x = 1\ny = 2\n",
        "nothing before approval"
    );

    command(&session, "PiIde accept").await;
    let result = client.result().await;
    let text = ok(&result);
    assert!(text.contains("applied and saved: a.py"), "{text}");
    assert_eq!(result["structuredContent"]["applied"], json!(["a.py"]));
    assert_eq!(
        read(&session, "a.py"),
        "x = 10\ny = 20\n",
        "saved as accepted"
    );
    let buffer = session
        .lua("local b = vim.fn.bufnr('a.py') return { vim.bo[b].modified, vim.api.nvim_buf_get_lines(b, 0, -1, false) }")
        .await;
    assert_eq!(buffer, json!([false, ["x = 10", "y = 20"]]));
}

#[tokio::test]
async fn a_declined_edit_is_an_error_and_an_edited_one_saves_the_persons_text() {
    let session = Session::start().await;
    let endpoint = endpoint(&session).await;
    session.write_file("b.txt", "alpha\nbeta\n");
    let replace = json!([{"name": "replace_text_in_file",
        "arguments": {"pathInProject": "b.txt", "oldText": "BETA", "newText": "gamma", "caseSensitive": false}}]);

    let mut client = start_client(&endpoint, replace.clone(), false);
    client.diffs(&session, 1).await;
    command(&session, "PiIde reject").await;
    let declined = refused(&client.result().await);
    assert!(
        declined.contains("declined the edit of b.txt"),
        "{declined}"
    );
    assert_eq!(read(&session, "b.txt"), "alpha\nbeta\n");

    let mut client = start_client(&endpoint, replace, false);
    client.diffs(&session, 1).await;
    // The person edits the proposal (the cursor is in it), then `:w`.
    session.input("ggA!<Esc>:w<CR>").await;
    let text = ok(&client.result().await);
    assert!(text.contains("read these files again: b.txt"), "{text}");
    assert_eq!(
        read(&session, "b.txt"),
        "alpha!\ngamma\n",
        "the person's text"
    );

    let calls = call_now(
        &endpoint,
        json!([
            {"name": "replace_text_in_file", "arguments": {"pathInProject": "b.txt", "oldText": "GAMMA", "newText": "x"}},
            {"name": "replace_text_in_file", "arguments": {"pathInProject": "missing.txt", "oldText": "a", "newText": "b"}},
            {"name": "replace_text_in_file", "arguments": {"pathInProject": "../outside.txt", "oldText": "a", "newText": "b"}},
            {"name": "create_new_file", "arguments": {"pathInProject": "/tmp/pi-ide-outside.txt", "text": "x"}},
            {"name": "create_new_file", "arguments": {"pathInProject": "b.txt", "text": "x"}},
        ]),
    )
    .await;
    let not_found = refused(&calls[0]);
    assert!(
        not_found.contains("oldText was not found in b.txt")
            && not_found.contains("caseSensitive=false"),
        "{not_found}"
    );
    assert!(refused(&calls[1]).contains("does not exist"));
    assert!(refused(&calls[2]).contains("outside the project root"));
    assert!(refused(&calls[3]).contains("outside the project root"));
    assert!(!std::path::Path::new("/tmp/pi-ide-outside.txt").exists());
    assert!(refused(&calls[4]).contains("already exists"));
    assert!(
        session.wait_diffs(0).await.is_empty(),
        "no diff for refusals"
    );
}

#[tokio::test]
async fn a_new_file_and_its_directories_appear_only_after_approval() {
    let session = Session::start().await;
    let endpoint = endpoint(&session).await;
    let calls = json!([{"name": "create_new_file",
        "arguments": {"pathInProject": "pkg/sub/new.py", "text": "print('hi')\n"}}]);
    let mut client = start_client(&endpoint, calls, false);
    client.diffs(&session, 1).await;
    assert!(!session.work_dir.join("pkg").exists(), "no directory yet");
    command(&session, "PiIde accept").await;
    assert!(ok(&client.result().await).contains("pkg/sub/new.py"));
    assert_eq!(read(&session, "pkg/sub/new.py"), "print('hi')\n");
}

#[tokio::test]
async fn an_accepted_edit_of_a_file_nobody_has_open_never_crosses_into_neovim() {
    let session = Session::start().await;
    let endpoint = endpoint(&session).await;
    let big: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    session.write_file("big.txt", &big);
    // What Lua is handed to apply: Neovim decodes every line it is sent
    // on its main loop, so the text of a file with no buffer is not sent.
    session
        .exec(
            "local apply = require('pi-ide.mcp.apply')
             local original = apply.apply
             _G.handed = {}
             apply.apply = function(edit)
               table.insert(_G.handed, { probe = edit.probe, lines = #edit.lines + #edit.expected.lines })
               return original(edit)
             end",
        )
        .await;
    let calls = json!([{"name": "replace_text_in_file",
        "arguments": {"pathInProject": "big.txt", "oldText": "line 19999", "newText": "last"}}]);
    let mut client = start_client(&endpoint, calls, false);
    client.diffs(&session, 1).await;
    command(&session, "PiIde accept").await;
    assert!(ok(&client.result().await).contains("big.txt"));
    assert_eq!(
        read(&session, "big.txt"),
        big.replace("line 19999\n", "last\n")
    );
    assert_eq!(
        session.lua("return _G.handed").await,
        json!([{"probe": true, "lines": 0}])
    );
}

#[tokio::test]
async fn without_approval_edits_go_into_buffers_undoably() {
    let session = Session::start_with("{ mcp = { approve_edits = false } }").await;
    let endpoint = endpoint(&session).await;
    session.write_file("c.txt", "one\ntwo\n");
    let calls = call_now(
        &endpoint,
        json!([{"name": "replace_text_in_file",
            "arguments": {"pathInProject": "c.txt", "oldText": "two", "newText": "TWO"}}]),
    )
    .await;
    let text = ok(&calls[0]);
    assert!(
        text.contains("not saved") && text.contains("c.txt"),
        "{text}"
    );
    assert_eq!(read(&session, "c.txt"), "one\ntwo\n", "not written");
    let buffer = session
        .lua(
            "local b = vim.fn.bufnr('c.txt')
              local before = vim.api.nvim_buf_get_lines(b, 0, -1, false)
              local listed, modified = vim.bo[b].buflisted, vim.bo[b].modified
              vim.api.nvim_buf_call(b, function() vim.cmd('silent undo') end)
              return { before, listed, modified, vim.api.nvim_buf_get_lines(b, 0, -1, false) }",
        )
        .await;
    assert_eq!(
        buffer,
        json!([["one", "TWO"], true, true, ["one", "two"]]),
        "loaded, listed, modified, and one undo step takes it back"
    );
    assert!(session.wait_diffs(0).await.is_empty());
}

#[tokio::test]
async fn a_waiting_call_sends_progress_until_the_person_decides() {
    let session = Session::start().await;
    let endpoint = endpoint(&session).await;
    session.write_file("p.txt", "wait\n");
    let calls = json!([{"name": "replace_text_in_file",
        "arguments": {"pathInProject": "p.txt", "oldText": "wait", "newText": "done"}}]);
    let mut client = start_client(&endpoint, calls, true);
    client.diffs(&session, 1).await;
    let line = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match client.progress.recv().await {
                Some(line) if line.starts_with("progress ") => return line,
                Some(_) => {}
                None => panic!("the client ended without progress"),
            }
        }
    })
    .await
    .expect("a progress notification while the person has not decided");
    assert!(
        line.contains("for the person to accept or reject"),
        "{line}"
    );
    command(&session, "PiIde accept").await;
    let report = client.report().await;
    ok(&report["calls"][0]);
    assert!(!report["progress"][0].as_array().unwrap().is_empty());
    assert_eq!(read(&session, "p.txt"), "done\n");
}

#[tokio::test]
async fn an_edit_is_withdrawn_when_the_agent_gives_up_or_the_file_changed_meanwhile() {
    let session = Session::start().await;
    let endpoint = endpoint(&session).await;
    session.write_file("w.txt", "keep\n");
    let replace = json!([{"name": "replace_text_in_file",
        "arguments": {"pathInProject": "w.txt", "oldText": "keep", "newText": "lose"}}]);

    // The SDK times the call out and cancels it: the diff goes away.
    let mut client = start_client_with(&endpoint, replace.clone(), json!({"timeout": 2000}));
    client.diffs(&session, 1).await;
    let gave_up = client.result().await;
    assert!(
        gave_up["error"]
            .as_str()
            .unwrap_or_default()
            .contains("timed out"),
        "{gave_up}"
    );
    session.wait_diffs(0).await;
    let told = session.notifications().await.join("\n");
    assert_eq!(read(&session, "w.txt"), "keep\n", "{told}");

    // The person edits the file's buffer while the proposal waits.
    session.exec("vim.cmd.edit('w.txt')").await;
    let mut client = start_client(&endpoint, replace, false);
    client.diffs(&session, 1).await;
    session
        .exec("vim.api.nvim_buf_set_lines(vim.fn.bufnr('w.txt'), 0, -1, false, { 'mine' })")
        .await;
    command(&session, "PiIde accept").await;
    let text = refused(&client.result().await);
    assert!(text.contains("changed while the edit waited"), "{text}");
    let buffer = session
        .lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr('w.txt'), 0, -1, false)")
        .await;
    assert_eq!(buffer, json!(["mine"]), "the person's text stays");
    assert_eq!(read(&session, "w.txt"), "keep\n");
}

#[tokio::test]
async fn an_accepted_edit_never_overwrites_a_change_made_on_disk_meanwhile() {
    let session = Session::start().await;
    let endpoint = endpoint(&session).await;
    // An unmodified buffer ('autoread' takes the disk's text), then one
    // with unsaved edits (the person is told).
    for (unsaved, buffer_after) in [
        (None, json!(["x = 1", "y = 2", "z = 3 # from elsewhere"])),
        (Some("x = 10"), json!(["x = 10", "y = 2"])),
    ] {
        session.write_file("a.py", "x = 1\ny = 2\n");
        session
            .exec("vim.cmd('silent! %bwipeout!') vim.cmd.edit('a.py')")
            .await;
        if let Some(line) = unsaved {
            session
                .exec(&format!(
                    "vim.api.nvim_buf_set_lines(0, 0, 1, false, {{ {line:?} }})"
                ))
                .await;
        }
        let calls = json!([{"name": "replace_text_in_file",
            "arguments": {"pathInProject": "a.py", "oldText": "y = 2", "newText": "y = 20"}}]);
        let mut client = start_client(&endpoint, calls, false);
        client.diffs(&session, 1).await;

        // Another program writes the file while the person reviews.
        write_elsewhere(&session, "a.py", "x = 1\ny = 2\nz = 3 # from elsewhere\n");

        command(&session, "PiIde accept").await;
        let message = refused(&client.result().await);
        assert!(message.contains("changed"), "{message}");
        assert_eq!(
            read(&session, "a.py"),
            "x = 1\ny = 2\nz = 3 # from elsewhere\n",
            "the change on disk is kept ({unsaved:?})"
        );
        let buffer = session
            .lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr('a.py'), 0, -1, false)")
            .await;
        assert_eq!(buffer, buffer_after, "the edit is not in the buffer");
        if unsaved.is_some() {
            let told = session.notifications().await.join("\n");
            assert!(told.contains("`:e!` loads it"), "{told}");
        }
    }
}

/// Writes `text` to `name` with a modification time Neovim cannot miss.
pub(crate) fn write_elsewhere(session: &Session, name: &str, text: &str) {
    let path = session.work_dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(std::time::SystemTime::now() + Duration::from_secs(5))
        .unwrap();
}

#[tokio::test]
async fn tools_read_a_hidden_buffer_as_its_file_is_now() {
    let session = Session::start().await;
    let endpoint = endpoint(&session).await;
    session.write_file("b.py", "old = 1\n");
    // Loaded by a tool, shown in no window: Neovim itself never checks it.
    session
        .exec("local b = vim.fn.bufadd('b.py') vim.fn.bufload(b)")
        .await;
    write_elsewhere(&session, "b.py", "new = 2\n");
    let read_text =
        json!([{"name": "get_file_text_by_path", "arguments": {"pathInProject": "b.py"}}]);
    let calls = call_now(&endpoint, read_text.clone()).await;
    assert_eq!(
        calls[0]["structuredContent"]["text"], "new = 2",
        "{calls:?}"
    );

    // With unsaved edits the buffer is what the person sees; an edit is
    // refused until the person settles the conflict.
    session
        .exec("vim.api.nvim_buf_set_lines(vim.fn.bufnr('b.py'), 0, -1, false, { 'mine = 3' })")
        .await;
    write_elsewhere(&session, "b.py", "theirs = 4\n");
    let calls = call_now(
        &endpoint,
        json!([
            read_text[0],
            {"name": "replace_text_in_file", "arguments": {"pathInProject": "b.py", "oldText": "mine", "newText": "ours"}},
        ]),
    )
    .await;
    assert_eq!(calls[0]["structuredContent"]["text"], "mine = 3");
    assert_eq!(calls[0]["structuredContent"]["diskChanged"], true);
    let message = refused(&calls[1]);
    assert!(message.contains("changed on disk as well"), "{message}");
    assert_eq!(read(&session, "b.py"), "theirs = 4\n");
}
