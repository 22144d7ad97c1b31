//! Runs the Lua-only specs (`tests/lua/*_spec.lua`) under
//! `nvim --headless -u NONE -l`. Each ends by printing `N passed, N failed`.

use crate::common::{nvim_binary, repo_root};

/// N from a spec's closing `N passed, 0 failed` line, if it printed one.
fn passed(printed: &str) -> Option<usize> {
    printed
        .lines()
        .find_map(|line| line.trim().strip_suffix(" passed, 0 failed")?.parse().ok())
}

#[tokio::test]
async fn lua_specs_pass() {
    let mut specs: Vec<_> = std::fs::read_dir(repo_root().join("tests/lua"))
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.ends_with("_spec.lua"))
        })
        .collect();
    specs.sort();
    assert!(!specs.is_empty(), "no Lua specs found");
    for spec in specs {
        let output = tokio::process::Command::new(nvim_binary())
            .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-l"])
            .arg(&spec)
            .current_dir(repo_root())
            .output()
            .await
            .unwrap();
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            output.status.success(),
            "{} failed:\n{printed}",
            spec.display()
        );
        assert!(
            passed(&printed).is_some_and(|n| n > 0),
            "{} did not report `N passed, 0 failed` with N > 0:\n{printed}",
            spec.display()
        );
    }
}
