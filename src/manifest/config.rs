//! `.kdrift.yaml` at the manifests root: paths to ignore and extra applier managers.
//!
//! # Format
//!
//! ```yaml
//! # .kdrift.yaml — every key is optional
//! appliers:                 # field managers that apply the manifests (their writes are never drift)
//!   - my-deploy-bot
//! ignore:                   # differences to leave out of the drift
//!   - kind: Deployment      # optional: kind, as in the manifest
//!     group: apps           # optional: API group ("" for core)
//!     namespace: "shop-*"   # optional glob (`*`, `?`)
//!     name: "web*"          # optional glob
//!     paths:                # JSON pointers (RFC 6901) below which nothing is drift
//!       - /spec/replicas
//!       - /spec/template/spec/containers/*/image
//!       - /metadata/annotations/example.com~1owner
//! kustomize:                # which kustomize roots are rendered (default: every kustomization
//!                           # that no other includes, components left out)
//!   roots: [overlays/prod]  # these roots only
//!   contexts:               # or per kubeconfig context (before `roots`; `--overlay` wins)
//!     prod: overlays/prod
//!     staging: [overlays/staging, apps/extra]
//! contexts:                 # one repository, a folder per cluster: a folder named here is read
//!   staging: clusters/staging   # for its context(s) only; the folders no context names are
//!   prod-eu: [clusters/prod, clusters/prod-eu]   # read for every context
//! helm:                     # how Helm charts of the checkout are rendered (see `charts`)
//!   charts:
//!     - {path: charts/web, release: web, namespace: shop, values: [envs/prod.yaml]}
//! accept:                   # how `kdrift accept` commits
//!   branch: "hotfix/{namespace}-{name}"   # commit on a new branch named from this template
//!                                         # ({kind}, {namespace}, {name}); default: current branch
//!   push: true              # git push the commit (the branch's remote, else origin); default false
//! changes:                  # the live view's change timeline (`:changes`)
//!   keep: 10000             # lines held (the oldest are dropped, and the view says how many);
//!                           # 0 turns the timeline off; default 10,000, at most 1,000,000
//! ```
//!
//! A rule applies to an object when every selector it names matches. In a path, a list item is
//! addressed by its merge-key value (`containers/web`, `env/EXTRA`, `ports/8080`), its position in
//! the manifest (`containers/0`), or `*` (any item; `*` matches any one step). `~1` is `/` and
//! `~0` is `~`, as in JSON pointers. The built-in appliers are `kubectl-client-side-apply`,
//! `kubectl-create`, `kubectl` (server-side apply), `argocd-controller`, `kustomize-controller`, `helm-controller`
//! and `before-first-apply`. A bad rule is reported with its line and the other rules still apply.
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::lines::{Step, line_in, line_of};
use super::{ObjectKey, Problem};

pub const CONFIG_FILE: &str = ".kdrift.yaml";

/// The parsed `.kdrift.yaml` (default: no rules, built-in appliers only).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    pub appliers: Vec<String>,
    pub ignore: Vec<IgnoreRule>,
    /// `accept.branch`: the template of the branch an accept commits on (none: the current one).
    pub accept_branch: Option<String>,
    /// `accept.push`: run `git push` after an accept's commit (for a GitOps controller that
    /// reads the remote branch, not this checkout).
    pub accept_push: bool,
    /// `kustomize.roots`: the kustomize roots to render (folders under the manifests root);
    /// `None`: every kustomization no other includes.
    pub kustomize_roots: Option<Vec<String>>,
    /// `kustomize.contexts`: the roots to render for a kubeconfig context, by context name.
    pub kustomize_contexts: Vec<(String, Vec<String>)>,
    /// `contexts`: the folders of the checkout that describe one cluster, by context name (see
    /// [`super::fleet`]).
    pub contexts: Vec<ContextEntry>,
    /// `helm.charts`: how charts of the checkout are rendered (see [`super::charts`]).
    pub helm_charts: Vec<super::charts::ChartEntry>,
    /// `changes.keep`: how many lines the live view's change timeline holds (`None`: the
    /// default, [`CHANGES_KEEP_DEFAULT`]).
    pub changes_keep: Option<usize>,
}

