//! The large-file view (files above `HOST_DIFF_BYTES`): what it shares with
//! Neovim's diff mode, end to end with the real host and a real agent.

use serde_json::{Value, json};

use crate::common::{Agent, Session, eventually, texts};

/// 20,000 numbered lines (~540 KB) and a proposal with five changes:
/// line 100 gains a word, lines 5000–5002 go, two lines come after line
/// 10000, line 15000 is capitalised, line 19990 gains a word.
fn large_pair() -> (String, String) {
    let original: String = (0..20_000)
        .map(|i| format!("line {i:05} of a large file\n"))
        .collect();
    let mut proposal = String::new();
    for (i, line) in original.lines().enumerate() {
        match i {
            100 | 19_990 => proposal.push_str(&format!("{line} changed\n")),
            5000..=5002 => {}
            10_000 => proposal.push_str(&format!("{line}\ninserted A\ninserted B\n")),
            15_000 => proposal.push_str(&line.replacen("line", "LINE", 1)),
            _ => proposal.push_str(&format!("{line}\n")),
        }
        if i == 15_000 {
            proposal.push('\n');
        }
    }
    (original, proposal)
}

/// The hunks as drawn, `{old_start, old_len, new_start, new_len}`.
const EXPECTED: [[u64; 4]; 5] = [
    [100, 1, 100, 1],
    [5000, 3, 5000, 0],
    [10_001, 0, 9998, 2],
    [15_000, 1, 14_999, 1],
    [19_990, 1, 19_989, 1],
];

const HUNKS: &str = "local d = require('pi-ide.diff').list()[1]
     return require('pi-ide.diff.hunks').hunks(d.proposed_buf)";

/// Opens the large diff of `large_pair` and waits until it is drawn.
async fn open_large(session: &Session, name: &str) -> (Agent, Value, String) {
    let (original, proposal) = large_pair();
    let path = session.write_file(name, &original);
    let mut agent = session.connect().await;
    let id = agent.open_diff(&path, &proposal, "large").await;
    session.wait_diffs(1).await;
    eventually("the large view", || async {
        (session.lua(HUNKS).await == json!(EXPECTED)).then_some(())
    })
    .await;
    (agent, id, proposal)
}

/// `{cursor line, top line}` of the left and the right window.
const PLACES: &str = "return vim.tbl_map(function(w)
       return { vim.api.nvim_win_get_cursor(w)[1], vim.fn.line('w0', w) }
     end, vim.api.nvim_tabpage_list_wins(0))";

async fn wait_places(session: &Session, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
    eventually(what, || async {
        let places = session.lua(PLACES).await;
        wanted(&places).then_some(places)
    })
    .await
}

#[tokio::test]
async fn cursors_follow_both_ways_and_switching_windows_keeps_the_place() {
    let session = Session::start().await;
    let _agent = open_large(&session, "sync.txt").await;
    // No folds here: they would hold the top lines still.
    session
        .exec("vim.cmd('windo normal! zR'); vim.cmd('wincmd l')")
        .await;
    // The proposal (right) is current; below the insertion, proposal line
    // n is original line n + 1.
    session.input("12001G").await;
    let places = wait_places(&session, "the left cursor to follow", |p| {
        p[0][0] == 12_002 && p[1][0] == 12_001
    })
    .await;
    let (left_top, right_top) = (
        places[0][1].as_i64().unwrap(),
        places[1][1].as_i64().unwrap(),
    );
    assert!(
        right_top > 9000 && (left_top - right_top - 1).abs() <= 3,
        "the left window scrolled with it: {places}"
    );
    session.input("<C-w>h").await;
    eventually("the left window to be current", || async {
        (session.lua("return vim.fn.winnr()").await == 1).then_some(())
    })
    .await;
    let after = session.lua(PLACES).await;
    assert_eq!(after, places, "switching windows moves nothing");
    session.input("3000G").await;
    let places = wait_places(&session, "the right cursor to follow", |p| {
        p[0][0] == 3000 && p[1][0] == 3000
    })
    .await;
    assert!(places[1][1].as_i64().unwrap() > 2900, "{places}");
    // Scrolling without moving the cursor's line scrolls the other too.
    session.input("<C-e>").await;
    wait_places(&session, "the right window to scroll along", |p| {
        p[0][1] == p[1][1] && p[0][1] != places[0][1]
    })
    .await;
}

