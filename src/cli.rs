//! The command line of `docs/ARCHITECTURE.md` ("Command line"), as clap types.
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};

use crate::user_config::{CONFIG_ENV, ReadOnlyFrom, UserConfig};

#[derive(Debug, Parser)]
#[command(
    name = "kdrift",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("KDRIFT_COMMIT"), ")"),
    about = "Watch Kubernetes rollouts live and settle drift between the cluster and git",
    after_help = crate::user_config::after_help()
)]
pub struct Cli {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags shared by the TUI and the headless subcommands.
#[derive(Debug, Clone, Args, Default)]
pub struct CommonArgs {
    /// Folder of YAML manifests (default: the current directory), read with its sub-folders as
    /// `kubectl apply -R -f DIR` reads it (a note names the sub-folders that `kubectl apply -f
    /// DIR` without -R would not read).
    #[arg(long, global = true, value_name = "DIR")]
    pub manifests: Option<PathBuf>,
    /// Kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kustomize root to render (a folder under --manifests, such as overlays/prod) instead
    /// of every root, or of what .kdrift.yaml's kustomize.roots / kustomize.contexts name.
    #[arg(long, global = true, value_name = "DIR")]
    pub overlay: Option<PathBuf>,
    /// Kubeconfig context to use. The live view, `check` and `compare` take it several times
    /// (one table, one section per context); the other commands act on one context.
    #[arg(long, global = true, value_name = "NAME", action = clap::ArgAction::Append)]
    pub context: Vec<String>,
    /// Every context of the kubeconfig (the live view, `check` and `compare` only).
    #[arg(long, global = true, conflicts_with = "context")]
    pub all_contexts: bool,
    /// Namespace to watch (default: the context's namespace, else all).
    #[arg(
        short = 'n',
        long,
        global = true,
        value_name = "NS",
        conflicts_with = "all_namespaces"
    )]
    pub namespace: Option<String>,
    /// Watch all namespaces.
    #[arg(short = 'A', long, global = true)]
    pub all_namespaces: bool,
    /// Theme: a name from themes/ or a path to a TOML file (default: the user config's).
    #[arg(long, global = true, value_name = "NAME")]
    pub theme: Option<String>,
    /// Remove the accept and revert actions (also `readonly = true` in the user config).
    #[arg(long, global = true)]
    pub readonly: bool,
    /// Log level (error, warn, info, debug, trace); also KDRIFT_LOG.
    #[arg(long, global = true, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// Where read-only came from (the flag, the user config), set by `CommonArgs::apply_user_config`.
    #[arg(skip)]
    pub readonly_from: Option<ReadOnlyFrom>,
    /// Why the user config file was not used, set by `CommonArgs::apply_user_config`.
    #[arg(skip)]
    pub config_problem: Option<String>,
    /// `--manifests` names a checkout whose Argo CD apps still say how their folders are read
    /// (`kdrift demo`'s own repository, set by the demo; a user's `--manifests` is taken as is).
    #[arg(skip)]
    pub manifests_is_checkout: bool,
    /// The contexts checked or watched together, whose Argo CD Applications may deploy to one
    /// another's clusters (set by the fleet's view and `check` over several contexts).
    #[arg(skip)]
    pub peers: Option<crate::cluster::hub::Peers>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start the embedded demo cluster (and, without --serve, open the TUI on it).
    Demo(DemoArgs),
    /// Compare every manifest with the cluster; exit 0 in sync, 1 drift, 2 error.
    Check(CheckArgs),
    /// The drift of one object (TYPE/NAME, as kubectl) as an annotated diff.
    Diff(DiffArgs),
    /// Write an object's live values into its manifest file and commit that file. Ctrl-c while
    /// git commits stops git (SIGTERM) and puts the file back as it was: exit 130.
    Accept(AcceptArgs),
    /// Put an object back as its manifest says: server-side apply, then removal of fields added
    /// live; previewed with a server-side dry run and confirmed.
    Revert(RevertArgs),
    /// Roll a Deployment, StatefulSet or DaemonSet back to its previous revision (or
    /// --to-revision N): where git brought
    /// the bad values, a commit that restores the revision's values (naming the commits that
    /// brought them), then the cluster as revert applies it; where the change was out of band,
    /// the cluster alone; with no manifest, as `kubectl rollout undo`; a Helm release's object
    /// through `helm rollback`. Previewed and confirmed; exit codes as revert's.
    Rollback(RollbackArgs),
    /// Print a live object as YAML with each field's managers (operation, subresource, time)
    /// beside it, from its managedFields, and whether git agrees (in sync, drifted, not in git)
    /// when a manifest of it is found. Left out: status, managedFields, resourceVersion, uid,
    /// generation, creationTimestamp, selfLink and the last-applied annotation. Exit 0, else 2.
    Blame(BlameArgs),
    /// The timeline of what changed, from the API alone, newest first: each managedFields
    /// entry (manager, operation, the fields it owns, old → new where the manifest has the old),
    /// each new ReplicaSet (a rollout: what changed in its pod template), Warning events. Each
    /// line says whether git agrees now. Exit 0, else 2.
    Changes(ChangesArgs),
    /// One object as several clusters have it (`--context A --context B …` or
    /// `--all-contexts`): the fields that differ (status and server bookkeeping left out, as
    /// `check` leaves them out), each cluster's value with its manager and time, and which
    /// clusters' manifests agree. Exit 0 equal, 1 different (or absent from some), 2 error.
    Compare(CompareArgs),
    /// Print the log of a workload's newest unready pod (its newest pod when all are ready), for
    /// scripts: TYPE is deploy, sts or ds (as kubectl names them); the pods are those of the
    /// workload's spec.selector.matchLabels. The pod chosen is named on stderr. Piped, the log's
    /// bytes are written as they are; on a terminal, control characters are shown escaped.
    /// Exit 0, else 2 with the reason on stderr (no such workload, no pods, no such container,
    /// forbidden).
    Logs(LogsArgs),
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell): `source <(kdrift
    /// completions bash)`. It calls kdrift back on TAB, so TYPE/NAME completes from the
    /// manifests folder (--manifests, --overlay and -n on the line are honoured).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), made from this command line: `kdrift man | man -l -`.
    Man,
}

