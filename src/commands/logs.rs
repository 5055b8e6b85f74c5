//! `kdrift logs TYPE/NAME`: the log of a workload's newest unready pod (its newest pod when all
//! are ready), for scripts. The pods are those of the workload's `spec.selector.matchLabels`
//! (Deployments, StatefulSets and DaemonSets alike). Piped, the bytes are written as the
//! container wrote them; on a terminal, each line is made safe to show. Exit 0, else 2 with a
//! message on stderr.
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use futures::io::{AsyncBufRead, AsyncBufReadExt};
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, LogParams};

use crate::cli::{CommonArgs, LogsArgs};
use crate::cluster::client::connect;
use crate::cluster::logs::{LineReader, LogLine, choose_container, log_error};

use super::{EXIT_ERROR, EXIT_IN_SYNC, block_on};
use crate::cluster::describe;

/// The workload kinds whose pods `logs` reads, by the names kubectl accepts.
fn workload(ty: &str) -> Option<(&'static str, ApiResource)> {
    match ty.to_ascii_lowercase().as_str() {
        "deploy" | "deployment" | "deployments" | "deployment.apps" | "deployments.apps" => {
            Some(("Deployment", ApiResource::erase::<Deployment>(&())))
        }
        "sts" | "statefulset" | "statefulsets" | "statefulset.apps" | "statefulsets.apps" => {
            Some(("StatefulSet", ApiResource::erase::<StatefulSet>(&())))
        }
        "ds" | "daemonset" | "daemonsets" | "daemonset.apps" | "daemonsets.apps" => {
            Some(("DaemonSet", ApiResource::erase::<DaemonSet>(&())))
        }
        _ => None,
    }
}

pub fn run(common: &CommonArgs, args: &LogsArgs) -> ExitCode {
    let target = match super::target::parse(&args.target) {
        Ok(t) => t,
        Err(e) => {
            tell!("kdrift: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    let Some((kind, resource)) = workload(&target.ty) else {
        tell!(
            "kdrift: logs reads the pods of a Deployment, StatefulSet or DaemonSet (deploy/NAME, sts/NAME, ds/NAME), not \"{}\"",
            target.ty
        );
        return ExitCode::from(EXIT_ERROR);
    };
    block_on(async move {
        let conn = match connect(&common.connection()).await {
            Ok(conn) => conn,
            Err(e) => {
                tell!("kdrift: {e}");
                return EXIT_ERROR;
            }
        };
        let namespace = conn.scope.as_namespace().unwrap_or("default").to_owned();
        let workload = Workload {
            client: conn.client,
            namespace,
            kind,
            resource,
            name: target.name,
        };
        match workload.logs(args).await {
            Ok(()) => EXIT_IN_SYNC,
            Err(e) => {
                tell!("kdrift: {e}");
                EXIT_ERROR
            }
        }
    })
}

struct Workload {
    client: kube::Client,
    namespace: String,
    kind: &'static str,
    resource: ApiResource,
    name: String,
}

impl Workload {
    fn what(&self) -> String {
        format!(
            "{} {}/{}",
            self.kind.to_lowercase(),
            self.namespace,
            self.name
        )
    }

    /// The workload's `spec.selector.matchLabels`.
    async fn selector(&self) -> Result<BTreeMap<String, String>, String> {
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.client.clone(), &self.namespace, &self.resource);
        let object = match api.get(&self.name).await {
            Ok(o) => o,
            Err(kube::Error::Api(s)) if s.code == 404 => {
                return Err(format!(
                    "no {} in namespace \"{}\"",
                    self.what(),
                    self.namespace
                ));
            }
            Err(e) => return Err(format!("cannot read {}: {}", self.what(), describe(&e))),
        };
        let labels: BTreeMap<String, String> = object
            .data
            .pointer("/spec/selector/matchLabels")
            .and_then(|m| serde_json::from_value(m.clone()).ok())
            .unwrap_or_default();
        if labels.is_empty() {
            return Err(format!(
                "{} selects its pods without matchLabels: kdrift logs cannot find them",
                self.what()
            ));
        }
        Ok(labels)
    }

    /// The newest unready pod of the workload, else its newest pod.
    async fn pod(&self) -> Result<Pod, String> {
        let labels = self.selector().await?;
        let selector = labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &self.namespace);
        let list = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| format!("cannot list the pods of {}: {}", self.what(), describe(&e)))?;
        newest_pod(list.items)
            .ok_or_else(|| format!("{} has no pods (selector {selector})", self.what()))
    }

    async fn logs(&self, args: &LogsArgs) -> Result<(), String> {
        let pod = self.pod().await?;
        let name = pod.metadata.name.clone().unwrap_or_default();
        // A pod no node took has run nothing: the server answers its log with nothing at all,
        // which must not read as an empty log.
        if let Some(why) = not_scheduled(&pod) {
            return Err(format!(
                "pod {}/{name} has no log: it is not scheduled to a node, so none of its containers has run ({why})",
                self.namespace
            ));
        }
        let (_, container) = choose_container(&pod, args.container.as_deref())?;
        let state = if is_ready(&pod) { "ready" } else { "not ready" };
        tell!(
            "kdrift: pod {}/{name} ({state}), container {container}",
            self.namespace
        );
        let params = LogParams {
            container: Some(container),
            follow: args.follow,
            previous: args.previous,
            tail_lines: args.tail,
            ..LogParams::default()
        };
        let api: Api<Pod> = Api::namespaced(self.client.clone(), &self.namespace);
        let reader = api.log_stream(&name, &params).await.map_err(|e| match &e {
            kube::Error::Api(s) => format!(
                "cannot read the log of pod {name}: {} ({}, HTTP {})",
                log_error(&e).0,
                s.reason,
                s.code
            ),
            other => format!("cannot read the log of pod {name}: {other}"),
        })?;
        let out = std::io::stdout();
        let shown = if out.is_terminal() {
            copy_lines(reader, &mut out.lock()).await
        } else {
            copy_bytes(reader, &mut out.lock()).await
        };
        match shown {
            Ok(()) => Ok(()),
            // `| head`: the reader has what it wanted.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            Err(e) => Err(format!("the log of pod {name} broke off: {e}")),
        }
    }
}