#[tokio::test]
async fn windows_do_not_wrap_fold_unchanged_text_and_say_what_they_are() {
    let session = Session::start().await;
    let _agent = open_large(&session, "large.rs").await;
    let windows = session
        .lua(
            "return vim.tbl_map(function(w)
               return { wrap = vim.wo[w].wrap, winbar = vim.wo[w].winbar,
                        filetype = vim.bo[vim.api.nvim_win_get_buf(w)].filetype }
             end, vim.api.nvim_tabpage_list_wins(0))",
        )
        .await;
    for window in windows.as_array().unwrap() {
        assert_eq!(window["wrap"], false, "{window}");
        assert_eq!(
            window["filetype"], "rust",
            "syntax as in diff mode: {window}"
        );
    }
    assert!(
        windows[0]["winbar"]
            .as_str()
            .unwrap()
            .contains("large-file view"),
        "{windows}"
    );
    // Unchanged stretches fold, keeping six lines of context by changes.
    let folds = "return vim.tbl_map(function(w)
         return vim.tbl_map(function(l)
           return vim.api.nvim_win_call(w, function() return vim.fn.foldclosed(l) end)
         end, { 1, 94, 95, 101, 107, 108, 2000 })
       end, vim.api.nvim_tabpage_list_wins(0))";
    let closed = eventually("the folds", || async {
        let folds = session.lua(folds).await;
        (folds[1][6] != -1).then_some(folds)
    })
    .await;
    assert_eq!(closed[0], json!([1, 1, -1, -1, -1, 108, 108]), "{closed}");
    assert_eq!(closed[1], json!([1, 1, -1, -1, -1, 108, 108]), "{closed}");
}

/// The highlight groups of the large view's marks in both buffers.
const GROUPS: &str = "local d = require('pi-ide.diff').list()[1]
  local ns = vim.api.nvim_create_namespace('pi-ide-hunks')
  local groups = {}
  for _, buf in ipairs({ d.original_buf, d.proposed_buf }) do
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
      if m[4].hl_group then groups[m[4].hl_group] = vim.api.nvim_get_hl(0, { name = m[4].hl_group, link = false }) end
    end
  end
  return groups";

#[tokio::test]
async fn changed_lines_use_groups_with_256_colour_backgrounds() {
    let session = Session::start().await;
    let _agent = open_large(&session, "colours.txt").await;
    for background in ["dark", "light"] {
        session
            .exec(&format!(
                "vim.o.background = '{background}'; vim.cmd.colorscheme('default')"
            ))
            .await;
        let groups = session.lua(GROUPS).await;
        let names: Vec<&String> = groups.as_object().unwrap().keys().collect();
        for wanted in [
            "PiIdeDiffChange",
            "PiIdeDiffText",
            "PiIdeDiffAdd",
            "PiIdeDiffDelete",
        ] {
            assert!(names.iter().any(|n| *n == wanted), "{wanted} in {names:?}");
        }
        for (name, hl) in groups.as_object().unwrap() {
            assert!(hl["ctermbg"].is_number(), "{background}: {name} {hl}");
            assert!(hl["bg"].is_number(), "{background}: {name} {hl}");
        }
    }
}

#[tokio::test]
async fn only_the_words_that_changed_are_marked_as_text() {
    let session = Session::start().await;
    let _agent = open_large(&session, "words.txt").await;
    let words = session
        .lua(
            "local d = require('pi-ide.diff').list()[1]
             local ns = vim.api.nvim_create_namespace('pi-ide-hunks')
             local out = {}
             for side, buf in pairs({ left = d.original_buf, right = d.proposed_buf }) do
               out[side] = {}
               for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
                 if m[4].hl_group == 'PiIdeDiffText' then
                   table.insert(out[side], { m[2], m[3], m[4].end_col })
                 end
               end
             end
             return out",
        )
        .await;
    assert_eq!(
        words["right"],
        json!([[100, 26, 34], [14_999, 0, 4], [19_989, 26, 34]])
    );
    assert_eq!(words["left"], json!([[15_000, 0, 4]]));
}

#[tokio::test]
async fn editing_the_proposal_rediffs_it_in_the_host() {
    let session = Session::start().await;
    let (mut agent, id, _) = open_large(&session, "edit.txt").await;
    // Delete proposal line 2000, and undo the change of line 100 by hand.
    session
        .exec(
            "local d = require('pi-ide.diff').list()[1]
             vim.api.nvim_buf_set_lines(d.proposed_buf, 2000, 2001, false, {})
             vim.api.nvim_buf_set_lines(d.proposed_buf, 100, 101, false, { 'line 00100 of a large file' })",
        )
        .await;
    let expected = json!([
        [2000, 1, 2000, 0],
        [5000, 3, 4999, 0],
        [10_001, 0, 9997, 2],
        [15_000, 1, 14_998, 1],
        [19_990, 1, 19_988, 1],
    ]);
    eventually("the re-diffed hunks", || async {
        (session.lua(HUNKS).await == expected).then_some(())
    })
    .await;
    let marks = "local d = require('pi-ide.diff').list()[1]
       local ns = vim.api.nvim_create_namespace('pi-ide-hunks')
       local function at(buf, row)
         local groups = {}
         for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, { row, 0 }, { row, -1 }, { details = true })) do
           table.insert(groups, m[4].hl_group or 'filler')
         end
         table.sort(groups)
         return groups
       end
       return { at(d.original_buf, 2000), at(d.proposed_buf, 1999), at(d.original_buf, 100),
                at(d.proposed_buf, 100), at(d.proposed_buf, 14998), at(d.proposed_buf, 14999) }";
    assert_eq!(
        session.lua(marks).await,
        json!([
            ["PiIdeDiffDelete"],
            ["filler"],
            [],
            [],
            ["PiIdeDiffChange", "PiIdeDiffText"],
            []
        ])
    );
    session.exec("require('pi-ide.diff').accept()").await;
    let reply = agent.response(&id).await;
    assert_eq!(texts(&reply)[0], "FILE_SAVED");
    assert!(texts(&reply)[1].contains("line 00100 of a large file\nline 00101"));
}