/// Lines the live view's change timeline holds unless `changes.keep` says otherwise.
pub const CHANGES_KEEP_DEFAULT: usize = 10_000;
/// The most `changes.keep` may ask for (about 300 bytes a line).
pub const CHANGES_KEEP_MAX: usize = 1_000_000;

/// Parses `changes:` (`keep: N`).
fn parse_changes(changes: &Value) -> Result<Option<usize>, (bool, String)> {
    let map = match changes {
        Value::Null => return Ok(None),
        Value::Object(map) => map,
        _ => {
            return Err((
                false,
                "\"changes\" must be a mapping with \"keep\"".to_owned(),
            ));
        }
    };
    if let Some(unknown) = map.keys().find(|k| k.as_str() != "keep") {
        return Err((
            false,
            format!("unknown key \"{unknown}\" in changes (expected keep)"),
        ));
    }
    match map.get("keep") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_u64().and_then(|n| usize::try_from(n).ok()) {
            Some(keep) if keep <= CHANGES_KEEP_MAX => Ok(Some(keep)),
            _ => Err((
                true,
                format!(
                    "changes.keep must be a whole number from 0 to {CHANGES_KEEP_MAX}, not {n}"
                ),
            )),
        },
        Some(other) => Err((
            true,
            format!("changes.keep must be a whole number of lines, not {other}"),
        )),
    }
}

/// One `contexts:` entry: a kubeconfig context and the folders that describe its cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextEntry {
    pub context: String,
    pub folders: Vec<String>,
    /// 1-based line of the entry in `.kdrift.yaml`.
    pub line: usize,
}

/// One `ignore` entry: selectors (absent = any) and the decoded steps of each path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IgnoreRule {
    pub group: Option<String>,
    pub kind: Option<String>,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub paths: Vec<Vec<String>>,
    /// 1-based line of the rule in `.kdrift.yaml`.
    pub line: usize,
}

/// `*` any run of characters, `?` any one character.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

impl IgnoreRule {
    /// True when the rule's selectors all match the object.
    pub fn selects(&self, key: &ObjectKey) -> bool {
        self.group.as_ref().is_none_or(|g| *g == key.group)
            && self
                .kind
                .as_ref()
                .is_none_or(|k| k.eq_ignore_ascii_case(&key.kind))
            && self
                .namespace
                .as_ref()
                .is_none_or(|ns| glob_matches(ns, &key.namespace))
            && self
                .name
                .as_ref()
                .is_none_or(|n| glob_matches(n, &key.name))
    }
}

/// Decodes a JSON pointer into its steps, or says what is wrong with it.
fn decode_pointer(pointer: &str) -> Result<Vec<String>, String> {
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(format!(
            "path \"{pointer}\" must be a JSON pointer starting with \"/\""
        ));
    };
    rest.split('/')
        .map(|step| {
            let mut out = String::with_capacity(step.len());
            let mut chars = step.chars();
            while let Some(c) = chars.next() {
                if c != '~' {
                    out.push(c);
                    continue;
                }
                match chars.next() {
                    Some('0') => out.push('~'),
                    Some('1') => out.push('/'),
                    _ => {
                        return Err(format!(
                            "path \"{pointer}\": \"~\" must be followed by 0 or 1"
                        ));
                    }
                }
            }
            Ok(out)
        })
        .collect()
}

fn optional_string(rule: &Value, field: &str) -> Result<Option<String>, String> {
    match rule.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("\"{field}\" must be a string, not {other}")),
    }
}

/// Parses one `ignore` entry; the error names the offending item's index in `paths` if any.
fn parse_rule(rule: &Value) -> Result<IgnoreRule, (Option<usize>, String)> {
    let Some(map) = rule.as_object() else {
        return Err((
            None,
            "an ignore rule must be a mapping with \"paths\"".to_owned(),
        ));
    };
    if let Some(unknown) = map
        .keys()
        .find(|k| !["group", "kind", "namespace", "name", "paths"].contains(&k.as_str()))
    {
        return Err((
            None,
            format!(
                "unknown key \"{unknown}\" in ignore rule (expected group, kind, namespace, name, paths)"
            ),
        ));
    }
    let text = |field| optional_string(rule, field).map_err(|e| (None, e));
    let Some(paths) = rule
        .get("paths")
        .and_then(Value::as_array)
        .filter(|p| !p.is_empty())
    else {
        return Err((
            None,
            "an ignore rule needs a non-empty list \"paths\"".to_owned(),
        ));
    };
    let paths = paths
        .iter()
        .enumerate()
        .map(|(at, path)| match path.as_str() {
            Some(pointer) => decode_pointer(pointer).map_err(|e| (Some(at), e)),
            None => Err((Some(at), format!("path {path} must be a string"))),
        })
        .collect::<Result<_, _>>()?;
    Ok(IgnoreRule {
        group: text("group")?,
        kind: text("kind")?,
        namespace: text("namespace")?,
        name: text("name")?,
        paths,
        line: 0,
    })
}

