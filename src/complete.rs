//! Shell completion that knows the manifests: `kdrift diff deploy/<TAB>` offers the Deployments
//! of the manifests folder (as `check` indexes it, kustomize roots rendered), without asking
//! the cluster: a TAB must answer at once, also offline.
//!
//! Two doors, both built on clap_complete's engine and the same candidates:
//! - bash, zsh, fish, elvish and PowerShell load `kdrift completions SHELL`, a registration
//!   that calls kdrift back with `COMPLETE=SHELL` on every TAB ([`complete_from_env`]);
//! - kubectl (1.26+) completes `kubectl drift …` by running `kubectl_complete-drift` from PATH
//!   with the words after `drift`, and reads cobra's answer: one candidate per line, then
//!   `:<directive>` ([`kubectl_plugin`]).
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use clap::CommandFactory;
use clap_complete::CompletionCandidate;
use clap_complete::env::EnvCompleter;

use crate::cli::{Cli, CommonArgs};
use crate::manifest::ManifestIndex;

/// The environment variable the registration sets when it calls kdrift back.
const VAR: &str = "COMPLETE";

/// Cobra's `ShellCompDirectiveNoFileComp`: offer no file names when there is no candidate.
const NO_FILE_COMP: u32 = 4;

/// The command line with the completers of its `TYPE/NAME` arguments.
pub fn command(name: &'static str) -> clap::Command {
    let mut command = Cli::command().name(name).bin_name(name);
    for sub in ["diff", "accept", "revert", "rollback", "logs"] {
        command = command.mut_subcommand(sub, |sub| {
            sub.mut_arg("target", |arg| {
                arg.add(clap_complete::ArgValueCompleter::new(complete_target))
            })
        });
    }
    command
}

/// Answers a TAB and exits when the process was started by a registration (`COMPLETE` set);
/// otherwise returns and the program runs as usual.
pub fn complete_from_env(name: &'static str) {
    clap_complete::CompleteEnv::with_factory(move || command(name))
        .var(VAR)
        .complete();
}

/// The registration script of `shell`: loaded by the shell, it calls this same program (as it
/// was started: from PATH, or by its path) with `COMPLETE=SHELL` to complete.
pub fn write_registration(
    shell: clap_complete::Shell,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let completer = match std::env::args_os().next().map(PathBuf::from) {
        Some(program) if program.components().count() > 1 => std::path::absolute(&program)
            .unwrap_or(program)
            .to_string_lossy()
            .into_owned(),
        _ => "kdrift".to_owned(),
    };
    let registrar: &dyn EnvCompleter = match shell {
        clap_complete::Shell::Bash => &clap_complete::env::Bash,
        clap_complete::Shell::Elvish => &clap_complete::env::Elvish,
        clap_complete::Shell::Fish => &clap_complete::env::Fish,
        clap_complete::Shell::PowerShell => &clap_complete::env::Powershell,
        clap_complete::Shell::Zsh => &clap_complete::env::Zsh,
        other => {
            return Err(std::io::Error::other(format!(
                "no completion for {other}: use bash, zsh, fish, elvish or powershell"
            )));
        }
    };
    registrar.write_registration(VAR, "kdrift", "kdrift", &completer, out)
}

/// `kubectl_complete-drift WORDS… CURRENT`: the candidates for the last word of `kubectl drift
/// WORDS… CURRENT`, in cobra's format.
pub fn kubectl_plugin(words: Vec<OsString>, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut command = command("kubectl drift");
    let mut args: Vec<OsString> = vec!["kubectl-drift".into()];
    args.extend(words);
    if args.len() == 1 {
        args.push(OsString::new());
    }
    let index = args.len() - 1;
    let current_dir = std::env::current_dir().ok();
    let candidates =
        clap_complete::engine::complete(&mut command, args, index, current_dir.as_deref())?;
    for candidate in candidates.iter().filter(|c| !c.is_hide_set()) {
        let value = candidate.get_value().to_string_lossy();
        match candidate.get_help() {
            Some(help) => writeln!(out, "{value}\t{help}")?,
            None => writeln!(out, "{value}")?,
        }
    }
    writeln!(out, ":{NO_FILE_COMP}")
}

