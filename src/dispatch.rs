//! The program: parse the command line ([`crate::cli`]), fold in the user config, and run what it
//! asks — the live view, the demo, a headless subcommand, completions or the manual page. The
//! `kdrift` binary is this function, also when the `kubectl-drift` launcher runs it.
use crate::cli::{Cli, Command};

/// Who the `kdrift` binary is asked to be, by the name it was run under (`argv[0]`): the
/// `kubectl-drift` and `kubectl_complete-drift` launchers run it under theirs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invoked {
    Kdrift,
    /// `kubectl drift …`: the same program, named so in help and errors.
    KubectlPlugin,
    /// kubectl's completion protocol for plugins (`kubectl_complete-drift WORDS…`).
    KubectlCompletion,
}

/// The role for the name `argv0` (a path or a bare name; any other name is kdrift itself).
pub fn invoked_as(argv0: Option<std::ffi::OsString>) -> Invoked {
    let name = argv0
        .as_deref()
        .map(std::path::Path::new)
        .and_then(|p| p.file_stem());
    match name.and_then(|n| n.to_str()) {
        Some("kubectl-drift") => Invoked::KubectlPlugin,
        Some("kubectl_complete-drift") => Invoked::KubectlCompletion,
        _ => Invoked::Kdrift,
    }
}

/// The program: parse the command line (named `name` in help and errors: `kdrift`, or
/// `kubectl drift` for the plugin) and run what it asks.
pub fn main(name: &'static str) -> std::process::ExitCode {
    use clap::FromArgMatches;
    use std::process::ExitCode;
    let mut command = crate::complete::command(name);
    if std::env::args_os().any(|a| a == "--version") {
        // The renderer of kustomize roots is looked for only when asked (it runs a program).
        let renderer = match crate::manifest::kustomize::render::renderer() {
            Ok(renderer) => renderer.describe(),
            Err(message) => format!("none ({message})"),
        };
        let text = format!(
            "{}\nkustomize renderer: {renderer}",
            command.get_version().unwrap_or_default()
        );
        command = command.long_version(&*Box::leak(text.into_boxed_str()));
    }
    let matches = command.get_matches();
    let mut cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    cli.common.apply_user_config();
    // The live view shows a bad config in its status bar; the subcommands say it here.
    if let (Some(problem), Some(_)) = (&cli.common.config_problem, &cli.command) {
        eprintln!("kdrift: {problem}");
    }
    // The live view and the demo install it once their log is open (see `crate::runtime`).
    let headless_compare = matches!(
        cli.command,
        Some(
            Command::Check(_)
                | Command::Compare(_)
                | Command::Diff(_)
                | Command::Blame(_)
                | Command::Changes(_)
                | Command::Accept(_)
                | Command::Revert(_)
                | Command::Rollback(_)
        )
    );
    if headless_compare && let Err(e) = crate::drift::secret::install_key() {
        eprintln!(
            "kdrift: note: {e}; Secret digests use a key of this run alone (they differ from other runs')"
        );
    }
    // `check`, `compare` and the live view read several contexts; the rest act on one.
    let one_context = match &cli.command {
        None => None,
        Some(Command::Demo(_)) => Some("kdrift demo"),
        Some(Command::Diff(_)) => Some("kdrift diff"),
        Some(Command::Accept(_)) => Some("kdrift accept"),
        Some(Command::Revert(_)) => Some("kdrift revert"),
        Some(Command::Rollback(_)) => Some("kdrift rollback"),
        Some(Command::Blame(_)) => Some("kdrift blame"),
        Some(Command::Changes(_)) => Some("kdrift changes"),
        Some(Command::Logs(_)) => Some("kdrift logs"),
        Some(
            Command::Check(_) | Command::Compare(_) | Command::Completions { .. } | Command::Man,
        ) => None,
    };
    if let Some(what) = one_context
        && let Err(message) = cli.common.one_context(what)
    {
        eprintln!("kdrift: {message}");
        return ExitCode::from(crate::commands::EXIT_ERROR);
    }
    match cli.command {
        Some(Command::Demo(args)) if args.serve => crate::runtime::serve::run(&args),
        Some(Command::Demo(args)) => crate::runtime::run_demo(&cli.common, &args),
        Some(Command::Check(args)) => crate::commands::check::run(&cli.common, &args),
        Some(Command::Diff(args)) => crate::commands::diff::run(&cli.common, &args),
        Some(Command::Accept(args)) => crate::commands::accept::run(&cli.common, &args),
        Some(Command::Revert(args)) => crate::commands::revert::run(&cli.common, &args),
        Some(Command::Rollback(args)) => crate::commands::rollback::run(&cli.common, &args),
        Some(Command::Blame(args)) => crate::commands::blame::run(&cli.common, &args),
        Some(Command::Changes(args)) => crate::commands::changes::run(&cli.common, &args),
        Some(Command::Logs(args)) => crate::commands::logs::run(&cli.common, &args),
        Some(Command::Compare(args)) => crate::commands::compare::run(&cli.common, &args),
        Some(Command::Completions { shell }) => {
            match crate::complete::write_registration(shell, &mut std::io::stdout()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("kdrift: {e}");
                    ExitCode::from(crate::commands::EXIT_ERROR)
                }
            }
        }
        Some(Command::Man) => match man_page(&mut std::io::stdout()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("kdrift: cannot write the manual page: {e}");
                ExitCode::from(crate::commands::EXIT_ERROR)
            }
        },
        None => crate::runtime::run_tui(&cli.common),
    }
}

/// The manual page, written to `out`.
pub fn man_page(out: &mut dyn std::io::Write) -> std::io::Result<()> {
    clap_mangen::Man::new(<Cli as clap::CommandFactory>::command()).render(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_run_under_picks_the_role() {
        let role = |s: &str| invoked_as(Some(s.into()));
        assert_eq!(role("/usr/local/bin/kubectl-drift"), Invoked::KubectlPlugin);
        assert_eq!(role("kubectl_complete-drift"), Invoked::KubectlCompletion);
        assert_eq!(role("/home/me/.cargo/bin/kdrift"), Invoked::Kdrift);
        assert_eq!(role("kdrift-dev"), Invoked::Kdrift);
        assert_eq!(invoked_as(None), Invoked::Kdrift);
    }
}
