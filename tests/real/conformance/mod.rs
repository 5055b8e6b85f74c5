//! The demo cluster's conformance to a real API server: the kubectl script of
//! testdata/conformance/script.yaml run against both (each in a namespace of the same name),
//! compared command by command: exit status, kubectl's printed result, and the object the command
//! names as stored (masked: `mask.rs`; compared field by field: `diff.rs`).
//!
//! The differences that remain are listed, each with why it stays, in
//! testdata/conformance/known-differences.yaml. The test fails on a difference not listed, and on
//! a listed one that no longer differs, so the list stays true; it prints its counts. kubectl
//! 1.36 drives it (`KDRIFT_CONFORMANCE_KUBECTL`, else the tests' kubectl when it is a 1.36): the
//! list is that kubectl's.

mod diff;
mod mask;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use crate::common::{Cluster, kubectl_bin};
use crate::server::real;
use mask::Masks;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/conformance");
/// How long one command may take before it is stopped (and its result is "timed out").
const COMMAND_LIMIT: Duration = Duration::from_secs(120);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Script {
    generated: Vec<String>,
    cleanup: Vec<String>,
    commands: Vec<Step>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    id: String,
    run: String,
    #[serde(default)]
    object: Option<String>,
    #[serde(default)]
    settle: Option<String>,
    #[serde(default)]
    editor: Option<String>,
    #[serde(default)]
    stop_after: Option<f64>,
}

/// One entry of known-differences.yaml: differences of one command (`id`) or of several that
/// differ for the same reason (`ids`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Known {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    ids: Vec<String>,
    differs: Vec<String>,
    why: String,
}

impl Known {
    fn ids(&self) -> impl Iterator<Item = &str> {
        self.id.iter().chain(&self.ids).map(String::as_str)
    }
}

/// An object as the command left it.
#[derive(Clone, PartialEq)]
enum Stored {
    Absent,
    Present(Value),
    /// `kubectl get` failed otherwise (its message).
    Unreadable(String),
}

/// What one command gave on one server.
struct Outcome {
    /// None: stopped (`stop_after`) or timed out.
    exit: Option<i32>,
    output: String,
    object: Option<Stored>,
    /// How long the step took, settling and reading the object included.
    took: Duration,
}

/// One server the script runs against: its kubeconfig (with the script's namespace as the
/// context's), and a kubectl home.
struct Side {
    kubeconfig: PathBuf,
    home: tempfile::TempDir,
    kubectl: PathBuf,
}

