//! Imports run one way: every `crate::ROOM` a room of a crate's `src/` names is on a lower line
//! of that crate's layer list in docs/ARCHITECTURE.md ("Layers": kdrift's, kdrift-sim's and
//! kdrift-schema's). Code under `#[cfg(test)]` is left out.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The layers of `block` (```` ```layers ```` for kdrift, ```` ```layers kdrift-sim ```` for a
/// crate of the workspace), top first: each line, its rooms.
fn layers(block: &str) -> Vec<Vec<String>> {
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/ARCHITECTURE.md")).unwrap();
    let fence = format!("```{block}\n");
    let start = doc
        .find(&fence)
        .unwrap_or_else(|| panic!("docs/ARCHITECTURE.md has a {fence:?} block"));
    let body = &doc[start + fence.len()..];
    let end = body.find("```").expect("the layers block ends");
    body[..end]
        .lines()
        .map(|line| line.split_whitespace().map(str::to_owned).collect())
        .filter(|rooms: &Vec<String>| !rooms.is_empty())
        .collect()
}

/// The text with comments, string and char literals blanked (so a doc link or a message that
/// names `crate::x` is not an import).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == b'r' && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#')) {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(b[i] as char);
                i += 1;
                continue;
            }
            j += 1;
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            i = j + close.len();
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            i += 3;
            out.push_str("' '");
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\\') {
            let close = b[i + 2..].iter().position(|&c| c == b'\'').unwrap_or(0);
            i += close + 3;
            out.push_str("' '");
        } else {
            let len = text[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&text[i..i + len]);
            i += len;
        }
    }
    out
}

/// The code outside `#[cfg(test)]` items, and the module files such items declare (`mod x;`).
fn without_tests(code: &str) -> (String, Vec<String>) {
    let mut kept = String::with_capacity(code.len());
    let mut test_modules = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        kept.push_str(&rest[..at]);
        let mut item = rest[at + "#[cfg(test)]".len()..].trim_start();
        // Further attributes of the same item; `#[path = "x.rs"]` names its file (the literal
        // was blanked by `code_only`, so the original text is looked up by the caller).
        let mut path_attr = false;
        while item.starts_with("#[") {
            let close = item.find(']').unwrap();
            path_attr |= item[2..close].trim_start().starts_with("path");
            item = item[close + 1..].trim_start();
        }
        if let Some(decl) = item.strip_prefix("mod ") {
            let name: String = decl
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if decl[name.len()..].trim_start().starts_with(';') {
                test_modules.push(if path_attr {
                    format!("#path {name}")
                } else {
                    name
                });
            }
        }
        let semi = item.find(';');
        let brace = item.find('{');
        rest = match (semi, brace) {
            (Some(s), Some(b)) if s < b => &item[s + 1..],
            (Some(s), None) => &item[s + 1..],
            (_, Some(b)) => {
                let mut depth = 0;
                let mut end = item.len();
                for (i, c) in item[b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                &item[end..]
            }
            (None, None) => "",
        };
    }
    kept.push_str(rest);
    (kept, test_modules)
}

/// The rooms `code` imports: `crate::room` and each first name of `crate::{room, other::x}`.
fn imported_rooms(code: &str) -> BTreeSet<String> {
    let mut rooms = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `kdrift_crate::`, not ours
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = matching_brace(group);
            let mut depth = 0;
            let mut start = true;
            let mut name = String::new();
            for c in group[..end].chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        start = true;
                        continue;
                    }
                    _ => {}
                }
                if start && depth == 0 {
                    if c.is_alphanumeric() || c == '_' {
                        name.push(c);
                        continue;
                    } else if !name.is_empty() {
                        rooms.insert(std::mem::take(&mut name));
                        start = false;
                    }
                }
            }
            if !name.is_empty() {
                rooms.insert(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            rooms.insert(name);
        }
    }
    rooms
}

fn matching_brace(after_open: &str) -> usize {
    let mut depth = 1;
    for (i, c) in after_open.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    after_open.len()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The room of a file of `src/`: its first folder, or its stem for a file at the top.
fn room_of(relative: &Path) -> String {
    let first = relative.components().next().unwrap().as_os_str();
    let first = first.to_string_lossy();
    first.strip_suffix(".rs").unwrap_or(&first).to_owned()
}

/// Each file of `src` (a crate's source folder, relative to the workspace) that is not test code
/// nor a binary, relative to `src`, with its code (comments, strings and test modules left out).
fn source_code(src: &str) -> Vec<(PathBuf, String)> {
    let src = Path::new(ROOT).join(src);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut test_files = BTreeSet::new();
    let mut parsed = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let (code, test_modules) = without_tests(&code_only(&text));
        // `#[cfg(test)] #[path = "x_tests.rs"] mod tests;`: the file the attribute names.
        for (at, _) in text.match_indices("#[path = \"") {
            let name = &text[at + "#[path = \"".len()..];
            let name = &name[..name.find('"').unwrap()];
            if test_modules.iter().any(|m| m.starts_with("#path ")) {
                test_files.insert(file.parent().unwrap().join(name));
            }
        }
        // `mod x;` under #[cfg(test)] in a/mod.rs or a.rs: a/x.rs.
        let dir = match file.file_stem().unwrap().to_str().unwrap() {
            "mod" | "lib" | "main" => file.parent().unwrap().to_path_buf(),
            stem => file.parent().unwrap().join(stem),
        };
        for module in test_modules
            .into_iter()
            .filter(|m| !m.starts_with("#path "))
        {
            test_files.insert(dir.join(format!("{module}.rs")));
            test_files.insert(dir.join(&module).join("mod.rs"));
        }
        parsed.push((file.clone(), code));
    }
    parsed
        .into_iter()
        .filter(|(file, _)| {
            !test_files.contains(file) && !file.strip_prefix(&src).unwrap().starts_with("bin")
        })
        .map(|(file, code)| (file.strip_prefix(&src).unwrap().to_path_buf(), code))
        .collect()
}

