//! The README and the pages of docs/ hold together: every relative link resolves to a file,
//! and a `#anchor` to a heading of its page (as GitHub names headings); every page of docs/ is
//! linked from the README, so none is out of a reader's reach; every picture in docs/img is shown
//! somewhere.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown page of docs/.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The lines of `text` outside fenced code blocks and HTML comments, with their numbers.
fn prose(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut comment = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut kept = String::new();
        let mut rest = line;
        loop {
            if comment {
                match rest.find("-->") {
                    Some(end) => {
                        comment = false;
                        rest = &rest[end + 3..];
                    }
                    None => break,
                }
            } else {
                match rest.find("<!--") {
                    Some(start) => {
                        kept.push_str(&rest[..start]);
                        comment = true;
                        rest = &rest[start + 4..];
                    }
                    None => {
                        kept.push_str(rest);
                        break;
                    }
                }
            }
        }
        out.push((i + 1, kept));
    }
    out
}

/// `line` without its inline code spans (a link inside backticks is text, not a link).
fn without_code(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].chars().take_while(|c| *c == '`').count();
        let fence = "`".repeat(ticks);
        let after = &rest[start + ticks..];
        match after.find(&fence) {
            Some(end) => rest = &after[end + ticks..],
            None => {
                rest = after;
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The targets of the Markdown links and images of `text`: `(line, target)`.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (number, line) in prose(text) {
        let line = without_code(&line);
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            let target = after[..end].split_whitespace().next().unwrap_or("");
            out.push((number, target.to_owned()));
            rest = &after[end..];
        }
    }
    out
}

/// A heading's anchor as GitHub makes it: lower case, the Markdown marks and punctuation
/// dropped (but `-` and `_`), spaces as hyphens.
fn slug(heading: &str) -> String {
    let text = without_code_marks(heading);
    text.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// A heading's text without backticks and `[text](target)` link syntax (its text stays).
fn without_code_marks(heading: &str) -> String {
    let mut text = heading.replace('`', "");
    while let (Some(open), Some(mid)) = (text.find('['), text.find("](")) {
        let Some(close) = text[mid..].find(')').map(|c| mid + c) else {
            break;
        };
        if open > mid {
            break;
        }
        text = format!(
            "{}{}{}",
            &text[..open],
            &text[open + 1..mid],
            &text[close + 1..]
        );
    }
    text
}

/// The anchors of the headings of `text`, numbered as GitHub numbers repeats (`-1`, `-2`).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (_, line) in prose(text) {
        let trimmed = line.trim_start();
        let level = trimmed.chars().take_while(|c| *c == '#').count();
        if level == 0 || level > 6 || !trimmed[level..].starts_with(' ') {
            continue;
        }
        let base = slug(trimmed[level..].trim());
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(path)
            };
            let place = format!("{}:{line}: ({target})", relative(&page));
            if !file.exists() {
                broken.push(format!("{place}: no such file {}", relative(&file)));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if file.extension().is_none_or(|e| e != "md") {
                broken.push(format!(
                    "{place}: an anchor into a file that is not Markdown"
                ));
                continue;
            }
            let headings = anchors(&std::fs::read_to_string(&file).unwrap());
            if !headings.contains(anchor) {
                broken.push(format!(
                    "{place}: no heading #{anchor} in {}; it has: {}",
                    relative(&file),
                    headings.into_iter().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_page_of_docs_is_linked_from_the_readme() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let linked: BTreeSet<PathBuf> = links(&readme)
        .into_iter()
        .map(|(_, target)| {
            let path = target.split('#').next().unwrap_or("").to_owned();
            root().join(path)
        })
        .collect();
    let missing: Vec<String> = pages()
        .into_iter()
        .skip(1)
        .filter(|page| !linked.contains(page))
        .map(|page| relative(&page))
        .collect();
    assert!(
        missing.is_empty(),
        "pages of docs/ the README does not link: {missing:?}"
    );
}

#[test]
fn every_picture_is_shown_somewhere() {
    let mut shown = BTreeSet::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (_, target) in links(&text) {
            let path = target.split('#').next().unwrap_or("");
            if let Ok(file) = page.parent().unwrap().join(path).canonicalize() {
                shown.insert(file);
            }
        }
    }
    let unshown: Vec<String> = std::fs::read_dir(root().join("docs/img"))
        .unwrap()
        .map(|e| e.unwrap().path().canonicalize().unwrap())
        .filter(|p| !shown.contains(p))
        .map(|p| relative(&p))
        .collect();
    assert!(unshown.is_empty(), "pictures no page shows: {unshown:?}");
}

/// The anchor rules on the headings these pages use.
#[test]
fn anchors_are_named_as_github_names_them() {
    assert_eq!(slug("`kdrift demo`"), "kdrift-demo");
    assert_eq!(
        slug("Manifests and `.kdrift.yaml`"),
        "manifests-and-kdriftyaml"
    );
    assert_eq!(
        slug("Headless: `check`, `diff`, `accept`, `revert`, `logs`"),
        "headless-check-diff-accept-revert-logs"
    );
    assert_eq!(slug("Pickers: `:ns` and `:ctx`"), "pickers-ns-and-ctx");
    assert_eq!(slug("A [linked](x.md) heading"), "a-linked-heading");
    let repeated = anchors("# Notes\n## Notes\n```\n# not a heading\n```\n### Notes\n");
    assert_eq!(
        repeated.into_iter().collect::<Vec<_>>(),
        ["notes", "notes-1", "notes-2"]
    );
    let text = "see [a](a.md) and `[b](b.md)`, ![c](img/c.svg \"title\")\n<!-- [d](d.md) -->\n";
    let targets: Vec<String> = links(text).into_iter().map(|(_, t)| t).collect();
    assert_eq!(targets, ["a.md", "img/c.svg"]);
}