/// `accept.push`, as written: true or false.
fn parse_push(accept: &Value) -> Result<bool, String> {
    match accept.get("push") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(push)) => Ok(*push),
        Some(other) => Err(format!("accept.push must be true or false, not {other}")),
    }
}

/// Parses `accept:`; the error says whether it is about `branch` (for its line).
fn parse_accept(accept: &Value) -> Result<Option<String>, (bool, String)> {
    let map = match accept {
        Value::Null => return Ok(None),
        Value::Object(map) => map,
        _ => {
            return Err((
                false,
                "\"accept\" must be a mapping with \"branch\" or \"push\"".to_owned(),
            ));
        }
    };
    if let Some(unknown) = map
        .keys()
        .find(|k| !["branch", "push"].contains(&k.as_str()))
    {
        return Err((
            false,
            format!("unknown key \"{unknown}\" in accept (expected branch, push)"),
        ));
    }
    match map.get("branch") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(t)) if t.trim().is_empty() => {
            Err((true, "accept.branch must not be empty".to_owned()))
        }
        Some(Value::String(t)) => {
            let unknown = t
                .split('{')
                .skip(1)
                .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
                .find(|name| !["kind", "namespace", "name"].contains(name));
            match unknown {
                Some(name) => Err((
                    true,
                    format!(
                        "accept.branch \"{t}\": unknown placeholder {{{name}}} (use {{kind}}, {{namespace}}, {{name}})"
                    ),
                )),
                None => Ok(Some(t.clone())),
            }
        }
        Some(other) => Err((
            true,
            format!(
                "accept.branch must be a string such as \"hotfix/{{namespace}}-{{name}}\", not {other}"
            ),
        )),
    }
}

/// Folders: one string or a list of strings.
fn folders(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::String(one) if !one.trim().is_empty() => Some(vec![one.clone()]),
        Value::Array(items) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .filter(|s| !s.trim().is_empty())
                    .map(str::to_owned)
            })
            .collect(),
        _ => None,
    }
}

/// Parses `kustomize:`; the error names the steps below `kustomize` it is about.
fn parse_kustomize(value: &Value, config: &mut Config) -> Result<(), (Vec<String>, String)> {
    let map = match value {
        Value::Null => return Ok(()),
        Value::Object(map) => map,
        _ => {
            return Err((
                Vec::new(),
                "\"kustomize\" must be a mapping with \"roots\" and/or \"contexts\"".to_owned(),
            ));
        }
    };
    if let Some(unknown) = map
        .keys()
        .find(|k| !["roots", "contexts"].contains(&k.as_str()))
    {
        return Err((
            vec![unknown.clone()],
            format!("unknown key \"{unknown}\" in kustomize (expected roots, contexts)"),
        ));
    }
    if let Some(roots) = map.get("roots") {
        config.kustomize_roots = Some(folders(roots).ok_or_else(|| {
            (
                vec!["roots".to_owned()],
                "kustomize.roots must be a list of folders such as [overlays/prod]".to_owned(),
            )
        })?);
    }
    match map.get("contexts") {
        None | Some(Value::Null) => {}
        Some(Value::Object(contexts)) => {
            for (context, roots) in contexts {
                let roots = folders(roots).ok_or_else(|| {
                    (
                        vec!["contexts".to_owned(), context.clone()],
                        format!(
                            "kustomize.contexts.{context} must be a folder or a list of folders"
                        ),
                    )
                })?;
                config.kustomize_contexts.push((context.clone(), roots));
            }
        }
        Some(_) => {
            return Err((
                vec!["contexts".to_owned()],
                "kustomize.contexts must map context names to folders".to_owned(),
            ));
        }
    }
    Ok(())
}

