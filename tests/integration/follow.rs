//! Option `watch_files`: buffers follow their files when another process
//! changes them, with no key pressed and no focus event.

use serde_json::{Value, json};

use crate::common::{Session, eventually};

/// Writes `text` into `path` until `done` holds: the watch of a buffer
/// loaded a moment ago may not be in place yet, and a later write is seen.
async fn write_until<F, Fut>(path: &std::path::Path, text: &str, what: &str, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let mut written = None;
    eventually(what, || {
        let now = tokio::time::Instant::now();
        if written
            .is_none_or(|at: tokio::time::Instant| now - at > std::time::Duration::from_millis(500))
        {
            std::fs::write(path, text).unwrap();
            written = Some(now);
        }
        let check = done();
        async move { check.await.then_some(()) }
    })
    .await;
}

async fn lines(session: &Session, buf: &Value) -> Value {
    session
        .lua_with(
            "return vim.api.nvim_buf_get_lines(..., 0, -1, false)",
            vec![buf.clone()],
        )
        .await
}

#[tokio::test]
async fn a_file_rewritten_by_another_process_reloads_by_itself_as_one_undo_step() {
    let session = Session::start().await;
    session.lockfile().await;
    let text: String = (1..=40).map(|n| format!("line {n}\n")).collect();
    let path = session.write_file("follow.txt", &text);
    let buf = session
        .lua(&format!(
            "vim.cmd.edit('{}')
             vim.api.nvim_win_set_cursor(0, {{ 30, 3 }})
             _G.mark = vim.api.nvim_buf_set_extmark(0, vim.api.nvim_create_namespace('t'), 34, 0, {{}})
             return vim.api.nvim_get_current_buf()",
            path.display()
        ))
        .await;
    // Two lines arrive above the cursor, one line changes below it.
    let new_text = format!(
        "new 1\nnew 2\n{}",
        text.replace("line 38\n", "line 38 changed\n")
    );
    write_until(
        &path,
        &new_text,
        "the buffer to follow the file",
        || async { lines(&session, &buf).await[0] == "new 1" },
    )
    .await;
    let state = session
        .lua(
            "local ns = vim.api.nvim_create_namespace('t')
             return { modified = vim.bo.modified, cursor = vim.api.nvim_win_get_cursor(0),
                      line = vim.api.nvim_get_current_line(),
                      mark = vim.api.nvim_buf_get_extmark_by_id(0, ns, _G.mark, {})[1],
                      changed = vim.api.nvim_buf_get_lines(0, 39, 40, false)[1] }",
        )
        .await;
    assert_eq!(
        state,
        json!({"modified": false, "cursor": [32, 3], "line": "line 30", "mark": 36, "changed": "line 38 changed"}),
        "the cursor and marks stay with their text"
    );
    assert!(session.notifications().await.is_empty());
    session.input("u").await;
    eventually("`u` to bring the old text back", || async {
        let now = lines(&session, &buf).await;
        let old: Vec<String> = text.lines().map(str::to_owned).collect();
        (now == json!(old)).then_some(())
    })
    .await;
    assert_eq!(session.lua("return vim.bo.modified").await, true);
    // Neovim's own check finds nothing to ask about afterwards.
    session.input("<C-r>").await;
    eventually("redo", || async {
        (lines(&session, &buf).await[0] == "new 1").then_some(())
    })
    .await;
    let messages = session
        .lua("vim.cmd('checktime'); return vim.fn.execute('messages')")
        .await;
    assert!(!messages.as_str().unwrap().contains("W1"), "{messages}");
}

#[tokio::test]
async fn unsaved_edits_are_kept_with_one_notice_and_no_prompt() {
    let session = Session::start().await;
    session.lockfile().await;
    let path = session.write_file("mine.txt", "theirs 1\n");
    session
        .exec(&format!(
            "vim.cmd.edit('{}'); vim.api.nvim_buf_set_lines(0, 0, -1, false, {{ 'my edit' }})",
            path.display()
        ))
        .await;
    write_until(&path, "agent 1\n", "the notice", || async {
        !session.notifications().await.is_empty()
    })
    .await;
    std::fs::write(&path, "agent 2\n").unwrap();
    // Neovim's own check (focus, :checktime) would ask W12; it must not.
    let checked = tokio::time::timeout(
        crate::common::DEADLINE,
        session.lua("vim.cmd('checktime'); return vim.fn.execute('messages')"),
    )
    .await
    .expect("no prompt waits for an answer");
    assert!(!checked.as_str().unwrap().contains("W1"), "{checked}");
    let told = session.notifications().await;
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0].contains("mine.txt changed on disk")
            && told[0].contains("unsaved changes are kept"),
        "{told:?}"
    );
    assert_eq!(
        session
            .lua("return { vim.api.nvim_buf_get_lines(0, 0, -1, false), vim.bo.modified }")
            .await,
        json!([["my edit"], true])
    );
    // :PiIde disk shows the file beside the buffer, both in diff mode.
    session.exec("vim.cmd('PiIde disk')").await;
    let shown = session
        .lua(
            "local wins = vim.api.nvim_tabpage_list_wins(0)
             return vim.tbl_map(function(w)
               local b = vim.api.nvim_win_get_buf(w)
               return { lines = vim.api.nvim_buf_get_lines(b, 0, -1, false), diff = vim.wo[w].diff,
                        modifiable = vim.bo[b].modifiable }
             end, wins)",
        )
        .await;
    assert_eq!(
        shown,
        json!([
            {"lines": ["agent 2"], "diff": true, "modifiable": false},
            {"lines": ["my edit"], "diff": true, "modifiable": true},
        ])
    );
}