fn read<T: for<'de> Deserialize<'de>>(file: &str) -> T {
    let path = Path::new(DIR).join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The kubectl of the conformance run, or why there is none (then the test is skipped, saying
/// so). A kubectl named by `KDRIFT_CONFORMANCE_KUBECTL` must be a 1.36.
fn conformance_kubectl() -> Result<PathBuf, String> {
    let minor = |path: &Path| -> Option<u32> {
        let out = Command::new(path)
            .args(["version", "--client", "-o", "json"])
            .output()
            .ok()?;
        let version: Value = serde_json::from_slice(&out.stdout).ok()?;
        version["clientVersion"]["minor"]
            .as_str()?
            .trim_end_matches('+')
            .parse()
            .ok()
    };
    if let Some(named) = std::env::var_os("KDRIFT_CONFORMANCE_KUBECTL").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(named);
        let found = minor(&path);
        assert_eq!(
            found,
            Some(36),
            "KDRIFT_CONFORMANCE_KUBECTL={} is not a kubectl 1.36 (known-differences.yaml is 1.36's)",
            path.display()
        );
        return Ok(path);
    }
    let tests = kubectl_bin::path();
    match minor(&tests) {
        Some(36) => Ok(tests),
        other => Err(format!(
            "the conformance test needs kubectl 1.36 (known-differences.yaml is that kubectl's); \
             {} is 1.{}: name one in KDRIFT_CONFORMANCE_KUBECTL (.ci/run downloads 1.36.3)",
            tests.display(),
            other.map_or("?".into(), |m| m.to_string())
        )),
    }
}

impl Side {
    fn new(name: &'static str, kubeconfig: &Path, namespace: &str, kubectl: &Path) -> Side {
        let home = tempfile::tempdir().unwrap();
        let own = home.path().join("kubeconfig");
        std::fs::copy(kubeconfig, &own).unwrap();
        let side = Side {
            kubeconfig: own,
            home,
            kubectl: kubectl.to_path_buf(),
        };
        let out = side.kubectl(&[
            "config",
            "set-context",
            "--current",
            &format!("--namespace={namespace}"),
        ]);
        assert_eq!(out.exit, Some(0), "{name}: {}", out.output);
        side
    }

    fn command(&self, args: &[String]) -> Command {
        let mut cmd = Command::new(&self.kubectl);
        cmd.args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", self.home.path())
            .env("KUBECACHEDIR", self.home.path().join("cache"))
            .env("LC_ALL", "C")
            .env_remove("KUBECTL_EXTERNAL_DIFF")
            .env_remove("KUBE_EDITOR")
            .env_remove("EDITOR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    fn kubectl(&self, args: &[&str]) -> Outcome {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        self.run(self.command(&args), None)
    }

    /// Runs `cmd`; stopped after `stop_after` (or [`COMMAND_LIMIT`]). Output: stdout, then
    /// stderr.
    fn run(&self, mut cmd: Command, stop_after: Option<Duration>) -> Outcome {
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", self.kubectl.display()));
        let mut stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let out = std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = std::io::Read::read_to_end(&mut stdout, &mut s);
            s
        });
        let err = std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = std::io::Read::read_to_end(&mut stderr, &mut s);
            s
        });
        let limit = stop_after.unwrap_or(COMMAND_LIMIT);
        let began = Instant::now();
        let exit = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status.code();
            }
            if began.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut output = String::from_utf8_lossy(&out.join().unwrap()).into_owned();
        output.push_str(&String::from_utf8_lossy(&err.join().unwrap()));
        if exit.is_none() && stop_after.is_none() {
            output.push_str(&format!("\n(timed out after {COMMAND_LIMIT:?})"));
        }
        Outcome {
            exit,
            output,
            object: None,
            took: began.elapsed(),
        }
    }

    /// The object as stored: `kubectl get -o json --show-managed-fields`.
    fn get(&self, target: &str) -> Stored {
        let out = self.kubectl(&["get", target, "-o", "json", "--show-managed-fields"]);
        match out.exit {
            Some(0) => serde_json::from_str(&out.output)
                .map(Stored::Present)
                .unwrap_or_else(|e| Stored::Unreadable(format!("{e}: {}", out.output))),
            _ if out.output.contains("(NotFound)") => Stored::Absent,
            _ => Stored::Unreadable(out.output),
        }
    }

    /// Waits (up to two minutes) until the Deployment's rollout is done, or it is paused or
    /// gone, as `kubectl rollout status` judges done.
    fn settle(&self, target: &str) {
        let began = Instant::now();
        while began.elapsed() < Duration::from_secs(120) {
            let Stored::Present(d) = self.get(target) else {
                return;
            };
            let spec = d["spec"]["replicas"].as_i64().unwrap_or(1);
            let status = &d["status"];
            let count = |k: &str| status[k].as_i64().unwrap_or(0);
            let done = status["observedGeneration"].as_i64()
                >= d["metadata"]["generation"].as_i64()
                && count("updatedReplicas") == spec
                && count("replicas") == spec
                && count("availableReplicas") == spec
                && count("terminatingReplicas") == 0;
            if done || d["spec"]["paused"] == true {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The object once two reads 200 ms apart agree (a Deployment once its rollout is done),
    /// masked; within half a minute.
    fn stored(&self, target: &str, masks: &Masks) -> Stored {
        if target.starts_with("deployment/") {
            self.settle(target);
        }
        let masked = |s: Stored| match s {
            Stored::Present(v) => Stored::Present(masks.object(v)),
            other => other,
        };
        let began = Instant::now();
        let mut last = masked(self.get(target));
        loop {
            std::thread::sleep(Duration::from_millis(200));
            let now = masked(self.get(target));
            if now == last || began.elapsed() > Duration::from_secs(30) {
                return now;
            }
            last = now;
        }
    }

    /// Runs the script's commands in order.
    fn play(&self, script: &Script, vars: &[(&str, String)], masks: &Masks) -> Vec<Outcome> {
        let expand = |s: &str| vars.iter().fold(s.to_owned(), |s, (k, v)| s.replace(k, v));
        script
            .commands
            .iter()
            .map(|step| {
                let began = Instant::now();
                if let Some(target) = &step.settle {
                    self.settle(&expand(target));
                }
                let args = shlex::split(&expand(&step.run))
                    .unwrap_or_else(|| panic!("{}: cannot split `run`", step.id));
                let mut cmd = self.command(&args);
                if let Some(script) = &step.editor {
                    let editor = self.home.path().join(format!("{}.sh", step.id));
                    std::fs::write(&editor, format!("#!/bin/sh\n{script}\n")).unwrap();
                    std::fs::set_permissions(
                        &editor,
                        std::os::unix::fs::PermissionsExt::from_mode(0o755),
                    )
                    .unwrap();
                    cmd.env("KUBE_EDITOR", &editor);
                }
                let stop = step.stop_after.map(Duration::from_secs_f64);
                let mut outcome = self.run(cmd, stop);
                if stop.is_some() {
                    outcome.exit = None;
                }
                outcome.output = masks.output(&outcome.output);
                outcome.object = step.object.as_ref().map(|t| self.stored(&expand(t), masks));
                outcome.took = began.elapsed();
                outcome
            })
            .collect()
    }
}

/// The differences of one command: `exit: …`, `output`, `object: absent on …`, `object PATH`.
fn differences(demo: &Outcome, real: &Outcome) -> (Vec<String>, Vec<String>) {
    let mut keys = Vec::new();
    let mut details = Vec::new();
    if demo.exit != real.exit {
        let code = |e: Option<i32>| e.map_or("none".to_owned(), |c| c.to_string());
        keys.push(format!(
            "exit (demo {}, real {})",
            code(demo.exit),
            code(real.exit)
        ));
    }
    if demo.output != real.output {
        keys.push("output".to_owned());
        let diff = similar::TextDiff::from_lines(&real.output, &demo.output);
        details.push(format!(
            "output (- real, + demo):\n{}",
            diff.unified_diff().context_radius(2)
        ));
    }
    match (&demo.object, &real.object) {
        (Some(Stored::Present(d)), Some(Stored::Present(r))) => {
            for difference in diff::differences(d, r) {
                let show =
                    |v: &Option<Value>| v.as_ref().map_or("(absent)".to_owned(), Value::to_string);
                details.push(format!(
                    "object {}: real {} | demo {}",
                    difference.path,
                    show(&difference.real),
                    show(&difference.demo)
                ));
                keys.push(format!("object {}", difference.path));
            }
        }
        (Some(d), Some(r)) if d != r => {
            let state = |s: &Stored| match s {
                Stored::Absent => "absent".to_owned(),
                Stored::Present(_) => "present".to_owned(),
                Stored::Unreadable(e) => format!("unreadable ({})", e.trim()),
            };
            keys.push(format!(
                "object {} on demo, {} on real",
                if matches!(d, Stored::Unreadable(_)) {
                    "unreadable".into()
                } else {
                    state(d)
                },
                if matches!(r, Stored::Unreadable(_)) {
                    "unreadable".into()
                } else {
                    state(r)
                }
            ));
            details.push(format!("object: demo {} | real {}", state(d), state(r)));
        }
        _ => {}
    }
    (keys, details)
}

/// Holds a command's differences `found` against those `listed` for it: the ones not listed (as
/// an entry of known-differences.yaml to fill in), and the listed ones no longer found.
fn judge(
    id: &str,
    found: &BTreeSet<&str>,
    listed: &BTreeSet<&str>,
) -> (Option<String>, Vec<String>) {
    let new: Vec<&str> = found.difference(listed).copied().collect();
    let unlisted = (!new.is_empty()).then(|| {
        format!(
            "- id: {id}\n  differs:\n{}",
            new.iter()
                .map(|k| format!("    - {}\n", Value::from(*k)))
                .collect::<String>()
        )
    });
    let gone = listed
        .difference(found)
        .map(|k| format!("{id}: {k}"))
        .collect();
    (unlisted, gone)
}

#[test]
fn a_difference_must_be_listed_and_a_listed_one_must_still_differ() {
    let set = |keys: &[&'static str]| keys.iter().copied().collect::<BTreeSet<&str>>();
    assert_eq!(
        judge("a", &set(&["output"]), &set(&["output"])),
        (None, vec![])
    );
    let (unlisted, gone) = judge(
        "a",
        &set(&["output", "object spec.x"]),
        &set(&["output", "exit (demo 1, real 0)"]),
    );
    assert_eq!(
        unlisted.as_deref(),
        Some("- id: a\n  differs:\n    - \"object spec.x\"\n")
    );
    assert_eq!(gone, ["a: exit (demo 1, real 0)"]);
    assert_eq!(judge("b", &set(&[]), &set(&["output"])).1, ["b: output"]);
}

/// Writes to the process's stderr, past the test harness's capture: the counts are always shown.
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

#[test]
fn the_demo_answers_kubectl_as_the_real_server_does() {
    let Some(real) = real() else { return };
    let kubectl = match conformance_kubectl() {
        Ok(path) => path,
        Err(reason) => {
            say(&format!("\nkdrift conformance test: SKIPPED: {reason}\n"));
            return;
        }
    };
    let script: Script = read("script.yaml");
    let known: Vec<Known> = read("known-differences.yaml");
    let ids: BTreeSet<&str> = script.commands.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids.len(),
        script.commands.len(),
        "script.yaml: an id is used twice"
    );
    for entry in &known {
        let named: Vec<&str> = entry.ids().collect();
        assert!(
            !named.is_empty(),
            "known-differences.yaml: an entry names no id: {:?}",
            entry.differs
        );
        for id in &named {
            assert!(
                ids.contains(id),
                "known-differences.yaml: no command {id} in script.yaml"
            );
        }
        assert!(
            !entry.why.trim().is_empty(),
            "known-differences.yaml: {named:?} say no why"
        );
    }
    let masks = Masks::new(&script.generated);

    let namespace = real.namespace("conformance");
    let demo = Cluster::start();
    let demo_ns = demo.kubectl(&["create", "namespace", &namespace.name]);
    assert!(demo_ns.status.success(), "{demo_ns:?}");
    let vars = [
        ("${NS}", namespace.name.clone()),
        ("${FILES}", format!("{DIR}/files")),
    ];
    let sides = [
        Side::new("demo", &demo.kubeconfig, &namespace.name, &kubectl),
        Side::new("real", &real.kubeconfig, &namespace.name, &kubectl),
    ];
    let began = Instant::now();
    let [demo_run, real_run] = std::thread::scope(|s| {
        let runs = sides
            .each_ref()
            .map(|side| s.spawn(|| side.play(&script, &vars, &masks)));
        runs.map(|r| r.join().unwrap())
    });
    let took = began.elapsed();
    for side in &sides {
        for line in &script.cleanup {
            let args =
                shlex::split(&vars.iter().fold(line.clone(), |s, (k, v)| s.replace(k, v))).unwrap();
            let _ = side.run(side.command(&args), None);
        }
    }

    let mut listed_by_id: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for entry in &known {
        for id in entry.ids() {
            listed_by_id
                .entry(id)
                .or_default()
                .extend(entry.differs.iter().map(String::as_str));
        }
    }
    let mut identical = 0;
    let mut differing = 0;
    let mut report = String::new();
    // Every difference found, in known-differences.yaml's form (a start when refreshing it).
    let mut found_yaml = String::new();
    let mut unlisted = Vec::new();
    let mut stale = Vec::new();
    for (step, (d, r)) in script.commands.iter().zip(demo_run.iter().zip(&real_run)) {
        let (keys, details) = differences(d, r);
        let listed = listed_by_id
            .get(step.id.as_str())
            .cloned()
            .unwrap_or_default();
        let found: BTreeSet<&str> = keys.iter().map(String::as_str).collect();
        if found.is_empty() {
            identical += 1;
        } else {
            differing += 1;
            found_yaml.push_str(&format!(
                "- id: {}\n  differs:\n{}  why: \n",
                step.id,
                found
                    .iter()
                    .map(|k| format!("    - {}\n", Value::from(*k)))
                    .collect::<String>()
            ));
            report.push_str(&format!(
                "\n## {} (kubectl {})\n{}\n",
                step.id,
                step.run,
                details.join("\n")
            ));
        }
        let (new, gone) = judge(&step.id, &found, &listed);
        unlisted.extend(new);
        stale.extend(gone);
    }
    for (name, run) in [("demo", &demo_run), ("real", &real_run)] {
        let mut slow: Vec<(Duration, &str)> = run
            .iter()
            .zip(&script.commands)
            .map(|(o, s)| (o.took, s.id.as_str()))
            .collect();
        slow.sort();
        slow.reverse();
        report.push_str(&format!(
            "\n## the slowest steps on {name}: {:?}\n",
            &slow[..slow.len().min(12)]
        ));
    }
    let report_path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("conformance-report.md");
    let _ = std::fs::write(&report_path, &report);
    let _ = std::fs::write(
        report_path.with_file_name("conformance-found.yaml"),
        &found_yaml,
    );
    say(&format!(
        "\nkdrift conformance (kubectl {}): {} commands run on the demo and the real server in {:.0?}; {} identical, {} differ; {} differences listed in known-differences.yaml, {} commands with a difference not listed, {} listed differences gone; the differences in full: {}",
        kubectl.display(),
        script.commands.len(),
        took,
        identical,
        differing,
        listed_by_id.values().map(BTreeSet::len).sum::<usize>(),
        unlisted.len(),
        stale.len(),
        report_path.display()
    ));
    assert!(
        unlisted.is_empty() && stale.is_empty(),
        "the demo answers otherwise than the real server in ways testdata/conformance/known-differences.yaml does not list:\n{}\n\nlisted there but no longer different (remove them):\n{}\n\nthe differences in full:{report}",
        unlisted.join(""),
        stale.join("\n")
    );
}
