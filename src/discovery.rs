//! The discovery files companion CLIs (Gemini CLI, Qwen Code) read to find
//! an editor's IDE companion server: `{port, workspacePath, authToken,
//! ideInfo}`, and `ppid` for those that check Neovim is alive; each CLI's
//! file name and fields are in its [`crate::client`] profile.
//!
//! Written whole (0600 in a 0700 directory, a temp file renamed), rewritten
//! after `:cd`, removed on exit. Ours carry [`MARK`]; only ours, and only
//! those of a Neovim that is gone, are ever cleaned up.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::client::{ClientKind, DiscoveryFile};
use crate::lockfile::{ensure_private_dir, process_alive};

/// Set in every file this plugin writes, so stale cleaning never touches
/// another editor's (VS Code's, another Neovim plugin's).
pub const MARK: &str = "pi-ide.nvim";

/// One discovery file this process owns.
#[derive(Debug)]
pub struct Discovery {
    file: &'static DiscoveryFile,
    path: PathBuf,
    port: u16,
    nvim_pid: u32,
    token: String,
    workspace: Vec<String>,
}

/// The fields both CLIs read, as we write and read them back.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Body {
    port: u16,
    workspace_path: String,
    auth_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ppid: Option<u32>,
    #[serde(default)]
    ide_info: Value,
    #[serde(default)]
    server: String,
}

