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
    // The person rejects as soon as the first part is in.
    session
        .exec(
            "_G.parts_after_reject = 0
             local diff = require('pi-ide.diff')
             local part = diff.part
             diff.part = function(id, kind, ...)
               if _G.rejected then _G.parts_after_reject = _G.parts_after_reject + 1 end
               local took = part(id, kind, ...)
               if not _G.rejected then _G.rejected = true; diff.reject('halfway') end
               return took
             end",
        )
        .await;
    let id = agent.open_diff(&path, &proposal, "halfway").await;
    let reply = agent.response(&id).await;
    assert_eq!(texts(&reply)[0], "DIFF_REJECTED");
    session.wait_diffs(0).await;
    // The host stopped at the first part Lua no longer took (three are
    // under way at a time).
    let after = session.lua("return _G.parts_after_reject").await;
    assert!(
        after.as_u64().unwrap() <= 3,
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
             local part, calls = diff.part, 0
             diff.part = function(...)
               calls = calls + 1
               if calls == 3 then error('out of memory') end
               return part(...)
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

/// The host has a few parts under way at once, and Neovim can receive them
/// out of order: each still lands at its rows.
#[tokio::test]
async fn parts_that_overtake_others_land_at_their_rows() {
    let session = Session::spawn().await;
    let path = session.write_file("overtaken.txt", "a\nb\nc\nd\ne\n");
    let path = path.to_str().unwrap();
    let side = json!({"lines": [], "eol": true, "crlf": false});
    let calls = [
        json!(["open_diff", {"id": 3, "tab_name": "overtaken", "path": path, "original_path": path,
            "client": "pi", "original_exists": true, "original": side, "proposed": side,
            "hunks": [], "words": [], "parts": true}]),
        json!(["diff_part", 3, "proposed", 3, ["D", "E"]]),
        json!(["diff_part", 3, "original", 2, ["c", "d", "e"]]),
        json!(["diff_part", 3, "proposed", 1, ["B", "C"]]),
        json!(["diff_part", 3, "original", 0, ["a", "b"]]),
        json!(["diff_part", 3, "proposed", 0, ["A"]]),
        json!(["diff_part", 3, "hunks", 0, [[0, 5, 0, 5]], []]),
        json!(["diff_part", 3, "done"]),
    ];
    for call in calls {
        let outcome = session
            .lua_with(
                "local ok, err = pcall(require('pi-ide.seam').call, ...)
                 return { ok = ok, err = not ok and tostring(err) or nil }",
                call.as_array().unwrap().clone(),
            )
            .await;
        assert_eq!(outcome["ok"], true, "{call}: {}", outcome["err"]);
    }
    let sides = session
        .lua(
            "local sides = {}
             for _, buf in ipairs(vim.api.nvim_list_bufs()) do
               local name = vim.api.nvim_buf_get_name(buf)
               if name:find('overtaken', 1, true) then
                 local side = name:find('proposed', 1, true) and 'proposed' or 'original'
                 sides[side] = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
               end
             end
             return sides",
        )
        .await;
    assert_eq!(
        sides,
        json!({"original": ["a", "b", "c", "d", "e"], "proposed": ["A", "B", "C", "D", "E"]})
    );
}