/// Parses the text of a `.kdrift.yaml` (named `file` in problems).
pub fn parse(file: &Path, text: &str) -> (Config, Vec<Problem>) {
    let mut config = Config::default();
    let mut problems = Vec::new();
    let problem = |line: usize, message: String| Problem::BadConfig {
        file: file.to_path_buf(),
        line,
        message,
    };
    let value: Value = match serde_yaml::from_str(text) {
        Ok(Value::Null) => return (config, problems),
        Ok(value) => value,
        Err(error) => {
            let line = line_in(text, error.location().map_or(1, |at| at.line()));
            problems.push(problem(line, format!("malformed YAML: {error}")));
            return (config, problems);
        }
    };
    let Some(map) = value.as_object() else {
        problems.push(problem(
            1,
            "expected a mapping with \"ignore\" and \"appliers\"".to_owned(),
        ));
        return (config, problems);
    };
    for (key, _) in map.iter().filter(|(k, _)| {
        ![
            "ignore",
            "appliers",
            "accept",
            "kustomize",
            "helm",
            "contexts",
            "changes",
        ]
        .contains(&k.as_str())
    }) {
        let line = line_of(text, &[Step::Field(key)]) + 1;
        problems.push(problem(
            line,
            format!(
                "unknown key \"{key}\" (expected ignore, appliers, accept, kustomize, helm, contexts, changes)"
            ),
        ));
    }
    problems.extend(parse_contexts(
        text,
        map.get("contexts"),
        &mut config,
        &problem,
    ));
    if let Some(changes) = map.get("changes") {
        match parse_changes(changes) {
            Ok(keep) => config.changes_keep = keep,
            Err((at_keep, message)) => {
                let mut steps = vec![Step::Field("changes")];
                if at_keep {
                    steps.push(Step::Field("keep"));
                }
                problems.push(problem(line_of(text, &steps) + 1, message));
            }
        }
    }
    if let Some(helm) = map.get("helm") {
        let (charts, helm_problems) = super::charts::parse_config(helm, text, file);
        config.helm_charts = charts;
        problems.extend(helm_problems);
    }
    if let Some(accept) = map.get("accept") {
        match parse_push(accept) {
            Ok(push) => config.accept_push = push,
            Err(message) => {
                let steps = [Step::Field("accept"), Step::Field("push")];
                problems.push(problem(line_of(text, &steps) + 1, message));
            }
        }
        match parse_accept(accept) {
            Ok(branch) => config.accept_branch = branch,
            Err((at_branch, message)) => {
                let mut steps = vec![Step::Field("accept")];
                if at_branch {
                    steps.push(Step::Field("branch"));
                }
                problems.push(problem(line_of(text, &steps) + 1, message));
            }
        }
    }
    if let Some(kustomize) = map.get("kustomize")
        && let Err((steps, message)) = parse_kustomize(kustomize, &mut config)
    {
        let steps: Vec<Step<'_>> = std::iter::once(Step::Field("kustomize"))
            .chain(steps.iter().map(|s| Step::Field(s)))
            .collect();
        problems.push(problem(line_of(text, &steps) + 1, message));
    }
    match map.get("appliers") {
        None | Some(Value::Null) => {}
        Some(Value::Array(names)) => {
            for (at, name) in names.iter().enumerate() {
                match name.as_str() {
                    Some(name) if !name.is_empty() => config.appliers.push(name.to_owned()),
                    _ => {
                        let line = line_of(text, &[Step::Field("appliers"), Step::Item(at)]) + 1;
                        problems.push(problem(
                            line,
                            format!("applier {name} must be a manager name"),
                        ));
                    }
                }
            }
        }
        Some(_) => problems.push(problem(
            line_of(text, &[Step::Field("appliers")]) + 1,
            "\"appliers\" must be a list of manager names".to_owned(),
        )),
    }
    problems.extend(parse_ignore(text, map.get("ignore"), &mut config, &problem));
    (config, problems)
}

