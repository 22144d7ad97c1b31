//! Inline suggestions end to end: Neovim asks the pi agent, renders ghost
//! text, accepts, cycles, cancels.

use serde_json::{Value, json};

use crate::common::{Agent, Session, eventually};

const SOURCE: &str = include_str!("../fixtures/outline/sample.rs");

/// Neovim (started with `opts`) editing a new file `name`, a pi agent connected.
async fn editing_file(name: &str, contents: &str, opts: &str) -> (Session, Agent) {
    let session = Session::start_with(opts).await;
    let path = session.write_file(name, contents);
    session
        .exec(&format!("vim.cmd.edit('{}')", path.display()))
        .await;
    let agent = session.connect().await;
    session.wait_clients(1).await;
    (session, agent)
}

/// Neovim editing sample.rs in insert mode at line 20, column 8, with a pi agent.
async fn editing() -> (Session, Agent) {
    let (session, agent) =
        editing_file("sample.rs", SOURCE, "{ suggestion = { debounce_ms = 30 } }").await;
    session
        .exec("vim.api.nvim_win_set_cursor(0, {20, 8})")
        .await;
    session.input("i").await;
    eventually("insert mode", || async {
        (session.lua("return vim.api.nvim_get_mode().mode").await == "i").then_some(())
    })
    .await;
    (session, agent)
}

async fn shown(session: &Session) -> Value {
    session
        .lua("return require('pi-ide.suggest').current()")
        .await
}

async fn wait_shown(session: &Session, text: &str) {
    eventually(&format!("ghost text {text:?}"), || async {
        (shown(session).await == text).then_some(())
    })
    .await;
}

async fn line(session: &Session, row: usize) -> Value {
    session
        .lua(&format!(
            "return vim.api.nvim_buf_get_lines(0, {row}, {}, false)[1]",
            row + 1
        ))
        .await
}

/// Triggers by hand and answers the request with `suggestions`.
async fn suggest(session: &Session, agent: &mut Agent, suggestions: &[&str]) -> Value {
    session.exec("require('pi-ide.suggest').trigger()").await;
    let request = agent.editor_request("getSuggestions").await;
    agent
        .reply(&request["id"], json!({ "suggestions": suggestions }))
        .await;
    wait_shown(session, suggestions[0]).await;
    request
}

#[tokio::test]
async fn the_request_carries_tree_sitter_context_and_the_answer_shows_as_ghost_text() {
    let (session, mut agent) = editing().await;
    let request = suggest(&session, &mut agent, &["println!(\"hi\");", "todo!()"]).await;
    let params = &request["params"];
    assert_eq!(
        params["filePath"],
        session.work_dir.join("sample.rs").to_str().unwrap()
    );
    assert_eq!(params["language"], "rust");
    assert_eq!(params["suggestionCount"], 3);
    assert_eq!(params["cursorInComment"], false);
    assert!(params.get("model").is_none());
    assert!(
        params["outline"]
            .as_str()
            .unwrap()
            .contains("18: impl Area for Shape\n19:   fn area(&self) -> f64"),
        "{params}"
    );
    assert_eq!(
        params["enclosingScope"],
        "18: impl Area for Shape\n19:   fn area(&self) -> f64"
    );
    let before = params["cursorBefore"].as_str().unwrap();
    let after = params["cursorAfter"].as_str().unwrap();
    assert!(
        before.ends_with("fn area(&self) -> f64 {\n        "),
        "{before:?}"
    );
    assert_eq!(before.lines().count(), 20);
    assert!(after.starts_with("match self {\n"), "{after:?}");
    assert_eq!(after.lines().count(), 11);
    let marks = session
        .lua("return vim.api.nvim_buf_get_extmarks(0, vim.api.nvim_create_namespace('pi-ide-suggest'), 0, -1, { details = true })")
        .await;
    assert_eq!(marks.as_array().unwrap().len(), 1, "{marks}");
    assert_eq!(marks[0][1], 19);
    assert_eq!(marks[0][2], 8);
    let chunks = &marks[0][3]["virt_text"];
    assert_eq!(chunks[0][0], "println!(\"hi\");");
    assert_eq!(chunks[1][0], "  [1/2]");
    assert_eq!(chunks[0][1], "PiIdeSuggestion");
}

