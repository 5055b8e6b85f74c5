//! What an accept names in git: the branch it commits on (from the user's template) and the
//! commit message, a line per field accepted with its writer.

/// A branch name from a template such as `hotfix/{namespace}-{name}`; characters git does not
/// allow in a branch name become `-`.
pub fn branch_name(template: &str, kind: &str, namespace: &str, name: &str) -> String {
    let filled = template
        .replace("{kind}", &kind.to_ascii_lowercase())
        .replace("{namespace}", namespace)
        .replace("{name}", name);
    let cleaned: String = filled
        .chars()
        .map(|c| {
            if c.is_control() || " ~^:?*[\\".contains(c) {
                '-'
            } else {
                c
            }
        })
        .collect();
    // An empty `{namespace}` (a cluster-scoped object) leaves `//`, which git refuses in a name.
    let mut cleaned = cleaned.replace("..", "-");
    while cleaned.contains("//") {
        cleaned = cleaned.replace("//", "/");
    }
    cleaned.trim_matches(['/', '.', '-']).to_owned()
}

/// One accepted field, for the commit message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptedField {
    /// As the drift report shows it (`spec.replicas`).
    pub path: String,
    /// The manifest's value before, `None` when the manifest did not set it.
    pub old: Option<String>,
    /// The live value accepted, `None` when the field was removed live.
    pub new: Option<String>,
    /// The field manager that changed it live (`kubectl-scale`), when known.
    pub manager: Option<String>,
    /// When it changed (RFC 3339), when known.
    pub time: Option<String>,
}

/// `kdrift: accept live spec.replicas of deployment/shop/web`, then one body line per field:
/// `spec.replicas: 2 → 5 (by kubectl-scale at 2026-11-22T03:10:00Z)`.
pub fn commit_message(kind: &str, namespace: &str, name: &str, fields: &[AcceptedField]) -> String {
    // As the drift report names it: a cluster-scoped object has no namespace part.
    let kind = kind.to_ascii_lowercase();
    let object = if namespace.is_empty() {
        format!("{kind}/{name}")
    } else {
        format!("{kind}/{namespace}/{name}")
    };
    let names: Vec<&str> = fields.iter().map(|field| field.path.as_str()).collect();
    let mut subject = format!("kdrift: accept live {} of {object}", names.join(", "));
    // A subject past 72 columns is cut by most tools: name the count, the body has the rest.
    if subject.chars().count() > 72 && fields.len() > 1 {
        subject = format!("kdrift: accept live {} fields of {object}", fields.len());
    }
    let mut message = subject;
    message.push_str("\n\n");
    for field in fields {
        let old = field.old.as_deref().unwrap_or("(not set)");
        let new = field.new.as_deref().unwrap_or("(removed)");
        message.push_str(&format!("{}: {old} → {new}", field.path));
        match (&field.manager, &field.time) {
            (Some(manager), Some(time)) => message.push_str(&format!(" (by {manager} at {time})")),
            (Some(manager), None) => message.push_str(&format!(" (by {manager})")),
            (None, Some(time)) => message.push_str(&format!(" (at {time})")),
            (None, None) => {}
        }
        message.push('\n');
    }
    crate::text::printable(&message).into_owned()
}
