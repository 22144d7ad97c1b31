//! Entry point: parse the command line, start logging, run the host.

use std::process::ExitCode;

fn main() -> ExitCode {
    let config = match pi_ide::config::Config::from_args(std::env::args().skip(1)) {
        Ok(pi_ide::config::Parsed::Run(config)) => *config,
        Ok(pi_ide::config::Parsed::Version) => {
            // Sanctioned stdout writes: `--version` runs outside RPC.
            println!(
                "pi-ide {} seam {}",
                env!("CARGO_PKG_VERSION"),
                pi_ide::nvim::seam::SEAM_VERSION
            );
            return ExitCode::SUCCESS;
        }
        Ok(pi_ide::config::Parsed::CheckRoot(dir)) => {
            // Like `--version`, outside RPC: `:checkhealth` reads the verdict.
            return match pi_ide::confine::ProjectRoot::confirm(&dir) {
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
        Err(message) => {
            eprintln!("pi-ide: {message}");
            return ExitCode::from(2);
        }
    };
    pi_ide::memory::one_arena();
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
    let result = runtime.block_on(pi_ide::host::run(config));
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