#[tokio::test]
async fn a_count_moves_over_several_changes() {
    let session = Session::start().await;
    let _agent = open_large(&session, "counts.txt").await;
    session.input("gg3]c").await;
    wait_places(&session, "3]c", |p| p[1][0] == 9999).await;
    session.input("2[c").await;
    wait_places(&session, "2[c", |p| p[1][0] == 101).await;
    session.input("9]c").await;
    wait_places(&session, "9]c stops at the last change", |p| {
        p[1][0] == 19_990
    })
    .await;
}

#[tokio::test]
async fn do_and_dp_take_the_on_disk_text_of_a_change() {
    let session = Session::start().await;
    let (mut agent, id, _) = open_large(&session, "obtain.txt").await;
    // `do` in the proposal on a changed line, and below deleted lines.
    session.input("101Gdo").await;
    session.input("5001Gdo").await;
    eventually("two changes undone", || async {
        (session.lua(HUNKS).await
            == json!([
                [10_001, 0, 10_001, 2],
                [15_000, 1, 15_002, 1],
                [19_990, 1, 19_992, 1]
            ]))
        .then_some(())
    })
    .await;
    // `dp` on the left puts the on-disk line into the proposal.
    session.input("<C-w>h15001Gdp").await;
    eventually("the third change undone", || async {
        (session.lua(HUNKS).await == json!([[10_001, 0, 10_001, 2], [19_990, 1, 19_992, 1]]))
            .then_some(())
    })
    .await;
    session.exec("require('pi-ide.diff').accept()").await;
    let text = texts(&agent.response(&id).await)[1].clone();
    let (original, _) = large_pair();
    let expected: String = original
        .lines()
        .enumerate()
        .map(|(i, l)| match i {
            10_000 => format!("{l}\ninserted A\ninserted B\n"),
            19_990 => format!("{l} changed\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    assert!(
        text == expected,
        "the proposal holds the on-disk text again"
    );
}

/// A real terminal (tmux, 256 colours, no true colour) attached to the
/// test's Neovim: the changed line is drawn on a background colour.
#[tokio::test]
async fn a_256_colour_terminal_shows_changed_lines_on_a_background() {
    assert!(
        std::process::Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok(),
        "the screen test needs tmux (apt-get install tmux; .ci/run installs it)"
    );
    let session = Session::start().await;
    let address = session.lua("return vim.fn.serverstart()").await;
    let socket = format!("pi-ide-test-{}", std::process::id());
    let tmux = |args: &[&str]| {
        std::process::Command::new("tmux")
            .args(["-L", &socket])
            .args(args)
            .output()
            .expect("tmux")
    };
    let ui = format!(
        "env TERM=screen-256color COLORTERM= {} --remote-ui --server {}",
        crate::common::nvim_binary(),
        address.as_str().unwrap()
    );
    let started = tmux(&["-2", "new-session", "-d", "-x", "120", "-y", "40", &ui]);
    assert!(started.status.success(), "{started:?}");
    struct Kill<F: Fn(&[&str]) -> std::process::Output>(F);
    impl<F: Fn(&[&str]) -> std::process::Output> Drop for Kill<F> {
        fn drop(&mut self) {
            (self.0)(&["kill-server"]);
        }
    }
    let tmux = Kill(tmux);
    eventually("the terminal UI", || async {
        (session.lua("return #vim.api.nvim_list_uis()").await == 1).then_some(())
    })
    .await;
    let _agent = open_large(&session, "screen.txt").await;
    session.input("101Gzz").await;
    wait_places(&session, "the change on screen", |p| p[1][0] == 101).await;
    let screen = eventually("the changed line on screen", || async {
        // 256 colours: the terminal may have turned true colour on.
        session.exec("vim.o.termguicolors = false").await;
        let out = (tmux.0)(&["capture-pane", "-e", "-p"]);
        let screen = String::from_utf8_lossy(&out.stdout).into_owned();
        plain(&screen)
            .contains("large file changed")
            .then_some(screen)
    })
    .await;
    let line = screen
        .lines()
        .find(|l| plain(l).contains("large file changed"))
        .unwrap();
    // The right half of the line (the proposal) is drawn on a 256-colour
    // background: SGR 48;5;n.
    assert!(
        line.contains("48;5;"),
        "no 256-colour background on the changed line:\n{line:?}\n{screen}"
    );
}

/// Terminal output without its escape sequences.
fn plain(screen: &str) -> String {
    let mut out = String::new();
    let mut chars = screen.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters final-byte.
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}
