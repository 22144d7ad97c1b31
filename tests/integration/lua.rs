//! Runs the Lua-only specs in `tests/lua/` under `nvim --headless -u NONE -l`.

use crate::common::{nvim_binary, repo_root};

#[tokio::test]
async fn lua_specs_pass() {
    let specs = std::fs::read_dir(repo_root().join("tests/lua")).unwrap();
    let mut ran = 0;
    for spec in specs
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "lua"))
    {
        let output = tokio::process::Command::new(nvim_binary())
            .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-l"])
            .arg(spec.path())
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
            spec.path().display()
        );
        assert!(
            printed.contains("all passed"),
            "{} did not finish:\n{printed}",
            spec.path().display()
        );
        ran += 1;
    }
    assert!(ran > 0, "no Lua specs found");
}
