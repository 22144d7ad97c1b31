//! A large diff arrives in parts (`diff_part`, see `src/diff/parts.rs`):
//! the person keeps typing meanwhile, and a diff decided before its last
//! part stops the rest.

use serde_json::json;

use crate::common::{Session, eventually, texts};

/// About `bytes` of numbered lines and a proposal that changes every 50th.
fn pair(bytes: usize) -> (String, String) {
    let original: String = (0..bytes / 48)
        .map(|i| format!("let value_{i:07} = compute(a, b); // code\n"))
        .collect();
    let proposal = original
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i % 50 == 7 {
                format!("{l} // new\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    (original, proposal)
}

/// Counts the characters typed while a diff is still loading.
const COUNT_TYPED_WHILE_LOADING: &str = "
  _G.typed_while_loading = 0
  vim.api.nvim_create_autocmd('InsertCharPre', { callback = function()
    for _, d in ipairs(require('pi-ide.diff').list()) do
      if d.loading then _G.typed_while_loading = _G.typed_while_loading + 1 return end
    end
  end })";

#[tokio::test]
async fn typing_while_a_large_diff_arrives_loses_no_key() {
    let session = Session::start().await;
    let mut agent = session.connect().await;
    let (original, proposal) = pair(4 << 20);
    let path = session.write_file("arriving.rs", &original);
    session
        .exec(
            "vim.cmd('enew'); vim.bo.buftype = 'nofile'; _G.notes = vim.api.nvim_get_current_buf()",
        )
        .await;
    session.exec(COUNT_TYPED_WHILE_LOADING).await;
    session.input("i").await;
    let id = agent.open_diff(&path, &proposal, "arriving").await;
    let mut typed = String::new();
    let mut word = 0;
    // Keys until the diff is shown whole, then a few more.
    let mut after = 0;
    while after < 5 {
        let keys = format!("w{word} ");
        session.input(&keys).await;
        typed.push_str(&keys);
        word += 1;
        let list = session.lua("return require('pi-ide.diff').list()").await;
        if list[0]["loading"] == false {
            after += 1;
        }
    }
    session.input("<Esc>").await;
    let notes = eventually("every key typed", || async {
        let text = session
            .lua("return table.concat(vim.api.nvim_buf_get_lines(_G.notes, 0, -1, false), '\\n')")
            .await;
        (text.as_str() == Some(typed.as_str())).then_some(text)
    })
    .await;
    assert_eq!(notes, json!(typed));
    let while_loading = session.lua("return _G.typed_while_loading").await;
    assert!(
        while_loading.as_u64().unwrap() > 0,
        "keys were typed while the parts arrived"
    );
    assert_eq!(
        session
            .lua("return vim.api.nvim_get_current_buf() == _G.notes")
            .await,
        true,
        "the diff opened in the background"
    );
    // The diff arrived whole all the same.
    let diff = &session.wait_diffs(1).await[0];
    let count = session
        .lua(&format!(
            "return {{ vim.api.nvim_buf_line_count({}), vim.api.nvim_buf_line_count({}) }}",
            diff["original_buf"], diff["proposed_buf"]
        ))
        .await;
    let lines = original.lines().count();
    assert_eq!(count, json!([lines, lines]));
    session
        .exec("require('pi-ide.diff').reject('arriving')")
        .await;
    let reply = agent.response(&id).await;
    assert_eq!(texts(&reply)[0], "DIFF_REJECTED");
}

#[tokio::test]
async fn a_large_diff_rejected_before_its_last_part_stops_the_rest() {
    let session = Session::start().await;
    let mut agent = session.connect().await;
    let (original, proposal) = pair(1 << 20);
    let path = session.write_file("halfway.rs", &original);
    // The person rejects as soon as the first part of the lines is in; the
    // parts that land after that are counted.
    session
        .exec(
            "_G.parts_after_reject = 0
             local diff = require('pi-ide.diff')
             local open = diff.open
             diff.open = function(spec)
               local buffers = open(spec)
               for _, buf in ipairs({ buffers.original, buffers.proposed }) do
                 vim.api.nvim_buf_attach(buf, false, { on_lines = function()
                   if _G.rejected then
                     _G.parts_after_reject = _G.parts_after_reject + 1
                   else
                     _G.rejected = true
                     vim.schedule(function() diff.reject('halfway') end)
                   end
                 end })
               end
               return buffers
             end",
        )
        .await;
    let id = agent.open_diff(&path, &proposal, "halfway").await;
    let reply = agent.response(&id).await;
    assert_eq!(texts(&reply)[0], "DIFF_REJECTED");
    session.wait_diffs(0).await;
    // The host stopped once it heard of the decision: a part of each side
    // is under way at a time, and each side's next may leave before the
    // decision reaches the host (1 MB is 22 parts).
    assert_eq!(session.lua("return _G.rejected").await, true);
    let after = session.lua("return _G.parts_after_reject").await;
    assert!(
        after.as_u64().unwrap() <= 4,
        "{after} parts sent after the rejection"
    );
    // And the next diff opens whole.
    let id = agent.open_diff(&path, &proposal, "again").await;
    let diffs = session.wait_diffs(1).await;
    let count = session
        .lua(&format!(
            "return vim.api.nvim_buf_line_count({})",
            diffs[0]["proposed_buf"]
        ))
        .await;
    assert_eq!(count, json!(proposal.lines().count()));
    session.exec("require('pi-ide.diff').reject('again')").await;
    assert_eq!(texts(&agent.response(&id).await)[0], "DIFF_REJECTED");
}

#[tokio::test]
async fn a_part_lua_fails_on_rejects_the_diff_and_closes_it() {
    let session = Session::start().await;
    let mut agent = session.connect().await;
    let (original, proposal) = pair(1 << 20);
    let path = session.write_file("failing.rs", &original);
    session
        .exec(
            "local diff = require('pi-ide.diff')
             local part = diff.part
             diff.part = function(id, kind, ...)
               if kind == 'hunks' then error('out of memory') end
               return part(id, kind, ...)
             end",
        )
        .await;
    let id = agent.open_diff(&path, &proposal, "failing").await;
    let reply = agent.response(&id).await;
    let texts = texts(&reply);
    assert_eq!(texts[0], "DIFF_REJECTED");
    assert!(
        texts.iter().any(|t| t.contains("out of memory")),
        "{texts:?}"
    );
    session.wait_diffs(0).await;
    let notes = session.notifications().await;
    assert!(
        !notes.iter().any(|n| n.contains("your edits")),
        "the text that arrived is not the person's edits: {notes:?}"
    );
}

/// The host puts each side's lines into its buffer while other calls into
/// Neovim are under way: every line lands at its row.
#[tokio::test]
async fn a_large_diff_lands_in_its_buffers_line_for_line() {
    let session = Session::start().await;
    let mut agent = session.connect().await;
    let (original, proposal) = pair(1 << 20);
    let path = session.write_file("in_order.rs", &original);
    let id = agent.open_diff(&path, &proposal, "in_order").await;
    let diff = &session.wait_diffs(1).await[0];
    let sides = session
        .lua(&format!(
            "return {{ vim.api.nvim_buf_get_lines({}, 0, -1, false), vim.api.nvim_buf_get_lines({}, 0, -1, false) }}",
            diff["original_buf"], diff["proposed_buf"]
        ))
        .await;
    let lines = |text: &str| json!(text.lines().collect::<Vec<_>>());
    assert!(
        sides == json!([lines(&original), lines(&proposal)]),
        "both sides whole and in order"
    );
    session
        .exec("require('pi-ide.diff').reject('in_order')")
        .await;
    assert_eq!(texts(&agent.response(&id).await)[0], "DIFF_REJECTED");
}
