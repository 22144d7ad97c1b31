//! pi-ide.nvim needs Neovim 0.11: on an older one `setup()` says so once and
//! starts nothing, and `:checkhealth pi-ide` says so too.

use crate::common::{Session, host_binary};
use crate::health::health_report;

/// `vim.fn.has` answering as Neovim 0.10 would: no `nvim-0.11`.
const AS_NEOVIM_0_10: &str = "local real = vim.fn.has
     vim.fn.has = function(feature)
       if feature == 'nvim-0.11' or feature == 'nvim-0.12' then return 0 end
       return real(feature)
     end";

#[tokio::test]
async fn on_neovim_0_10_setup_gives_one_error_and_starts_nothing() {
    let session = Session::spawn().await;
    session.exec(AS_NEOVIM_0_10).await;
    session
        .exec(
            "_G.started = 0
             require('pi-ide.host').start = function() _G.started = _G.started + 1 end",
        )
        .await;
    let before = session
        .lua("return #vim.api.nvim_get_autocmds({})")
        .await
        .as_u64()
        .unwrap();
    session
        .exec(&format!(
            "require('pi-ide').setup({{ bin = '{}' }})",
            host_binary().display()
        ))
        .await;
    // Whatever setup() scheduled runs before this callback does.
    session
        .exec("_G.drained = false; vim.schedule(function() _G.drained = true end)")
        .await;
    crate::common::eventually("Neovim's scheduled callbacks", || async {
        (session.lua("return _G.drained").await == true).then_some(())
    })
    .await;

    let notified = session.lua("return _G.notified").await;
    let notified = notified.as_array().expect("a list of notifications");
    assert_eq!(notified.len(), 1, "{notified:?}");
    assert_eq!(notified[0]["level"], 4, "ERROR: {notified:?}");
    let message = notified[0]["msg"].as_str().unwrap();
    assert!(
        message.contains("Neovim 0.11 or newer is required"),
        "{message}"
    );
    assert_eq!(session.lua("return _G.started").await, 0);
    let after = session
        .lua("return #vim.api.nvim_get_autocmds({})")
        .await
        .as_u64()
        .unwrap();
    assert_eq!(after, before, "setup() installed autocmds");
    for group in ["PiIde", "PiIdeStart"] {
        let exists = session
            .lua(&format!(
                "return (pcall(vim.api.nvim_get_autocmds, {{ group = '{group}' }}))"
            ))
            .await;
        assert_eq!(exists, false, "augroup {group} exists");
    }
    assert!(
        std::fs::read_dir(&session.lock_dir)
            .unwrap()
            .next()
            .is_none(),
        "a lockfile was written"
    );

    let report = health_report(&session).await;
    assert!(
        report.contains("ERROR Neovim 0.11 or newer is required"),
        "{report}"
    );
}
