//! `:help pi-ide`: the help file's tags, links and width, and the paths that
//! make its tags exist (a plugin manager's `:helptags`, the README's try-it
//! command).

use std::time::{Duration, SystemTime};

use serde_json::json;

use crate::common::{Session, nvim_binary, plugin_copy, repo_root};

/// `|link|`s outside example blocks, as Vim's help syntax finds them.
fn links(text: &str) -> Vec<String> {
    let is_link_char = |c: char| c.is_ascii_graphic() && !matches!(c, '"' | '*' | '|');
    let mut found = Vec::new();
    let mut in_example = false;
    for line in text.lines() {
        // An example block ends at a line starting with `<` or any non-blank.
        if in_example && !line.starts_with(|c: char| !c.is_whitespace()) {
            continue;
        }
        let mut rest = line;
        while let Some(start) = rest.find('|') {
            let after = &rest[start + 1..];
            let len = after
                .find(|c: char| !is_link_char(c))
                .unwrap_or(after.len());
            let escaped = rest[..start].ends_with('\\');
            if len > 0 && after[len..].starts_with('|') && !escaped {
                found.push(after[..len].to_owned());
                rest = &after[len + 1..];
            } else {
                rest = after;
            }
        }
        let trimmed = line.trim_end();
        in_example = trimmed == ">"
            || trimmed.rsplit_once(' ').is_some_and(|(_, last)| {
                last.starts_with('>') && last[1..].chars().all(|c| c.is_ascii_lowercase())
            });
    }
    found.sort();
    found.dedup();
    found
}

/// Display width of a help line (tabs to 8 columns, one column a char).
fn width(line: &str) -> usize {
    line.chars().fold(0, |col, c| {
        if c == '\t' {
            col + 8 - col % 8
        } else {
            col + 1
        }
    })
}

/// `:help <tag>` in `session`: None when it lands on the line defining
/// `*tag*`, else what went wrong.
async fn help_problem(session: &Session, tag: &str) -> Option<String> {
    let outcome = session
        .lua_with(
            "local tag = ...
             local ok, err = pcall(vim.cmd.help, tag)
             if not ok then return err end
             local line = vim.api.nvim_get_current_line()
             if line:find('*' .. tag .. '*', 1, true) then return vim.NIL end
             return 'landed on ' .. vim.fn.expand('%:t') .. ': ' .. line",
            vec![json!(tag)],
        )
        .await;
    outcome.as_str().map(|problem| format!("{tag}: {problem}"))
}

#[tokio::test]
async fn help_pi_ide_and_every_link_in_the_help_file_resolve_after_helptags() {
    let copy = plugin_copy("help");
    let session = Session::spawn_plugin(&copy).await;
    // What lazy.nvim does after installing or updating a plugin.
    session
        .lua_with("vim.cmd.helptags(...)", vec![json!(copy.join("doc"))])
        .await;
    let text = std::fs::read_to_string(copy.join("doc/pi-ide.txt")).unwrap();
    let links = links(&text);
    assert!(links.len() > 10, "found too few links: {links:?}");
    let mut problems = Vec::new();
    for tag in std::iter::once("pi-ide").chain(links.iter().map(String::as_str)) {
        problems.extend(help_problem(&session, tag).await);
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[tokio::test]
async fn help_file_lines_fit_its_textwidth() {
    let text = std::fs::read_to_string(repo_root().join("doc/pi-ide.txt")).unwrap();
    assert!(text.contains("vim:tw=78:"), "the modeline sets tw=78");
    let long: Vec<_> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| width(line) > 78)
        .map(|(at, line)| format!("{}: {line}", at + 1))
        .collect();
    assert!(
        long.is_empty(),
        "lines over 78 columns:\n{}",
        long.join("\n")
    );
}

/// Dates `path` (a file or a directory) long before any checkout.
fn set_old_mtime(path: &std::path::Path) {
    std::fs::File::open(path)
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000))
        .unwrap();
}

/// The command after `&&` on the README's try-it line (`nvim …`).
fn readme_try_it_command() -> String {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let line = readme
        .lines()
        .find(|line| line.starts_with("cargo build --release --locked && nvim "))
        .expect("the README's try-it line");
    line.split_once("&& ").unwrap().1.to_owned()
}

#[tokio::test]
async fn the_readme_try_it_command_makes_help_pi_ide_work() {
    let command = readme_try_it_command();
    let rest = command.strip_prefix("nvim ").expect("it runs nvim");
    let copy = plugin_copy("try-it");
    let result = copy.join("result");
    let check = copy.join("check.lua");
    std::fs::write(
        &check,
        "local ok, err = pcall(vim.cmd.help, 'pi-ide')
         local line = ok and vim.api.nvim_get_current_line() or err
         local file = ok and vim.api.nvim_buf_get_name(0) or ''
         vim.fn.writefile({ line, file, vim.v.errmsg }, vim.env.PI_IDE_TEST_RESULT)",
    )
    .unwrap();
    // Fresh (no doc/tags), then stale (doc/tags older than the help file,
    // as after an update that changed the help).
    for round in ["without doc/tags", "with stale doc/tags"] {
        if round == "with stale doc/tags" {
            let tags = copy.join("doc/tags");
            std::fs::write(&tags, "").unwrap();
            set_old_mtime(&tags);
        }
        let _ = std::fs::remove_file(&result);
        let script = format!(
            "\"$NVIM\" --headless -i NONE {rest} -c 'luafile {}' -c 'qa!'",
            check.display()
        );
        let output = tokio::process::Command::new("sh")
            .args(["-c", &script])
            .current_dir(&*copy)
            .env("NVIM", nvim_binary())
            .env("PI_IDE_TEST_RESULT", &result)
            .env("PI_IDE_LOCK_DIR", copy.join("locks"))
            .env("CLAUDE_CONFIG_DIR", copy.join("claude"))
            .env("XDG_STATE_HOME", copy.join("state"))
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .unwrap();
        let written = std::fs::read_to_string(&result).unwrap_or_else(|_| {
            panic!(
                "{round}: `{script}` wrote no result: {}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
        let lines: Vec<_> = written.lines().collect();
        assert!(
            lines[0].contains("*pi-ide*")
                && lines[1] == copy.join("doc/pi-ide.txt").to_str().unwrap(),
            "{round}: `:help pi-ide` after `{command}` gave {lines:?}"
        );
    }
}

#[tokio::test]
async fn the_plugin_loads_quietly_when_it_cannot_write_doc_tags() {
    let copy = plugin_copy("read-only-doc");
    // A directory where the tags file would go, older than the help file so
    // the plugin tries: not writable, even for root.
    std::fs::create_dir(copy.join("doc/tags")).unwrap();
    set_old_mtime(&copy.join("doc/tags"));
    let session = Session::spawn_plugin(&copy).await;
    let state = session
        .lua("return { errmsg = vim.v.errmsg, messages = vim.fn.execute('messages'), command = vim.fn.exists(':PiIde') }")
        .await;
    assert_eq!(state["errmsg"], "", "{state}");
    assert_eq!(state["messages"].as_str().unwrap().trim(), "", "{state}");
    assert_eq!(state["command"], 2, "{state}");
}