/// `kdrift check`'s output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OutputFormat {
    /// One line per drifted field, then a summary.
    #[default]
    Text,
    /// The report as JSON (its shape: `schemaVersion`, documented in docs/check-report.schema.json).
    Json,
    /// The same report as YAML, as kubectl's `-o yaml`.
    Yaml,
    /// GitHub Actions annotations (`::warning file=…,line=…::…`) on the drifted lines.
    Github,
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// Also list the objects in the cluster that no manifest describes.
    #[arg(long)]
    pub unmanaged: bool,
    /// Exit 0 (not 2) when there is no manifest to check in the namespace scope.
    #[arg(long)]
    pub allow_empty: bool,
}

/// `kdrift blame`'s output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum BlameFormat {
    /// The object as YAML, each field's managers after `#`.
    #[default]
    Text,
    /// Each field with its path, value, managers and git state, as JSON.
    Json,
}

#[derive(Debug, Clone, Args)]
pub struct BlameArgs {
    /// The object, as kubectl names it: deployment/web, deploy/web.
    #[arg(value_name = "TYPE/NAME")]
    pub target: String,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = BlameFormat::Text)]
    pub output: BlameFormat,
}

/// `kdrift changes`' output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ChangesFormat {
    /// One line per change: time, object, who, what, git.
    #[default]
    Text,
    /// The lines as a JSON array.
    Json,
    /// The lines as YAML.
    Yaml,
}

#[derive(Debug, Clone, Args)]
pub struct ChangesArgs {
    /// Only changes newer than this, a Go-style duration (10m, 1h30m); default: all the API
    /// can date.
    #[arg(long, value_name = "DURATION", value_parser = crate::drift::changes::parse_since)]
    pub since: Option<std::time::Duration>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = ChangesFormat::Text)]
    pub output: ChangesFormat,
    /// Also the bookkeeping: Helm's release-record Secrets and ConfigMaps, and the control
    /// plane's status writes (left out by default: they say nothing of who changed what).
    #[arg(long)]
    pub bookkeeping: bool,
}