/// The `TYPE/NAME`s of the manifests that start with `current`.
fn complete_target(current: &OsStr) -> Vec<CompletionCandidate> {
    let words: Vec<OsString> = std::env::args_os().collect();
    let scope = Scope::from_words(&words);
    let common = CommonArgs {
        manifests: scope.manifests,
        overlay: scope.overlay,
        ..CommonArgs::default()
    };
    let Ok(root) = crate::commands::context::manifests_root(&common) else {
        return Vec::new();
    };
    // The context only picks `.kdrift.yaml`'s `kustomize.contexts`; reading it is a file read.
    let context = scope.context.clone().unwrap_or_else(|| {
        crate::cluster::client::current_context(&crate::cluster::client::ConnectionSettings {
            kubeconfig: scope.kubeconfig.clone(),
            ..Default::default()
        })
        .unwrap_or_default()
    });
    let index = ManifestIndex::load_with(&root, "default", common.kustomize_selection(&context));
    let objects = index
        .objects()
        .filter(|o| match &scope.namespace {
            Some(ns) => o.key.namespace.is_empty() || &o.key.namespace == ns,
            None => true,
        })
        .map(|o| {
            (
                o.key.kind.as_str(),
                o.key.namespace.as_str(),
                o.key.name.as_str(),
            )
        });
    targets(objects, &current.to_string_lossy())
        .into_iter()
        .map(|(value, help)| CompletionCandidate::new(value).help(Some(help.into())))
        .collect()
}

/// The candidates for `current` among `(kind, namespace, name)`, each with its namespace as
/// help: `deployment/web` for `dep`; after a slash, the type as typed (`deploy/web` for
/// `deploy/w`), when it names the kind as kubectl would (the kind, its plural, a prefix of the
/// kind, or its well-known short name).
fn targets<'a>(
    objects: impl Iterator<Item = (&'a str, &'a str, &'a str)>,
    current: &str,
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (kind, namespace, name) in objects {
        let lower = kind.to_ascii_lowercase();
        let value = match current.split_once('/') {
            Some((ty, typed_name)) => {
                if !names_kind(&ty.to_ascii_lowercase(), &lower) || !name.starts_with(typed_name) {
                    continue;
                }
                format!("{ty}/{name}")
            }
            None => {
                let value = format!("{lower}/{name}");
                if !value.starts_with(current) {
                    continue;
                }
                value
            }
        };
        let help = if namespace.is_empty() {
            "cluster-scoped".to_owned()
        } else {
            format!("namespace {namespace}")
        };
        match out.iter_mut().find(|(v, _)| *v == value) {
            // The same name in several namespaces: one candidate, every namespace in its help.
            Some((_, seen)) if !seen.ends_with(&namespace.to_string()) => {
                seen.push_str(", ");
                seen.push_str(namespace);
            }
            Some(_) => {}
            None => out.push((value, help)),
        }
    }
    out.sort();
    out
}

/// Whether `ty` (lower case, as typed before the slash) names `kind` (lower case): the kind,
/// its plural, `kind.group` forms, a prefix of the kind, or the short name kubectl knows.
fn names_kind(ty: &str, kind: &str) -> bool {
    let ty = ty.split('.').next().unwrap_or(ty);
    if ty.is_empty() {
        return false;
    }
    ty == kind || ty == plural(kind) || kind.starts_with(ty) || short_name(kind) == Some(ty)
}

/// The plural the API server gives a kind (lower case): `ingresses`, `networkpolicies`.
fn plural(kind: &str) -> String {
    if kind.ends_with('s') {
        format!("{kind}es")
    } else if let Some(stem) = kind.strip_suffix('y') {
        format!("{stem}ies")
    } else {
        format!("{kind}s")
    }
}

/// The short names the API server declares for the built-in kinds (`kubectl api-resources`).
fn short_name(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "configmap" => "cm",
        "cronjob" => "cj",
        "customresourcedefinition" => "crd",
        "daemonset" => "ds",
        "deployment" => "deploy",
        "endpoints" => "ep",
        "horizontalpodautoscaler" => "hpa",
        "ingress" => "ing",
        "limitrange" => "limits",
        "namespace" => "ns",
        "networkpolicy" => "netpol",
        "persistentvolumeclaim" => "pvc",
        "persistentvolume" => "pv",
        "poddisruptionbudget" => "pdb",
        "priorityclass" => "pc",
        "replicaset" => "rs",
        "resourcequota" => "quota",
        "service" => "svc",
        "serviceaccount" => "sa",
        "statefulset" => "sts",
        "storageclass" => "sc",
        _ => return None,
    })
}

