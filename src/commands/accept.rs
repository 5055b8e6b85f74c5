//! placeholder
pub fn run(_: &crate::cli::CommonArgs, _: &crate::cli::AcceptArgs) -> std::process::ExitCode {
    std::process::ExitCode::from(2)
}