/// `kdrift compare`'s output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum CompareFormat {
    /// Each differing field, a line per cluster.
    #[default]
    Text,
    /// The fields with each context's value, manager and git state, as JSON.
    Json,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The object, as kubectl names it: deployment/web, deploy/web.
    #[arg(value_name = "TYPE/NAME")]
    pub target: String,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = CompareFormat::Text)]
    pub output: CompareFormat,
}

#[derive(Debug, Clone, Args)]
pub struct DiffArgs {
    /// The object, as kubectl names it: deployment/web, deploy/web.
    #[arg(value_name = "TYPE/NAME")]
    pub target: String,
}

#[derive(Debug, Clone, Args)]
pub struct AcceptArgs {
    /// The object, as kubectl names it: deployment/web, deploy/web.
    #[arg(value_name = "TYPE/NAME")]
    pub target: String,
    /// Accept only this drifted field, as `kdrift check` prints it (repeatable; default: all).
    #[arg(long = "field", value_name = "PATH")]
    pub fields: Vec<String>,
    /// Write the manifest file but do not commit it.
    #[arg(long)]
    pub no_commit: bool,
    /// The commit message's subject (the body still lists the fields).
    #[arg(short = 'm', long = "message", value_name = "MSG")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct LogsArgs {
    /// The workload, as kubectl names it: deploy/web, sts/db, ds/agent.
    #[arg(value_name = "TYPE/NAME")]
    pub target: String,
    /// The container (default: the pod's default-container annotation, else its first).
    #[arg(short = 'c', long, value_name = "NAME")]
    pub container: Option<String>,
    /// The previous run's log: the crash of a crash-looping container.
    #[arg(short = 'p', long)]
    pub previous: bool,
    /// Keep printing new lines until interrupted or the container stops.
    #[arg(short = 'f', long)]
    pub follow: bool,
    /// Only the newest N lines.
    #[arg(long, value_name = "N")]
    pub tail: Option<i64>,
}

#[derive(Debug, Clone, Args)]
pub struct RevertArgs {
    /// The object, as kubectl names it: deployment/web, deploy/web.
    #[arg(value_name = "TYPE/NAME")]
    pub target: String,
    /// Only show what the revert would change (a server-side dry run); change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Revert without asking (needed when stdin is not a terminal).
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Revert only this drifted field, as `kdrift check` prints it (repeatable); the others stay
    /// as they are live. Default: every drifted field, but a Helm release object's fields that
    /// git already holds (in-git).
    #[arg(long = "field", value_name = "PATH")]
    pub fields: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct RollbackArgs {
    /// The workload, as kubectl names it: deploy/web, sts/db, ds/agent.
    #[arg(value_name = "TYPE/NAME")]
    pub target: String,
    /// The revision to go back to (as `kubectl rollout history` numbers them); default: the one
    /// before the current.
    #[arg(long, value_name = "N")]
    pub to_revision: Option<u64>,
    /// Only show what the rollback would do (the commit's diff, the server's dry run); change
    /// nothing, in git or in the cluster.
    #[arg(long)]
    pub dry_run: bool,
    /// Roll back without asking (needed when stdin is not a terminal).
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// After the rollback, follow its rollout until it completes or sticks (exit 1 when it
    /// sticks or is still rolling out after --timeout).
    #[arg(long)]
    pub wait: bool,
    /// How long --wait follows the rollout, a Go-style duration (90s, 5m).
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    pub timeout: String,
}

#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Only serve the simulated cluster and write a kubeconfig, until interrupted.
    #[arg(long)]
    pub serve: bool,
    /// Port on 127.0.0.1 (0 = any free port).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Where to write the kubeconfig for the demo cluster.
    #[arg(long, value_name = "FILE")]
    pub kubeconfig_out: Option<PathBuf>,
    /// Folder for the git repository of demo manifests (default: a temporary one, removed on
    /// exit); with --serve too, so `kdrift check` and `kubectl drift` have them.
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Scenario to play: `incident` (default) or `none`.
    #[arg(long, value_name = "NAME", default_value = "incident")]
    pub scenario: String,
    /// Serve a fleet of N demo clusters (at most 5: staging, prod-eu, prod-us, prod-4,
    /// prod-5), a kubeconfig context each, from one manifests repository with a folder per
    /// cluster; the scenario plays on prod-eu only. Without --serve, the live view opens on
    /// prod-eu and `:ctx` switches to another (one context at a time).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=5))]
    pub clusters: u8,
}