impl Discovery {
    /// Cleans our stale files in `dir`, then writes this one there.
    /// For `kind`, which must have a discovery file.
    pub fn create(
        kind: ClientKind,
        dir: &Path,
        nvim_pid: u32,
        port: u16,
        token: &str,
        workspace: Vec<String>,
    ) -> io::Result<Self> {
        let file = kind.profile().discovery.as_ref().ok_or_else(|| {
            io::Error::other(format!("{} reads no discovery file", kind.as_str()))
        })?;
        ensure_private_dir(dir)?;
        let removed = remove_stale(file, dir);
        if removed > 0 {
            tracing::info!(
                "removed {removed} stale discovery file(s) in {}",
                dir.display()
            );
        }
        let discovery = Discovery {
            file,
            path: dir.join((file.name)(nvim_pid, port)),
            port,
            nvim_pid,
            token: token.to_owned(),
            workspace,
        };
        discovery.write()?;
        Ok(discovery)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Rewrites the file with new workspace roots (after `:cd`).
    pub fn set_workspace(&mut self, workspace: &[String]) {
        if self.workspace == workspace {
            return;
        }
        self.workspace = workspace.to_vec();
        if let Err(error) = self.write() {
            tracing::warn!("cannot update {}: {error}", self.path.display());
        }
    }

    /// Deletes the file; one already gone is fine.
    pub fn remove(&self) {
        crate::private_file::remove(&self.path, "discovery file");
    }

    fn write(&self) -> io::Result<()> {
        let body = Body {
            port: self.port,
            // Both CLIs split it on the path delimiter.
            workspace_path: self.workspace.join(":"),
            auth_token: self.token.clone(),
            ppid: self.file.ppid.then_some(self.nvim_pid),
            ide_info: json!({"name": "neovim", "displayName": "Neovim"}),
            server: MARK.into(),
        };
        let bytes = serde_json::to_vec(&body).map_err(io::Error::other)?;
        crate::private_file::replace(&self.path, &bytes)
    }
}

/// Removes our files in `dir` whose Neovim is gone; how many.
fn remove_stale(file: &DiscoveryFile, dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
            continue;
        };
        let Some(pid_in_name) = (file.pid_in_name)(name) else {
            continue;
        };
        let Some(body) = fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Body>(&bytes).ok())
        else {
            continue;
        };
        let Some(pid) = pid_in_name.or(body.ppid) else {
            continue;
        };
        if body.server == MARK && !process_alive(pid) && fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::scratch::Scratch;

    fn read(path: &Path) -> Value {
        serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn gemini_and_qwen_files_have_the_fields_each_cli_reads() {
        let scratch = Scratch::new("discovery");
        let me = std::process::id();
        let roots = vec!["/w/sub".to_string(), "/w".to_string()];
        let gemini_dir = scratch.join("tmp/gemini/ide");
        let mut gemini = Discovery::create(
            ClientKind::Gemini,
            &gemini_dir,
            me,
            4711,
            "tok",
            roots.clone(),
        )
        .unwrap();
        assert_eq!(
            gemini.path(),
            gemini_dir.join(format!("gemini-ide-server-{me}-4711.json"))
        );
        let body = read(gemini.path());
        assert_eq!(body["port"], 4711);
        assert_eq!(body["workspacePath"], "/w/sub:/w");
        assert_eq!(body["authToken"], "tok");
        assert_eq!(body["ideInfo"]["name"], "neovim");
        assert_eq!(body["ideInfo"]["displayName"], "Neovim");
        assert!(body.get("ppid").is_none(), "{body}");
        assert_eq!(mode(gemini.path()), 0o600);
        assert_eq!(mode(&gemini_dir), 0o700);

        let qwen_dir = scratch.join("qwen/ide");
        let qwen = Discovery::create(ClientKind::Qwen, &qwen_dir, me, 4712, "tok", roots).unwrap();
        assert_eq!(qwen.path(), qwen_dir.join("4712.lock"));
        assert_eq!(read(qwen.path())["ppid"], me);
        assert_eq!(read(qwen.path())["ideInfo"]["name"], "neovim");

        gemini.set_workspace(&["/elsewhere".into()]);
        assert_eq!(read(gemini.path())["workspacePath"], "/elsewhere");
        gemini.remove();
        qwen.remove();
        assert!(!gemini.path().exists() && !qwen.path().exists());
        assert_eq!(fs::read_dir(&qwen_dir).unwrap().count(), 0, "no temp file");
    }

    #[test]
    fn only_our_files_of_dead_editors_are_cleaned() {
        let scratch = Scratch::new("discovery-stale");
        let dead = 999_999_999u32;
        let me = std::process::id();
        let ours = |pid: u32| {
            json!({"port": 1, "workspacePath": "/w", "authToken": "t", "ppid": pid,
                   "ideInfo": {"name": "neovim"}, "server": MARK})
            .to_string()
        };
        let foreign = |pid: u32| {
            json!({"port": 1, "workspacePath": "/w", "authToken": "t", "ppid": pid,
                   "ideInfo": {"name": "vscode"}})
            .to_string()
        };
        let qwen = scratch.join("qwen");
        fs::create_dir_all(&qwen).unwrap();
        fs::write(qwen.join("1.lock"), ours(dead)).unwrap();
        fs::write(qwen.join("2.lock"), ours(me)).unwrap();
        fs::write(qwen.join("3.lock"), foreign(dead)).unwrap();
        fs::write(qwen.join("4.lock"), "not json").unwrap();
        let kept =
            Discovery::create(ClientKind::Qwen, &qwen, me, 5, "t", vec!["/w".into()]).unwrap();
        let mut left: Vec<_> = fs::read_dir(&qwen)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["2.lock", "3.lock", "4.lock", "5.lock"]);
        kept.remove();

        let gemini = scratch.join("gemini");
        fs::create_dir_all(&gemini).unwrap();
        let name = |pid: u32, port: u16| format!("gemini-ide-server-{pid}-{port}.json");
        fs::write(gemini.join(name(dead, 1)), ours(me)).unwrap();
        fs::write(gemini.join(name(me, 2)), ours(me)).unwrap();
        fs::write(gemini.join(name(dead, 3)), foreign(dead)).unwrap();
        fs::write(gemini.join("gemini-ide-server-7.json"), ours(dead)).unwrap();
        let kept = Discovery::create(ClientKind::Gemini, &gemini, me, 4, "t", vec![]).unwrap();
        let mut left: Vec<_> = fs::read_dir(&gemini)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let mut expected = vec![
            name(dead, 3),
            name(me, 2),
            name(me, 4),
            "gemini-ide-server-7.json".to_string(),
        ];
        expected.sort();
        assert_eq!(left, expected, "the pid in the name decides, not ppid");
        kept.remove();
    }
}
