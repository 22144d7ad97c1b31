//! The MCP tools a Neovim config registered
//! (`require("pi-ide.mcp").register_tool`): what `tools/list` says about
//! them, and a generation the MCP endpoint watches to tell its clients
//! the list changed.

use std::sync::Mutex;

use tokio::sync::watch;

use crate::mutex::lock;
use crate::nvim::seam::UserToolSpec;

pub struct UserTools {
    tools: Mutex<Vec<UserToolSpec>>,
    /// Bumped on every change of the list.
    changed: watch::Sender<u64>,
}

impl Default for UserTools {
    fn default() -> Self {
        UserTools {
            tools: Mutex::default(),
            changed: watch::Sender::new(0),
        }
    }
}

impl UserTools {
    /// Replaces the list; true when it changed.
    pub fn set(&self, tools: Vec<UserToolSpec>) -> bool {
        let mut kept = lock(&self.tools);
        if *kept == tools {
            return false;
        }
        *kept = tools;
        drop(kept);
        self.changed.send_modify(|generation| *generation += 1);
        true
    }

    pub fn list(&self) -> Vec<UserToolSpec> {
        lock(&self.tools).clone()
    }

    pub fn get(&self, name: &str) -> Option<UserToolSpec> {
        lock(&self.tools).iter().find(|t| t.name == name).cloned()
    }

    /// Wakes once per change of the list.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }
}
