//! `helm rollback` through the user's helm (never a reimplementation): a release back on its
//! previous revision, or the one named, in the kubeconfig and context kdrift talks to.
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// How long helm may take: a rollback without `--wait` only writes the objects and a record.
const LIMIT: Duration = Duration::from_secs(300);

/// The arguments of `helm rollback RELEASE [REVISION] -n NAMESPACE`, in `context` of
/// `kubeconfig` (when one is named; else helm's own, as kdrift's).
pub fn args(
    release: &str,
    namespace: &str,
    revision: Option<u64>,
    kubeconfig: Option<&Path>,
    context: &str,
) -> Vec<String> {
    let mut args = vec!["rollback".to_owned(), release.to_owned()];
    if let Some(revision) = revision {
        args.push(revision.to_string());
    }
    args.extend(["--namespace".to_owned(), namespace.to_owned()]);
    if let Some(kubeconfig) = kubeconfig {
        args.extend(["--kubeconfig".to_owned(), kubeconfig.display().to_string()]);
    }
    if !context.is_empty() && context != "in-cluster" {
        args.extend(["--kube-context".to_owned(), context.to_owned()]);
    }
    args
}

/// Runs `helm ARGS` ([`args`]); its output, or why it failed.
pub fn run(args: &[String]) -> Result<String, String> {
    let helm = super::render::helm().ok_or_else(|| {
        "no helm on PATH to roll the release back with: install helm (or set KDRIFT_HELM to its path)"
            .to_owned()
    })?;
    let mut command = Command::new(&helm.program);
    command.args(args);
    let finished = crate::process::run_bounded(command, LIMIT)
        .map_err(|e| format!("cannot run {}: {e}", helm.program.display()))?;
    if finished.ok {
        Ok(finished.stdout.trim().to_owned())
    } else {
        Err(format!("helm rollback failed: {}", finished.stderr.trim()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn the_context_and_kubeconfig_kdrift_uses_are_helm_s() {
        assert_eq!(
            args("web", "shop", Some(2), Some(Path::new("/k/config")), "prod").join(" "),
            "rollback web 2 --namespace shop --kubeconfig /k/config --kube-context prod"
        );
        assert_eq!(
            args("web", "shop", None, None, "in-cluster").join(" "),
            "rollback web --namespace shop"
        );
    }
}
