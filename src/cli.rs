//! The program: parse the command line, run the host on a current_thread
//! runtime, turn the outcome into an exit code.
//!
//! It lives in the library, not in `main.rs`, so the host's async state
//! machines are compiled once, here: a `block_on` in the binary made the
//! binary crate compile every future the host polls a second time.

use std::process::ExitCode;

use crate::config::{Config, Parsed};

/// Runs the host with `args` (the command line without the program name).
pub fn main(args: Vec<String>) -> ExitCode {
    if args.first().is_some_and(|first| first == "codex-hook") {
        // Run by Codex, not Neovim: stdout is the hook's answer.
        return crate::codex_ipc::hook::run();
    }
    let config = match Config::from_args(args) {
        Ok(Parsed::Run(config)) => *config,
        Ok(Parsed::Version) => {
            // Sanctioned stdout writes: `--version` runs outside RPC.
            println!(
                "pi-ide {} seam {}",
                env!("CARGO_PKG_VERSION"),
                crate::nvim::seam::SEAM_VERSION
            );
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::CheckRoot(dir)) => {
            // Like `--version`, outside RPC: `:checkhealth` reads the verdict.
            return match crate::confine::ProjectRoot::confirm(&dir) {
                Ok(root) => {
                    println!("project {}", root.real().display());
                    ExitCode::SUCCESS
                }
                Err(not) => {
                    println!("{not}");
                    ExitCode::FAILURE
                }
            };
        }
        Ok(Parsed::McpStdio) => return mcp_stdio(),
        Err(message) => {
            eprintln!("pi-ide: {message}");
            return ExitCode::from(2);
        }
    };
    crate::memory::one_arena();
    // Past a file-size limit (`ulimit -f`) a write fails with EFBIG and the
    // person is told; by default the signal would end the host instead.
    // SAFETY: setting a signal's disposition before any thread starts.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("pi-ide: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(crate::host::run(config));
    // The blocked stdin reader would keep a plain drop waiting forever.
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("host stopped: {error}");
            eprintln!("pi-ide: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `pi-ide mcp-stdio`: stdout is the MCP channel there, and errors go to stderr.
fn mcp_stdio() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("pi-ide mcp-stdio: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(crate::acp::mcp_stdio::run());
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("pi-ide mcp-stdio: {why}");
            ExitCode::FAILURE
        }
    }
}
