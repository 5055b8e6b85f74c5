//! `kdrift logs TYPE/NAME`: the log of a workload's newest unready pod (its newest pod when all
//! are ready), for scripts. The pods are those of the workload's `spec.selector.matchLabels`
//! (Deployments, StatefulSets and DaemonSets alike). Piped, the bytes are written as the
//! container wrote them; on a terminal, each line is made safe to show. Exit 0, else 2 with a
//! message on stderr.
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use futures::io::{AsyncBufRead, AsyncBufReadExt};

use crate::cli::{CommonArgs, LogsArgs};
use crate::cluster::client::connect;
use crate::cluster::logs::{LineReader, LogLine, LogParams, choose_container};
use crate::cluster::workload_pods::{WorkloadPods, is_ready, not_scheduled, reads_pods_of};

use super::{EXIT_ERROR, EXIT_IN_SYNC, block_on};

pub fn run(common: &CommonArgs, args: &LogsArgs) -> ExitCode {
    let target = match super::target::parse(&args.target) {
        Ok(t) => t,
        Err(e) => {
            tell!("kdrift: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    if !reads_pods_of(&target.ty) {
        tell!(
            "kdrift: logs reads the pods of a Deployment, StatefulSet or DaemonSet (deploy/NAME, sts/NAME, ds/NAME), not \"{}\"",
            target.ty
        );
        return ExitCode::from(EXIT_ERROR);
    }
    block_on(async move {
        let conn = match connect(&common.connection()).await {
            Ok(conn) => conn,
            Err(e) => {
                tell!("kdrift: {e}");
                return EXIT_ERROR;
            }
        };
        let namespace = conn.scope.as_namespace().unwrap_or("default");
        let Some(workload) = WorkloadPods::new(&conn.client, &target.ty, namespace, &target.name)
        else {
            return EXIT_ERROR; // (Not reached: the type was checked above.)
        };
        match logs(&workload, args).await {
            Ok(()) => EXIT_IN_SYNC,
            Err(e) => {
                tell!("kdrift: {e}");
                EXIT_ERROR
            }
        }
    })
}

/// The log of the pod of `workload` a script wants, to stdout.
async fn logs(workload: &WorkloadPods, args: &LogsArgs) -> Result<(), String> {
    let pod = workload.pod().await?;
    let name = pod.metadata.name.clone().unwrap_or_default();
    // A pod no node took has run nothing: the server answers its log with nothing at all,
    // which must not read as an empty log.
    if let Some(why) = not_scheduled(&pod) {
        return Err(format!(
            "pod {}/{name} has no log: it is not scheduled to a node, so none of its containers has run ({why})",
            workload.namespace
        ));
    }
    let (_, container) = choose_container(&pod, args.container.as_deref())?;
    let state = if is_ready(&pod) { "ready" } else { "not ready" };
    tell!(
        "kdrift: pod {}/{name} ({state}), container {container}",
        workload.namespace
    );
    let params = LogParams {
        container: Some(container),
        follow: args.follow,
        previous: args.previous,
        tail_lines: args.tail,
        ..LogParams::default()
    };
    let reader = workload.log(&name, &params).await?;
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
