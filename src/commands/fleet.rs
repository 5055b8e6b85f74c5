//! Several kubeconfig contexts at once (`--context a --context b`, `--all-contexts`): `kdrift
//! check` over a fleet, one section per context. Each context runs on a task of its own,
//! connected, loaded and listed as a check of that context alone, so a cluster that is slow,
//! unreachable or forbidden costs its own time and says so in its own section.
use std::process::ExitCode;

use serde_json::{Map, Value, json};

use crate::cli::{CheckArgs, CommonArgs, OutputFormat};
use crate::drift::DriftReport;

use super::check::{Checked, check_one, print_report};
use super::{EXIT_ERROR, block_on};

/// The contexts asked for, in the order given (a repeated name once), or every context of the
/// kubeconfig with `--all-contexts`.
pub fn contexts(common: &CommonArgs) -> Result<Vec<String>, String> {
    if common.all_contexts {
        return crate::cluster::client::kubeconfig_contexts(&common.connection())
            .map_err(|e| e.to_string());
    }
    let mut names: Vec<String> = Vec::new();
    for name in &common.context {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    Ok(names)
}

/// One context's part of a fleet check.
pub(crate) struct Section {
    pub context: String,
    pub outcome: Result<Checked, String>,
}

impl Section {
    fn exit_code(&self) -> u8 {
        match &self.outcome {
            Ok(checked) => checked.report.exit_code(),
            Err(_) => EXIT_ERROR,
        }
    }

    /// The section's report; a context that could not be checked is a report of its error.
    fn report(&self) -> std::borrow::Cow<'_, DriftReport> {
        match &self.outcome {
            Ok(checked) => std::borrow::Cow::Borrowed(&checked.report),
            Err(e) => std::borrow::Cow::Owned(DriftReport {
                errors: vec![e.clone()],
                ..DriftReport::default()
            }),
        }
    }
}

/// The worst exit code of the sections (2 error over 1 drift over 0 in sync), as `kubectl diff`.
pub(crate) fn worst(sections: &[Section]) -> u8 {
    sections.iter().map(Section::exit_code).max().unwrap_or(0)
}

fn outcome_word(code: u8) -> &'static str {
    match code {
        0 => "in sync",
        1 => "drift",
        _ => "error",
    }
}

/// `kdrift check` over several contexts: the sections in the order asked, each checked
/// concurrently; exit the worst.
pub fn check(common: &CommonArgs, args: &CheckArgs) -> ExitCode {
    block_on(async {
        let names = match contexts(common) {
            Ok(names) => names,
            Err(e) => {
                tell!("kdrift: {e}");
                if args.output != OutputFormat::Text {
                    let report = DriftReport {
                        errors: vec![e],
                        ..DriftReport::default()
                    };
                    let _ = print_report(&report, args.output);
                }
                return EXIT_ERROR;
            }
        };
        let common = common.with_peers(&names);
        let tasks: Vec<(String, tokio::task::JoinHandle<_>)> = names
            .into_iter()
            .map(|name| {
                let common = common.for_context(&name);
                let args = args.clone();
                let task = tokio::spawn(async move {
                    check_one(&common, &args).await.map_err(|e| e.to_string())
                });
                (name, task)
            })
            .collect();
        let mut sections = Vec::new();
        for (context, task) in tasks {
            let outcome = match task.await {
                Ok(outcome) => outcome,
                Err(e) => Err(format!("the check of context \"{context}\" failed: {e}")),
            };
            sections.push(Section { context, outcome });
        }
        for section in &sections {
            match &section.outcome {
                Ok(checked) => {
                    for note in &checked.notes {
                        tell!("[{}] {note}", section.context);
                    }
                }
                Err(e) => tell!("kdrift: [{}] {e}", section.context),
            }
        }
        if let Err(e) = print_sections(&sections, args.output) {
            tell!("kdrift: cannot write the report: {e}");
            return EXIT_ERROR;
        }
        worst(&sections)
    })
}

/// The sections as text: a heading per context (its API server and which manifests describe
/// it), its report, then one line for the fleet.
pub(crate) fn to_text(sections: &[Section], now: jiff::Timestamp) -> String {
    let mut out = String::new();
    for section in sections {
        match &section.outcome {
            Ok(checked) => {
                out.push_str(&format!(
                    "== context {} ({})\n   manifests: {}\n",
                    section.context, checked.cluster_url, checked.source
                ));
                out.push_str(&checked.report.to_text(now));
            }
            Err(e) => {
                out.push_str(&format!(
                    "== context {} (not checked)\nerror: {e}\n",
                    section.context
                ));
            }
        }
        out.push('\n');
    }
    let each: Vec<String> = sections
        .iter()
        .map(|s| format!("{} {}", s.context, outcome_word(s.exit_code())))
        .collect();
    out.push_str(&format!(
        "{} contexts: {}\n",
        sections.len(),
        each.join(", ")
    ));
    out
}

/// The sections as JSON: `contexts` keyed by context name, each with its API server, its
/// manifests' source, its exit code and its report (the single-context report's shape), and
/// the worst exit code.
pub(crate) fn to_json(sections: &[Section]) -> Value {
    let mut contexts = Map::new();
    for section in sections {
        let (cluster, source) = match &section.outcome {
            Ok(checked) => (
                Value::String(checked.cluster_url.clone()),
                Value::String(checked.source.clone()),
            ),
            Err(_) => (Value::Null, Value::Null),
        };
        contexts.insert(
            section.context.clone(),
            json!({
                "cluster": cluster,
                "source": source,
                "exit_code": section.exit_code(),
                "report": section.report().to_json(),
            }),
        );
    }
    json!({
        "contexts": contexts,
        "exit_code": worst(sections),
    })
}

fn print_sections(sections: &[Section], format: OutputFormat) -> Result<(), String> {
    let now = jiff::Timestamp::now();
    match format {
        OutputFormat::Text => print!("{}", crate::text::printable(&to_text(sections, now))),
        OutputFormat::Github => {
            // A group per context in the job's log; the annotations as one context's check.
            for section in sections {
                println!("::group::context {}", section.context);
                print!(
                    "{}",
                    crate::text::printable(&section.report().to_github(now))
                );
                println!("::endgroup::");
            }
        }
        OutputFormat::Json => {
            let text =
                serde_json::to_string_pretty(&to_json(sections)).map_err(|e| e.to_string())?;
            say!("{text}");
        }
        OutputFormat::Yaml => {
            let text = serde_yaml::to_string(&to_json(sections)).map_err(|e| e.to_string())?;
            print!("{text}");
        }
    }
    Ok(())
}
