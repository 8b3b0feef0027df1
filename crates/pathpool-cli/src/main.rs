//! The `pathpool` command.
fn main() -> std::process::ExitCode {
    pathpool_cli::main_with_args(std::env::args_os().collect())
}