/// The flags of the command line being completed that choose the manifests and namespace.
#[derive(Debug, Default, PartialEq)]
struct Scope {
    manifests: Option<PathBuf>,
    kubeconfig: Option<PathBuf>,
    context: Option<String>,
    overlay: Option<PathBuf>,
    namespace: Option<String>,
}

impl Scope {
    /// Reads `--manifests`, `--overlay`, `--kubeconfig`, `--context` and `-n`/`--namespace`
    /// (`-A` clears it) from the words
    /// of the command line (those after `--`, as the registration passes them).
    fn from_words(words: &[OsString]) -> Scope {
        let words: Vec<String> = match words.iter().position(|w| w == "--") {
            Some(at) => &words[at + 1..],
            None => words,
        }
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
        let mut scope = Scope::default();
        let mut at = 0;
        while at < words.len() {
            let word = words[at].as_str();
            let (flag, inline) = match word.split_once('=') {
                Some((flag, value)) if flag.starts_with('-') => (flag, Some(value.to_owned())),
                _ => (word, None),
            };
            let takes_value = matches!(
                flag,
                "--manifests" | "--overlay" | "--kubeconfig" | "--context" | "-n" | "--namespace"
            );
            let value = if takes_value && inline.is_none() {
                at += 1;
                words.get(at).cloned()
            } else {
                inline
            };
            match (flag, value) {
                ("--manifests", Some(v)) => scope.manifests = Some(PathBuf::from(v)),
                ("--overlay", Some(v)) => scope.overlay = Some(PathBuf::from(v)),
                ("--kubeconfig", Some(v)) => scope.kubeconfig = Some(PathBuf::from(v)),
                ("--context", Some(v)) => scope.context = Some(v),
                ("-n" | "--namespace", Some(v)) => scope.namespace = Some(v),
                ("-A" | "--all-namespaces", _) => scope.namespace = None,
                _ => {}
            }
            at += 1;
        }
        scope
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OBJECTS: [(&str, &str, &str); 5] = [
        ("Deployment", "shop", "web"),
        ("Deployment", "payments", "web"),
        ("Deployment", "shop", "worker"),
        ("Service", "shop", "web"),
        ("Namespace", "", "shop"),
    ];

    fn values(current: &str) -> Vec<String> {
        targets(OBJECTS.into_iter(), current)
            .into_iter()
            .map(|(v, _)| v)
            .collect()
    }

    #[test]
    fn a_type_prefix_offers_kind_and_name_and_a_typed_type_is_kept() {
        assert_eq!(values("dep"), ["deployment/web", "deployment/worker"]);
        assert_eq!(values("deploy/w"), ["deploy/web", "deploy/worker"]);
        assert_eq!(values("deployments/wo"), ["deployments/worker"]);
        assert_eq!(values("deployments.apps/wo"), ["deployments.apps/worker"]);
        assert_eq!(values("svc/"), ["svc/web"]);
        assert_eq!(values("ns/"), ["ns/shop"]);
        assert_eq!(values("cm/"), Vec::<String>::new());
        assert_eq!(values("/web"), Vec::<String>::new());
    }

    #[test]
    fn one_name_in_two_namespaces_is_one_candidate_naming_both() {
        let all = targets(OBJECTS.into_iter(), "deployment/web");
        assert_eq!(
            all,
            [(
                "deployment/web".to_owned(),
                "namespace shop, payments".to_owned()
            )]
        );
    }

    #[test]
    fn the_scope_is_read_from_the_words_after_the_escape() {
        let words: Vec<OsString> = [
            "kdrift",
            "--",
            "kdrift",
            "--manifests=k8s",
            "-n",
            "shop",
            "diff",
            "--overlay",
            "overlays/prod",
            "dep",
        ]
        .into_iter()
        .map(OsString::from)
        .collect();
        assert_eq!(
            Scope::from_words(&words),
            Scope {
                manifests: Some(PathBuf::from("k8s")),
                overlay: Some(PathBuf::from("overlays/prod")),
                namespace: Some("shop".to_owned()),
                ..Scope::default()
            }
        );
        let all: Vec<OsString> = ["kdrift", "-n", "shop", "-A", "diff"]
            .into_iter()
            .map(OsString::from)
            .collect();
        assert_eq!(Scope::from_words(&all).namespace, None);
    }
}
