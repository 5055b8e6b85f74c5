//! `kdrift completions SHELL` and `kdrift man`: made from the command line itself, and working
//! where a user puts them (bash completes a subcommand and a flag; man reads the page).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

fn kdrift(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kdrift"))
        .args(args)
        .env("KDRIFT_LOG", "off")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// What bash offers after `words` (the last one being completed), with kdrift's script loaded.
fn bash_completes(words: &[&str]) -> Vec<String> {
    let script = kdrift(&["completions", "bash"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kdrift.bash");
    std::fs::write(&file, script).unwrap();
    let line = words.join(" ");
    let program = format!(
        "source {}\nCOMP_WORDS=({line})\nCOMP_CWORD={}\nCOMP_LINE='{line}'\nCOMP_POINT=${{#COMP_LINE}}\n_kdrift kdrift '{}' '{}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        file.display(),
        words.len() - 1,
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(program)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_completes_subcommands_and_their_flags() {
    assert_eq!(bash_completes(&["kdrift", "che"]), ["check"]);
    let flags = bash_completes(&["kdrift", "check", "--allow"]);
    assert_eq!(flags, ["--allow-empty"]);
    let outputs = bash_completes(&["kdrift", "check", "-o", ""]);
    assert!(outputs.contains(&"json".to_owned()), "{outputs:?}");
}

#[test]
fn every_shell_gets_a_script_naming_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = kdrift(&["completions", shell]);
        for sub in ["check", "accept", "revert", "demo"] {
            assert!(script.contains(sub), "{shell}: no {sub}");
        }
    }
}

#[test]
fn the_man_page_is_roff_with_every_subcommand_and_man_reads_it() {
    let page = kdrift(&["man"]);
    assert!(page.contains(".TH kdrift 1"), "{page}");
    for sub in ["check", "diff", "accept", "revert", "demo", "completions"] {
        assert!(page.contains(sub), "no {sub} in the page");
    }
    // man itself, where the machine has it, renders it.
    if let Ok(rendered) = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} man | man -l - 2>/dev/null",
            env!("CARGO_BIN_EXE_kdrift")
        ))
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output()
        && rendered.status.success()
        && !rendered.stdout.is_empty()
    {
        let text = String::from_utf8_lossy(&rendered.stdout);
        assert!(text.contains("NAME"), "{text}");
    }
}

#[test]
fn the_version_names_the_commit_it_was_built_from() {
    let version = kdrift(&["--version"]);
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    let expected = match head {
        Some(commit) => format!("kdrift {} ({commit})\n", env!("CARGO_PKG_VERSION")),
        None => format!("kdrift {} (unknown)\n", env!("CARGO_PKG_VERSION")),
    };
    let (first, renderer) = version.split_at(version.find('\n').unwrap() + 1);
    assert_eq!(first, expected);
    // kubectl is on PATH for the tests: its kustomize renders the kustomize roots.
    assert!(
        renderer.starts_with("kustomize renderer: ") && renderer.contains("kustomize v"),
        "{version}"
    );
    assert_eq!(kdrift(&["-V"]), expected, "-V is the short version");
}