#[tokio::test]
async fn tab_accepts_everything_as_one_undo_step() {
    let (session, mut agent) = editing().await;
    suggest(&session, &mut agent, &["let x = 1;\n        x"]).await;
    session.input("<Tab>").await;
    eventually("the accepted text", || async {
        (line(&session, 19).await == "        let x = 1;"
            && line(&session, 20).await == "        xmatch self {")
            .then_some(())
    })
    .await;
    assert_eq!(
        session.lua("return vim.api.nvim_win_get_cursor(0)").await,
        json!([21, 9])
    );
    assert_eq!(shown(&session).await, Value::Null);
    session.input("<Esc>u").await;
    eventually("one undo to remove it", || async {
        (line(&session, 19).await == "        match self {").then_some(())
    })
    .await;
}

#[tokio::test]
async fn word_and_line_accepts_take_part_of_the_suggestion() {
    let (session, mut agent) = editing().await;
    suggest(&session, &mut agent, &["alpha beta\n        gamma"]).await;
    session.input("<M-Right>").await;
    wait_shown(&session, " beta\n        gamma").await;
    assert_eq!(line(&session, 19).await, "        alphamatch self {");
    session.input("<M-C-Right>").await;
    wait_shown(&session, "        gamma").await;
    assert_eq!(line(&session, 19).await, "        alpha beta");
    assert_eq!(line(&session, 20).await, "match self {");
    assert_eq!(
        session.lua("return vim.api.nvim_win_get_cursor(0)").await,
        json!([21, 0])
    );
}

#[tokio::test]
async fn cycling_dismissing_and_typing_through() {
    let (session, mut agent) = editing().await;
    suggest(&session, &mut agent, &["one()", "two()", "three()"]).await;
    session.input("<M-]>").await;
    wait_shown(&session, "two()").await;
    session.input("<M-[><M-[>").await;
    wait_shown(&session, "three()").await;
    session.input("<C-]>").await;
    eventually("dismissed", || async {
        shown(&session).await.is_null().then_some(())
    })
    .await;
    suggest(&session, &mut agent, &["ready()", "reset()"]).await;
    session.input("rea").await;
    wait_shown(&session, "dy()").await;
    session.input("x").await;
    eventually("a mismatch dismisses", || async {
        shown(&session).await.is_null().then_some(())
    })
    .await;
}