/// `(file, room it is in, room it imports)` for every import of a room of `src` (a crate's
/// source folder, relative to the workspace).
fn imports(src: &str) -> Vec<(PathBuf, String, String)> {
    let mut out = Vec::new();
    for (relative, code) in source_code(src) {
        let room = room_of(&relative);
        if room == "lib" || room == "main" {
            continue;
        }
        for imported in imported_rooms(&code) {
            if imported != room {
                out.push((relative.clone(), room.clone(), imported));
            }
        }
    }
    out
}

/// The imports of the crate at `src` that run up or sideways in the layers of `block`; rooms
/// named in `below` (the other crates, under the names the crate gives them) are below all.
fn check(src: &str, block: &str, below: &[&str]) {
    let mut level: BTreeMap<String, usize> = BTreeMap::new();
    for (i, rooms) in layers(block).iter().enumerate() {
        for room in rooms {
            assert!(
                level.insert(room.clone(), i).is_none(),
                "room {room} is named twice in the {block} block of docs/ARCHITECTURE.md"
            );
        }
    }
    let mut wrong = Vec::new();
    let mut unknown = BTreeSet::new();
    for (file, room, imported) in imports(src) {
        if below.contains(&imported.as_str()) {
            continue;
        }
        let (Some(&from), Some(&to)) = (level.get(&room), level.get(&imported)) else {
            if !level.contains_key(&room) {
                unknown.insert(room);
            }
            if !level.contains_key(&imported) {
                unknown.insert(imported);
            }
            continue;
        };
        if to <= from {
            wrong.push(format!(
                "{src}/{} ({room}, layer {from}) imports crate::{imported} (layer {to})",
                file.display()
            ));
        }
    }
    assert!(
        unknown.is_empty(),
        "rooms of {src} missing from the {block} block of docs/ARCHITECTURE.md: {unknown:?}"
    );
    assert!(
        wrong.is_empty(),
        "imports that run up or sideways (docs/ARCHITECTURE.md, \"Layers\", {block}):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn imports_run_down_the_layers_of_the_architecture() {
    // The workspace's other crates, under the names lib.rs gives them, are below every room.
    check("src", "layers", &["schema", "managed_fields", "sim"]);
}

/// Kube IO is `cluster/`'s: the kube crate (and kube-runtime) is named nowhere else in `src/`, so
/// that every read of the cluster goes through the one reader and policy there. (`cluster::client`
/// names the client type for the layers above.)
#[test]
fn the_kube_crate_is_used_under_cluster_only() {
    let mut outside = Vec::new();
    for (relative, code) in source_code("src") {
        if room_of(&relative) == "cluster" {
            continue;
        }
        for word in ["kube::", "use kube", "kube_runtime"] {
            if code.contains(word) {
                outside.push(format!("src/{} names {word}", relative.display()));
            }
        }
    }
    assert!(
        outside.is_empty(),
        "kube outside src/cluster/:\n{}",
        outside.join("\n")
    );
}

#[test]
fn imports_of_the_demo_cluster_and_the_schema_crate_run_down_their_layers() {
    check(
        "crates/kdrift-sim/src",
        "layers kdrift-sim",
        &["schema", "managed_fields"],
    );
    check("crates/kdrift-schema/src", "layers kdrift-schema", &[]);
}

#[test]
fn the_scanner_sees_imports_and_leaves_out_comments_strings_and_tests() {
    let code = code_only(
        r##"use crate::drift::{self, Class};
use crate::{app::App, cluster};
// crate::ui in a comment
/// [`crate::runtime`] in a doc link
let s = "crate::commands in a string";
let r = r#"crate::dispatch"#;
let c = '{';
fn f() { crate::git::commit(); }
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests { use crate::ui::render; fn g() { if true { crate::cli::x(); } } }
fn h() { crate::text::escape(); }
#[cfg(test)]
mod more_tests;
"##,
    );
    let (kept, test_modules) = without_tests(&code);
    let rooms: Vec<String> = imported_rooms(&kept).into_iter().collect();
    assert_eq!(rooms, ["app", "cluster", "drift", "git", "text"]);
    assert_eq!(test_modules, ["more_tests"]);
}