#[tokio::test]
async fn a_deleted_file_keeps_its_buffer_and_the_person_is_told() {
    let session = Session::start().await;
    session.lockfile().await;
    let path = session.write_file("gone.txt", "still here\n");
    session
        .exec(&format!("vim.cmd.edit('{}')", path.display()))
        .await;
    // Rewritten first, so the watch is known to be in place.
    write_until(&path, "changed\n", "the reload", || async {
        session.lua("return vim.api.nvim_get_current_line()").await == "changed"
    })
    .await;
    std::fs::remove_file(&path).unwrap();
    let told = eventually("the person to be told", || async {
        let told = session.notifications().await;
        (!told.is_empty()).then_some(told)
    })
    .await;
    assert!(
        told[0].contains("gone.txt was deleted or renamed"),
        "{told:?}"
    );
    assert_eq!(
        session
            .lua("return { vim.api.nvim_get_current_line(), vim.api.nvim_buf_is_loaded(0) }")
            .await,
        json!(["changed", true])
    );
}

#[tokio::test]
async fn a_burst_of_2000_files_reloads_the_500_loaded_buffers_in_a_few_pushes() {
    let session = Session::start().await;
    session.lockfile().await;
    let mut paths = vec![];
    for dir in 0..4 {
        std::fs::create_dir_all(session.work_dir.join(format!("d{dir}"))).unwrap();
        for file in 0..500 {
            paths.push(session.write_file(&format!("d{dir}/f{file}.txt"), "old\n"));
        }
    }
    std::fs::create_dir_all(session.work_dir.join(".git")).unwrap();
    let git = session.write_file(".git/index", "git\n");
    // Every fourth file is loaded: 500 buffers in 4 directories, and one
    // under .git/.
    let loaded: Vec<String> = paths
        .iter()
        .step_by(4)
        .chain([&git])
        .map(|p| p.display().to_string())
        .collect();
    session
        .lua_with(
            "for _, name in ipairs(...) do vim.fn.bufload(vim.fn.bufadd(name)) end
             _G.pushes, _G.names = 0, 0
             local calls = require('pi-ide.seam').calls
             local files_changed = calls.files_changed
             calls.files_changed = function(changed, gone)
               _G.pushes, _G.names = _G.pushes + 1, _G.names + #changed + #gone
               return files_changed(changed, gone)
             end",
            vec![json!(loaded)],
        )
        .await;
    let first = &paths[0];
    let first_buf = session
        .lua(&format!("return vim.fn.bufnr('{}')", first.display()))
        .await;
    write_until(first, "ready\n", "the watch to be in place", || async {
        lines(&session, &first_buf).await == json!(["ready"])
    })
    .await;
    // Buffer numbers looked up once: `bufnr(name)` matches the name as a
    // pattern against every buffer, and 500 of those per poll kept Neovim
    // too busy answering the poll to reload anything.
    let buffers = session
        .lua_with(
            "return vim.tbl_map(function(name) return vim.fn.bufnr(name) end, ...)",
            vec![json!(loaded[..500])],
        )
        .await;
    session.exec("_G.pushes, _G.names = 0, 0").await;
    for path in paths.iter().chain([&git]) {
        std::fs::write(path, "new\n").unwrap();
    }
    let count_new = "local n = 0
         for _, buf in ipairs(...) do
           if vim.api.nvim_buf_get_lines(buf, 0, -1, false)[1] == 'new' then n = n + 1 end
         end
         return n";
    eventually("the 500 buffers to reload", || async {
        let n = session.lua_with(count_new, vec![buffers.clone()]).await;
        (n == 500).then_some(())
    })
    .await;
    let pushes = session.lua("return { _G.pushes, _G.names }").await;
    assert!(
        pushes[0].as_u64().unwrap() <= 20,
        "the burst came in {pushes} pushes"
    );
    assert_eq!(pushes[1], 500, "each loaded file named once, .git/ never");
    assert_eq!(
        session
            .lua(&format!(
                "return vim.api.nvim_buf_get_lines(vim.fn.bufnr('{}'), 0, -1, false)",
                git.display()
            ))
            .await,
        json!(["git"])
    );
    assert!(session.notifications().await.is_empty());
}
