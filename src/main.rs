//! The `kdrift` binary: parse the command line and hand over to the library.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::ExitCode;

use clap::Parser;
use kdrift::cli::{Cli, Command};

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    kdrift::user_config::apply(&mut cli.common);
    // The live view shows a bad config in its status bar; the subcommands say it here.
    if let (Some(problem), Some(_)) = (&cli.common.config_problem, &cli.command) {
        eprintln!("kdrift: {problem}");
    }
    match cli.command {
        Some(Command::Demo(args)) if args.serve => kdrift::sim::serve::run(&args),
        Some(Command::Demo(args)) => kdrift::runtime::run_demo(&cli.common, &args),
        Some(Command::Check(args)) => kdrift::commands::check::run(&cli.common, &args),
        Some(Command::Diff(args)) => kdrift::commands::diff::run(&cli.common, &args),
        Some(Command::Accept(args)) => kdrift::commands::accept::run(&cli.common, &args),
        Some(Command::Revert(args)) => kdrift::commands::revert::run(&cli.common, &args),
        Some(Command::Completions { shell }) => {
            kdrift::cli::completions(shell, &mut std::io::stdout());
            ExitCode::SUCCESS
        }
        Some(Command::Man) => match kdrift::cli::man_page(&mut std::io::stdout()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("kdrift: cannot write the manual page: {e}");
                ExitCode::from(kdrift::commands::EXIT_ERROR)
            }
        },
        None => kdrift::runtime::run_tui(&cli.common),
    }
}