/// Why `pod` is on no node (the scheduler's `PodScheduled` condition, else that it is pending),
/// or `None` when it has a node.
pub fn not_scheduled(pod: &Pod) -> Option<String> {
    let on_node = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .is_some_and(|n| !n.is_empty());
    if on_node {
        return None;
    }
    let condition = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.type_ == "PodScheduled" && c.status == "False")
        });
    Some(match condition {
        Some(c) => match (c.reason.as_deref(), c.message.as_deref()) {
            (Some(reason), Some(message)) => format!("{reason}: {message}"),
            (Some(reason), None) => reason.to_owned(),
            (None, Some(message)) => message.to_owned(),
            (None, None) => "not scheduled yet".to_owned(),
        },
        None => "not scheduled yet".to_owned(),
    })
}

fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// The pod a script wants the log of: the newest of those not ready, else the newest; pods
/// being deleted last.
pub fn newest_pod(pods: Vec<Pod>) -> Option<Pod> {
    pods.into_iter().max_by_key(|p| {
        (
            p.metadata.deletion_timestamp.is_none(),
            !is_ready(p),
            p.metadata.creation_timestamp.as_ref().map(|t| t.0),
            p.metadata.name.clone(),
        )
    })
}

/// The bytes as the container wrote them.
async fn copy_bytes<R: AsyncBufRead + Unpin>(
    mut reader: R,
    out: &mut impl Write,
) -> std::io::Result<()> {
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return out.flush();
        }
        out.write_all(buf)?;
        let used = buf.len();
        reader.consume_unpin(used);
        // A follow shows each line as it comes.
        out.flush()?;
    }
}

/// Each line made safe for a terminal (escapes shown, not obeyed), cut lines said so.
async fn copy_lines<R: AsyncBufRead + Unpin>(
    mut reader: R,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let mut lines = LineReader::default();
    while let Some((bytes, len)) = lines.next(&mut reader).await? {
        let line = LogLine::from_bytes(&bytes, len);
        let note = crate::app::logs::cut_note(&line).unwrap_or_default();
        writeln!(out, "{note}{}", line.text)?;
        out.flush()?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn pod(name: &str, created: &str, ready: bool) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "creationTimestamp": created},
            "status": {"conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}
        }))
        .unwrap()
    }

    #[test]
    fn the_newest_unready_pod_is_chosen_else_the_newest() {
        let pods = vec![
            pod("old-unready", "2026-01-01T00:00:00Z", false),
            pod("new-ready", "2026-01-03T00:00:00Z", true),
            pod("mid-unready", "2026-01-02T00:00:00Z", false),
        ];
        let name = |p: Option<Pod>| p.and_then(|p| p.metadata.name);
        assert_eq!(name(newest_pod(pods)).as_deref(), Some("mid-unready"));
        let ready = vec![
            pod("a", "2026-01-01T00:00:00Z", true),
            pod("b", "2026-01-02T00:00:00Z", true),
        ];
        assert_eq!(name(newest_pod(ready)).as_deref(), Some("b"));
        assert!(newest_pod(Vec::new()).is_none());
        assert_eq!(workload("STS").map(|w| w.0), Some("StatefulSet"));
        assert_eq!(
            workload("deployments.apps").map(|w| w.0),
            Some("Deployment")
        );
        assert!(workload("svc").is_none());
    }

    #[test]
    fn a_pod_on_no_node_says_why_from_the_scheduler() {
        let pending: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-1"},
            "spec": {"containers": [{"name": "web"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                "reason": "Unschedulable", "message": "0/3 nodes are available: 3 Insufficient cpu."}]}
        }))
        .unwrap();
        assert_eq!(
            not_scheduled(&pending).as_deref(),
            Some("Unschedulable: 0/3 nodes are available: 3 Insufficient cpu.")
        );
        let running: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-2"},
            "spec": {"nodeName": "node-a", "containers": [{"name": "web"}]}
        }))
        .unwrap();
        assert_eq!(not_scheduled(&running), None);
    }

    #[tokio::test]
    async fn on_a_terminal_escapes_are_shown_and_piped_bytes_are_kept() {
        let input: &[u8] = b"\x1b[31mred\x1b[0m \xff\nplain\n";
        let mut shown = Vec::new();
        copy_lines(futures::io::BufReader::new(input), &mut shown)
            .await
            .unwrap();
        assert_eq!(
            String::from_utf8(shown).unwrap(),
            "^[[31mred^[[0m \u{fffd}\nplain\n"
        );
        let mut raw = Vec::new();
        copy_bytes(futures::io::BufReader::new(input), &mut raw)
            .await
            .unwrap();
        assert_eq!(raw, input);
    }
}