impl CommonArgs {
    /// Fold the user config file into the flags: `--theme` wins over `theme`; `readonly` from
    /// either. A bad file turns read-only on (it may be the file that says so) and is kept in
    /// `config_problem`, for the status bar or stderr.
    pub fn apply_user_config(&mut self) {
        let required = std::env::var_os(CONFIG_ENV).is_some_and(|v| !v.is_empty());
        if let Some(path) = crate::user_config::path() {
            self.apply_config_file(&path, required);
        }
    }

    /// [`CommonArgs::apply_user_config`] with the file at `path` (`required`: a missing file is
    /// a problem too).
    pub fn apply_config_file(&mut self, path: &Path, required: bool) {
        match crate::user_config::load(path, required) {
            Ok(config) => self.fold_config(config, path),
            Err(e) => {
                self.config_problem = Some(format!(
                    "{e} — read-only until it is fixed, other settings at their defaults"
                ));
                self.readonly_from = Some(ReadOnlyFrom {
                    flag: self.readonly,
                    file: None,
                    bad_file: Some(path.to_path_buf()),
                });
                self.readonly = true;
            }
        }
    }

    fn fold_config(&mut self, config: UserConfig, path: &Path) {
        if self.theme.is_none() {
            self.theme = config.theme;
        }
        if self.readonly || config.readonly {
            self.readonly_from = Some(ReadOnlyFrom {
                flag: self.readonly,
                file: config.readonly.then(|| path.to_path_buf()),
                bad_file: None,
            });
            self.readonly = true;
        }
    }

    /// Where read-only came from for these flags, if it is on.
    pub fn readonly_from(&self) -> Option<ReadOnlyFrom> {
        if !self.readonly {
            return None;
        }
        Some(self.readonly_from.clone().unwrap_or(ReadOnlyFrom {
            flag: true,
            file: None,
            bad_file: None,
        }))
    }

    /// What to connect to: `--kubeconfig`, `--context`, `-n`, `-A`.
    pub fn connection(&self) -> crate::cluster::client::ConnectionSettings {
        crate::cluster::client::ConnectionSettings {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.first().cloned(),
            namespace: self.namespace.clone(),
            all_namespaces: self.all_namespaces,
            http2: false,
        }
    }

    /// Whether more than one context is asked for (`--context` twice or more, `--all-contexts`).
    pub fn several_contexts(&self) -> bool {
        self.context.len() > 1 || self.all_contexts
    }

