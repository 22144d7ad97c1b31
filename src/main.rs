//! Entry point; the program itself is [`pi_ide::cli::main`].

use std::process::ExitCode;

fn main() -> ExitCode {
    pi_ide::cli::main(std::env::args().skip(1).collect())
}