#[tokio::test]
async fn tab_without_a_suggestion_is_a_plain_tab() {
    let (session, _agent) = editing().await;
    session.input("<Tab>").await;
    eventually("a tab character", || async {
        (line(&session, 19).await == "        \tmatch self {").then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_keystroke_cancels_the_request_and_its_late_answer_is_dropped() {
    let (session, mut agent) = editing().await;
    // Records every suggestion list the host hands to Lua.
    session
        .exec(
            "local seam = require('pi-ide.seam'); local deliver = seam.calls.suggestions
             _G.delivered = {}
             seam.calls.suggestions = function(token, list, err)
               table.insert(_G.delivered, list == vim.NIL and 'error' or list[1])
               return deliver(token, list, err)
             end",
        )
        .await;
    session.input("x").await;
    let first = agent.editor_request("getSuggestions").await;
    session.input("y").await;
    let cancel = agent.notification("request_cancelled", |_| true).await;
    assert_eq!(cancel["id"], first["id"]);
    agent
        .reply(&first["id"], json!({"suggestions": ["late"]}))
        .await;
    agent
        .reply_error(&first["id"], -32800, "Request was aborted.")
        .await;
    let second = agent.editor_request("getSuggestions").await;
    assert_ne!(second["id"], first["id"]);
    assert!(
        second["params"]["cursorBefore"]
            .as_str()
            .unwrap()
            .ends_with("xy")
    );
    agent
        .reply(&second["id"], json!({"suggestions": ["fresh"]}))
        .await;
    wait_shown(&session, "fresh").await;
    assert_eq!(
        session.lua("return _G.delivered").await,
        json!(["fresh"]),
        "the host drops the late answer: Lua never receives it"
    );
    let told = session.notifications().await;
    assert!(told.is_empty(), "cancellations are silent: {told:?}");
}

#[tokio::test]
async fn leaving_insert_mode_cancels() {
    let (session, mut agent) = editing().await;
    session.input("z").await;
    let request = agent.editor_request("getSuggestions").await;
    session.input("<Esc>").await;
    let cancel = agent.notification("request_cancelled", |_| true).await;
    assert_eq!(cancel["id"], request["id"]);
}

#[tokio::test]
async fn comments_and_other_filetypes_are_detected() {
    let (session, mut agent) = editing_file(
        "notes.lua",
        "local M = {}\n-- say hello\nfunction M.f()\nend\n",
        "{}",
    )
    .await;
    session.place_cursor(2, 8).await;
    session.exec("require('pi-ide.suggest').trigger()").await;
    let request = agent.editor_request("getSuggestions").await;
    assert_eq!(request["params"]["language"], "lua");
    assert_eq!(request["params"]["cursorInComment"], true);
    assert_eq!(request["params"]["outline"], "3: function M.f()");
}

#[tokio::test]
async fn the_model_picker_lists_pi_models_and_remembers_the_choice() {
    let (session, mut agent) = editing().await;
    session
        .exec("vim.ui.select = function(items, opts, choose) _G.picked = { items = items, prompt = opts.prompt, labels = vim.tbl_map(opts.format_item, items) }; choose(items[2]) end")
        .await;
    session.exec("vim.cmd('PiIde model')").await;
    let request = agent.editor_request("listSuggestionModels").await;
    let models = json!([
        {"provider": "openai", "id": "gpt-4o", "name": "GPT-4o", "model": "openai/gpt-4o"},
        {"provider": "deepseek", "id": "v4-flash", "name": "Flash", "model": "deepseek/v4-flash"},
    ]);
    agent
        .reply(
            &request["id"],
            json!({"currentModel": "openai/gpt-4o", "cliOverride": "x/y", "models": models}),
        )
        .await;
    let picked = eventually("the picker", || async {
        let picked = session.lua("return _G.picked").await;
        (!picked.is_null()).then_some(picked)
    })
    .await;
    assert_eq!(
        picked["labels"],
        json!(["● GPT-4o (openai/gpt-4o)", "  Flash (deepseek/v4-flash)"])
    );
    assert!(
        picked["prompt"].as_str().unwrap().contains("x/y"),
        "the CLI override is shown"
    );
    session.exec("require('pi-ide.suggest').trigger()").await;
    let request = agent.editor_request("getSuggestions").await;
    assert_eq!(request["params"]["model"], "deepseek/v4-flash");
    let stored =
        std::fs::read_to_string(session.state_dir.join("data/nvim/pi-ide/suggestion-model"))
            .unwrap();
    assert_eq!(stored, "deepseek/v4-flash");
}

#[tokio::test]
async fn claude_clients_never_get_suggestion_requests() {
    let session = Session::start().await;
    let path = session.write_file("only.rs", "fn main() {}\n");
    session
        .exec(&format!("vim.cmd.edit('{}')", path.display()))
        .await;
    let mut claude = session.connect_claude().await;
    session.wait_clients(1).await;
    session.exec("require('pi-ide.suggest').trigger()").await;
    let told = session.notifications().await;
    assert!(
        told.iter().any(|m| m.contains("no pi agent is connected")),
        "{told:?}"
    );
    let mut pi = session.connect().await;
    session.wait_clients(2).await;
    session.exec("require('pi-ide.suggest').trigger()").await;
    pi.editor_request("getSuggestions").await;
    claude.request("tools/list", json!({})).await;
    assert!(
        claude
            .backlog()
            .iter()
            .all(|m| m["method"] != "getSuggestions"),
        "{:?}",
        claude.backlog()
    );
}

#[tokio::test]
async fn filetypes_without_a_host_grammar_use_neovims_parser() {
    let (session, mut agent) = editing_file(
        "plugin.vim",
        "function! Greet(name)\n  echo a:name\nendfunction\n",
        "{}",
    )
    .await;
    session.place_cursor(2, 4).await;
    session.exec("require('pi-ide.suggest').trigger()").await;
    let request = agent.editor_request("getSuggestions").await;
    assert_eq!(request["params"]["language"], "vim");
    assert_eq!(request["params"]["outline"], "1: function! Greet(name)");
    assert_eq!(
        request["params"]["enclosingScope"],
        "1: function! Greet(name)"
    );
}

#[tokio::test]
async fn ghost_text_hides_behind_the_completion_menu_and_the_statusline_shows_requests() {
    let (session, mut agent) = editing().await;
    session.exec("require('pi-ide.suggest').trigger()").await;
    assert_eq!(
        session
            .lua("return require('pi-ide.suggest').status()")
            .await,
        "pi…"
    );
    let request = agent.editor_request("getSuggestions").await;
    agent
        .reply(&request["id"], json!({"suggestions": ["shown()"]}))
        .await;
    wait_shown(&session, "shown()").await;
    assert_eq!(
        session
            .lua("return require('pi-ide.suggest').status()")
            .await,
        ""
    );
    let marks = "return #vim.api.nvim_buf_get_extmarks(0, vim.api.nvim_create_namespace('pi-ide-suggest'), 0, -1, {})";
    session
        .exec("vim.o.completeopt = 'menuone,noinsert,noselect'")
        .await;
    session
        .input("<C-r>=complete(col('.'), ['alpha', 'beta'])[-1]<CR>")
        .await;
    eventually("the menu to hide the ghost text", || async {
        let hidden =
            session.lua(marks).await == 0 && session.lua("return vim.fn.pumvisible()").await == 1;
        hidden.then_some(())
    })
    .await;
    assert_eq!(
        session
            .lua("return require('pi-ide.suggest').visible()")
            .await,
        false
    );
    assert_eq!(shown(&session).await, "shown()", "kept while hidden");
    session.input("<C-e>").await;
    eventually("the ghost text to come back", || async {
        (session.lua(marks).await == 1).then_some(())
    })
    .await;
}

/// A stand-in for blink.cmp as other plugins see it: `is_menu_visible()`
/// on the loaded module, a floating menu, and its User events.
const BLINK_STUB: &str = "
    package.loaded['blink.cmp'] = { is_menu_visible = function() return _G.blink_win ~= nil end }
    _G.blink = {
      open = function()
        local buf = vim.api.nvim_create_buf(false, true)
        vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'alpha', 'beta' })
        _G.blink_win = vim.api.nvim_open_win(buf, false, { relative = 'cursor', row = 1, col = 0, width = 10, height = 2 })
        vim.api.nvim_exec_autocmds('User', { pattern = 'BlinkCmpMenuOpen' })
      end,
      close = function()
        vim.api.nvim_win_close(_G.blink_win, true)
        _G.blink_win = nil
        vim.api.nvim_exec_autocmds('User', { pattern = 'BlinkCmpMenuClose' })
      end,
    }";

const GHOST_MARKS: &str = "return #vim.api.nvim_buf_get_extmarks(0, vim.api.nvim_create_namespace('pi-ide-suggest'), 0, -1, {})";

#[tokio::test]
async fn a_floating_completion_menu_keeps_ghost_text_and_requests_away_until_it_closes() {
    let (session, mut agent) = editing().await;
    session.exec(BLINK_STUB).await;
    suggest(&session, &mut agent, &["shown()"]).await;
    session.exec("_G.blink.open()").await;
    eventually("the menu to hide the ghost text", || async {
        (session.lua(GHOST_MARKS).await == 0).then_some(())
    })
    .await;
    assert_eq!(
        session
            .lua("return require('pi-ide.suggest').visible()")
            .await,
        false
    );
    // An answer that arrives while the menu shows is not drawn either.
    session.exec("require('pi-ide.suggest').trigger()").await;
    let request = agent.editor_request("getSuggestions").await;
    agent
        .reply(&request["id"], json!({"suggestions": ["late()"]}))
        .await;
    wait_shown(&session, "late()").await;
    assert_eq!(session.lua(GHOST_MARKS).await, 0);
    session.exec("_G.blink.close()").await;
    eventually("the ghost text to come back", || async {
        (session.lua(GHOST_MARKS).await == 1).then_some(())
    })
    .await;

    // Typing while the menu shows asks nothing until it closes.
    session
        .exec(
            "_G.asked_with_menu = 0
             local seam = require('pi-ide.seam')
             local notify = seam.notify
             seam.notify = function(event, ...)
               if event == 'suggest' and _G.blink_win then _G.asked_with_menu = _G.asked_with_menu + 1 end
               return notify(event, ...)
             end
             _G.blink.open()",
        )
        .await;
    session.input("x").await;
    // Well past the 30 ms debounce, with the menu still open.
    session.exec("_G.typed_at = vim.uv.hrtime()").await;
    eventually("ten debounce periods", || async {
        let waited = session
            .lua("return (vim.uv.hrtime() - _G.typed_at) / 1e6 > 300")
            .await;
        (waited == true).then_some(())
    })
    .await;
    assert_eq!(session.lua("return _G.asked_with_menu").await, 0);
    agent.forget_backlog();
    session.exec("_G.blink.close()").await;
    let request = agent.editor_request("getSuggestions").await;
    assert!(
        request["params"]["cursorBefore"]
            .as_str()
            .unwrap()
            .ends_with('x'),
        "{request}"
    );
}

#[tokio::test]
async fn tab_falls_through_to_the_previous_mapping_while_a_menu_shows() {
    let session =
        Session::start_with("{ suggestion = { debounce_ms = 30, auto_trigger = false } }").await;
    // The person's own <Tab>, an expression map, made before the plugin maps keys.
    session
        .exec(
            "vim.keymap.set('i', '<Tab>', function()
               _G.fallbacks = (_G.fallbacks or 0) + 1
               return require('blink.cmp').is_menu_visible() and '' or 'TAB'
             end, { expr = true, desc = 'my tab' })",
        )
        .await;
    session.exec(BLINK_STUB).await;
    let path = session.write_file("tab.txt", "\n");
    session
        .exec(&format!("vim.cmd.edit('{}')", path.display()))
        .await;
    let mut agent = session.connect().await;
    session.wait_clients(1).await;
    session.input("i").await;
    suggest(&session, &mut agent, &["accepted"]).await;
    session.exec("_G.blink.open()").await;
    session.input("<Tab>").await;
    session.exec("_G.blink.close()").await;
    session.input("<Tab>").await;
    eventually("the suggestion accepted after the fallback ran", || async {
        (line(&session, 0).await != "").then_some(())
    })
    .await;
    // The first <Tab> went to the person's map (which saw the menu and
    // typed nothing), the second accepted.
    assert_eq!(session.lua("return _G.fallbacks").await, 1);
    assert_eq!(line(&session, 0).await, "accepted");
    // Without a suggestion, the person's map runs again.
    session.input("<Tab>").await;
    eventually("the person's <Tab>", || async {
        (line(&session, 0).await == "acceptedTAB").then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_buffer_can_be_kept_out_and_suggest_says_why() {
    let session = Session::start_with(
        "{ suggestion = { max_file_size = 100,
             should_attach = function(buf) return not vim.api.nvim_buf_get_name(buf):find('secret') end } }",
    )
    .await;
    let mut agent = session.connect().await;
    session.wait_clients(1).await;
    let small = session.write_file("small.txt", "x\n");
    let large = session.write_file("large.txt", &"y".repeat(300));
    let secret = session.write_file("secret.txt", "z\n");
    let why = async |file: &std::path::Path, extra: &str| {
        session
            .exec(&format!(
                "vim.cmd.edit('{}')\n{extra}\n_G.notified = {{}}\nvim.cmd('PiIde suggest')",
                file.display()
            ))
            .await;
        session.notifications().await.join("\n")
    };
    assert!(
        why(&large, "")
            .await
            .contains("over option suggestion.max_file_size"),
        "{:?}",
        session.notifications().await
    );
    assert!(
        why(&secret, "")
            .await
            .contains("should_attach returned false")
    );
    assert!(
        why(&small, "vim.b.pi_ide_suggestion = false")
            .await
            .contains("vim.b.pi_ide_suggestion is false")
    );
    let off = session
        .lua("_G.notified = {}; vim.cmd('PiIde suggest status'); return _G.notified[1].msg")
        .await;
    assert!(
        off.as_str().unwrap().contains("vim.b.pi_ide_suggestion"),
        "{off}"
    );
    // None of them asked the agent; a buffer that may, does.
    session
        .exec("vim.b.pi_ide_suggestion = nil; vim.cmd('PiIde suggest')")
        .await;
    let request = agent.editor_request("getSuggestions").await;
    assert_eq!(request["params"]["filePath"], small.to_str().unwrap());
}