/// `contexts:`, the folders of each kubeconfig context; a problem for each entry that is not.
fn parse_contexts(
    text: &str,
    value: Option<&Value>,
    config: &mut Config,
    problem: &dyn Fn(usize, String) -> Problem,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    match value {
        None | Some(Value::Null) => {}
        Some(Value::Object(contexts)) => {
            for (context, dirs) in contexts {
                let line = line_of(text, &[Step::Field("contexts"), Step::Field(context)]) + 1;
                match folders(dirs) {
                    Some(folders) => config.contexts.push(ContextEntry {
                        context: context.clone(),
                        folders,
                        line,
                    }),
                    None => problems.push(problem(
                        line,
                        format!(
                            "contexts.{context} must be a folder or a list of folders (such as clusters/{context})"
                        ),
                    )),
                }
            }
        }
        Some(_) => problems.push(problem(
            line_of(text, &[Step::Field("contexts")]) + 1,
            "\"contexts\" must map kubeconfig context names to folders".to_owned(),
        )),
    }
    problems
}

/// `ignore:`, the rules of fields that never count as drift; a problem for each rule that does
/// not read (on the line of its path, when one is to blame).
fn parse_ignore(
    text: &str,
    value: Option<&Value>,
    config: &mut Config,
    problem: &dyn Fn(usize, String) -> Problem,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    match value {
        None | Some(Value::Null) => {}
        Some(Value::Array(rules)) => {
            for (at, rule) in rules.iter().enumerate() {
                let rule_steps = [Step::Field("ignore"), Step::Item(at)];
                match parse_rule(rule) {
                    Ok(mut rule) => {
                        rule.line = line_of(text, &rule_steps) + 1;
                        config.ignore.push(rule);
                    }
                    Err((path_at, message)) => {
                        let line = match path_at {
                            Some(p) => line_of(
                                text,
                                &[
                                    Step::Field("ignore"),
                                    Step::Item(at),
                                    Step::Field("paths"),
                                    Step::Item(p),
                                ],
                            ),
                            None => line_of(text, &rule_steps),
                        };
                        problems.push(problem(line + 1, message));
                    }
                }
            }
        }
        Some(_) => problems.push(problem(
            line_of(text, &[Step::Field("ignore")]) + 1,
            "\"ignore\" must be a list of rules".to_owned(),
        )),
    }
    problems
}