    /// `Err` with the sentence to print when several contexts are asked for and `what` (a
    /// command, or the live view) acts on one.
    pub fn one_context(&self, what: &str) -> Result<(), String> {
        if !self.several_contexts() {
            return Ok(());
        }
        let asked = if self.all_contexts {
            "--all-contexts".to_owned()
        } else {
            self.context
                .iter()
                .map(|c| format!("--context {c}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        Err(format!(
            "{what} acts on one context, and {asked} names several: pass --context once (run it once per context), or use `kdrift check` or `kdrift compare TYPE/NAME` across contexts"
        ))
    }

    /// These flags for `contexts` checked or watched together: each one's Argo CD Applications
    /// may say what the others' clusters run ([`crate::cluster::hub`]).
    pub fn with_peers(&self, contexts: &[String]) -> CommonArgs {
        CommonArgs {
            peers: Some(crate::cluster::hub::Peers::new(self.connection(), contexts)),
            ..self.clone()
        }
    }

    /// These flags for one of several contexts: `--context NAME` alone.
    pub fn for_context(&self, name: &str) -> CommonArgs {
        CommonArgs {
            context: vec![name.to_owned()],
            all_contexts: false,
            ..self.clone()
        }
    }

    /// The kustomize roots chosen for kubeconfig context `context`: `--overlay` (a folder as
    /// typed from here, else under the manifests root), and the context for `.kdrift.yaml`'s
    /// `kustomize.contexts`.
    pub fn kustomize_selection(&self, context: &str) -> crate::manifest::kustomize::Selection {
        let overlay = self
            .overlay
            .as_ref()
            .map(|overlay| match std::env::current_dir() {
                Ok(cwd) if overlay.is_relative() && cwd.join(overlay).is_dir() => {
                    crate::manifest::kustomize::tree::normalize(&cwd.join(overlay))
                }
                _ => overlay.clone(),
            });
        crate::manifest::kustomize::Selection {
            overlay,
            context: Some(context.to_owned()),
            ..Default::default()
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn both_settings_parse_and_fold_into_the_flags() {
        let path = Path::new("/home/op/.config/kdrift/config.toml");
        let config =
            crate::user_config::parse("readonly = true\ntheme = \"light\"\n", path).unwrap();
        let mut common = CommonArgs::default();
        common.fold_config(config.clone(), path);
        assert!(common.readonly);
        assert_eq!(common.theme.as_deref(), Some("light"));
        let from = common.readonly_from().unwrap();
        assert_eq!(
            from.refusal("revert"),
            "revert is disabled: kdrift runs read-only (readonly = true in \"/home/op/.config/kdrift/config.toml\"); set readonly = false in \"/home/op/.config/kdrift/config.toml\" to revert"
        );

        // The flag wins for the theme; read-only from both is named as both.
        let mut common = CommonArgs {
            theme: Some("colorblind".into()),
            readonly: true,
            ..CommonArgs::default()
        };
        common.fold_config(config, path);
        assert_eq!(common.theme.as_deref(), Some("colorblind"));
        assert!(
            common
                .readonly_from()
                .unwrap()
                .to_string()
                .starts_with("--readonly, and readonly = true in")
        );
    }

    #[test]
    fn context_once_is_one_context_and_twice_is_a_fleet() {
        use clap::Parser;
        let one = Cli::try_parse_from(["kdrift", "check", "--context", "a"]).unwrap();
        assert_eq!(one.common.connection().context.as_deref(), Some("a"));
        assert!(!one.common.several_contexts());
        assert!(one.common.one_context("kdrift diff").is_ok());

        let two =
            Cli::try_parse_from(["kdrift", "check", "--context", "a", "--context", "b"]).unwrap();
        assert_eq!(two.common.context, ["a", "b"]);
        assert!(two.common.several_contexts());
        assert_eq!(
            two.common.one_context("kdrift diff").unwrap_err(),
            "kdrift diff acts on one context, and --context a --context b names several: pass --context once (run it once per context), or use `kdrift check` or `kdrift compare TYPE/NAME` across contexts"
        );
        let b = two.common.for_context("b");
        assert_eq!(b.context, ["b"]);
        assert_eq!(b.connection().context.as_deref(), Some("b"));

        let all = Cli::try_parse_from(["kdrift", "check", "--all-contexts"]).unwrap();
        assert!(all.common.several_contexts());
        assert!(
            Cli::try_parse_from(["kdrift", "check", "--all-contexts", "--context", "a"]).is_err()
        );
        // The fleet demo: five clusters at most.
        assert!(Cli::try_parse_from(["kdrift", "demo", "--serve", "--clusters", "5"]).is_ok());
        assert!(Cli::try_parse_from(["kdrift", "demo", "--serve", "--clusters", "6"]).is_err());
    }

    #[test]
    fn the_flag_alone_is_named_as_the_flag() {
        let mut common = CommonArgs {
            readonly: true,
            ..CommonArgs::default()
        };
        common.fold_config(UserConfig::default(), Path::new("c.toml"));
        assert_eq!(
            common.readonly_from().unwrap().refusal("accept"),
            "accept is disabled: kdrift runs read-only (--readonly); run without --readonly to accept"
        );
        let mut common = CommonArgs::default();
        common.fold_config(UserConfig::default(), Path::new("c.toml"));
        assert_eq!(common.readonly_from(), None);
    }
}