/// Reads `.kdrift.yaml` under `root`; a missing file is the default config.
pub fn load(root: &Path) -> (Config, Vec<Problem>) {
    let file: PathBuf = root.join(CONFIG_FILE);
    match std::fs::read_to_string(&file) {
        Ok(text) => parse(&file, &text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            (Config::default(), Vec::new())
        }
        Err(error) => (
            Config::default(),
            vec![Problem::BadConfig {
                file,
                line: 1,
                message: format!("cannot read: {error}"),
            }],
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_keep_is_read_and_a_bad_one_named_at_its_line() {
        let (config, problems) = parse(Path::new(".kdrift.yaml"), "changes:\n  keep: 500\n");
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(config.changes_keep, Some(500));
        let (config, problems) = parse(
            Path::new(".kdrift.yaml"),
            "appliers: []\nchanges:\n  keep: -3\n",
        );
        assert_eq!(config.changes_keep, None);
        let text = problems[0].to_string();
        assert!(
            text.contains(":3")
                && text.contains("changes.keep must be a whole number from 0 to 1000000, not -3"),
            "{text}"
        );
        let (_, problems) = parse(Path::new(".kdrift.yaml"), "changes:\n  kept: 5\n");
        assert!(
            problems[0]
                .to_string()
                .contains("unknown key \"kept\" in changes"),
            "{problems:?}"
        );
    }

    #[test]
    fn rules_and_appliers_are_parsed_with_their_lines() {
        let text = "appliers: [deploy-bot]\nignore:\n  - kind: Deployment\n    name: \"web*\"\n    paths:\n      - /spec/replicas\n      - /metadata/annotations/a~1b\n";
        let (config, problems) = parse(Path::new(".kdrift.yaml"), text);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(config.appliers, ["deploy-bot"]);
        let rule = &config.ignore[0];
        assert_eq!(rule.line, 3);
        assert_eq!(
            rule.paths,
            [
                vec!["spec", "replicas"],
                vec!["metadata", "annotations", "a/b"]
            ]
        );
        assert!(rule.selects(&ObjectKey::new("apps", "Deployment", "shop", "web-1")));
        assert!(!rule.selects(&ObjectKey::new("apps", "Deployment", "shop", "api")));
        assert!(!rule.selects(&ObjectKey::new("apps", "StatefulSet", "shop", "web")));
    }

    #[test]
    fn bad_rules_are_reported_with_their_line_and_good_ones_kept() {
        let text = "ignore:\n  - kind: Deployment\n    paths: [/spec/replicas]\n  - kind: Deployment\n    paths:\n      - /ok\n      - spec/replicas\n  - kinds: Service\n    paths: [/x]\n  - name: web\ncolour: blue\n";
        let (config, problems) = parse(Path::new("/m/.kdrift.yaml"), text);
        assert_eq!(config.ignore.len(), 1);
        let found: Vec<_> = problems
            .iter()
            .map(|p| (p.place().1, p.to_string()))
            .collect();
        let lines: Vec<_> = found.iter().map(|(line, _)| *line).collect();
        assert_eq!(lines, [Some(11), Some(7), Some(8), Some(10)], "{found:?}");
        assert!(found[1].1.contains("\"spec/replicas\""), "{found:?}");
        assert!(found[2].1.contains("\"kinds\""), "{found:?}");
    }

    #[test]
    fn malformed_config_names_its_line() {
        let (config, problems) = parse(Path::new(".kdrift.yaml"), "ignore:\n  - paths: [/a\n");
        assert_eq!(config, Config::default());
        assert!(
            matches!(problems.as_slice(), [Problem::BadConfig { line, .. }] if *line >= 2),
            "{problems:?}"
        );
    }

    #[test]
    fn accept_push_is_a_boolean_said_on_its_line() {
        let (config, problems) = parse(Path::new(".kdrift.yaml"), "accept:\n  push: true\n");
        assert!(problems.is_empty(), "{problems:?}");
        assert!(config.accept_push);
        let (config, problems) = parse(
            Path::new(".kdrift.yaml"),
            "accept:\n  branch: b\n  push: please\n",
        );
        assert!(!config.accept_push);
        assert_eq!(config.accept_branch.as_deref(), Some("b"));
        let found: Vec<(usize, String)> = problems
            .iter()
            .filter_map(|p| match p {
                Problem::BadConfig { line, message, .. } => Some((*line, message.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            found,
            [(
                3,
                "accept.push must be true or false, not \"please\"".to_owned()
            )]
        );
    }

    #[test]
    fn accept_branch_template_and_its_bad_values() {
        let text = "appliers: [bot]\naccept:\n  branch: \"hotfix/{namespace}-{name}\"\n";
        let (config, problems) = parse(Path::new(".kdrift.yaml"), text);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            config.accept_branch.as_deref(),
            Some("hotfix/{namespace}-{name}")
        );
        for (text, line, words) in [
            ("accept:\n  branch: 3\n", 2, "must be a string"),
            ("accept:\n  branch: \"\"\n", 2, "must not be empty"),
            (
                "x: 1\naccept:\n  branch: \"h/{team}\"\n",
                3,
                "unknown placeholder {team}",
            ),
            ("accept:\n  brunch: a\n", 1, "unknown key \"brunch\""),
            ("accept: yes\n", 1, "must be a mapping"),
        ] {
            let (config, problems) = parse(Path::new(".kdrift.yaml"), text);
            assert_eq!(config.accept_branch, None, "{text}");
            let found: Vec<(usize, String)> = problems
                .iter()
                .filter_map(|p| match p {
                    Problem::BadConfig { line, message, .. } => Some((*line, message.clone())),
                    _ => None,
                })
                .filter(|(_, m)| m.contains(words))
                .collect();
            assert_eq!(found.len(), 1, "{text}: {problems:?}");
            assert_eq!(found[0].0, line, "{text}: {found:?}");
            assert!(found[0].1.contains(words), "{text}: {found:?}");
        }
    }

    #[test]
    fn globs() {
        for (pattern, text, expected) in [
            ("web*", "web-1", true),
            ("*", "", true),
            ("w?b", "web", true),
            ("w?b", "weeb", false),
            ("*-prod", "shop-prod", true),
            ("shop", "shop-prod", false),
        ] {
            assert_eq!(glob_matches(pattern, text), expected, "{pattern} vs {text}");
        }
    }
}
