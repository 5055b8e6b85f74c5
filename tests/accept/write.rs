//! The verified atomic write of an accepted manifest: refused when the file changed since it was
//! read or lies outside the manifests root; the mode is kept and no temp file is left behind.
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use kdrift::manifest::edit::{ContentHash, WriteError, write_verified};

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write fixture");
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).expect("read back")
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

#[test]
fn replaces_the_contents_keeps_the_mode_and_leaves_no_temp_file() {
    let root = tempfile::tempdir().expect("temp dir");
    let file = root.path().join("web.yaml");
    write(&file, "replicas: 2\n");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let hash = ContentHash::of(b"replicas: 2\n");
    write_verified(root.path(), Path::new("web.yaml"), hash, "replicas: 5\n").expect("written");
    assert_eq!(read(&file), "replicas: 5\n");
    let mode = std::fs::metadata(&file).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    assert_eq!(entries(root.path()), vec!["web.yaml"]);
}

#[test]
fn a_file_changed_since_it_was_read_is_not_overwritten() {
    let root = tempfile::tempdir().expect("temp dir");
    let file = root.path().join("web.yaml");
    let hash = ContentHash::of(b"replicas: 2\n");
    write(&file, "replicas: 3 # someone else's edit\n");
    let error = write_verified(root.path(), &file, hash, "replicas: 5\n").expect_err("refused");
    assert!(matches!(error, WriteError::ChangedOnDisk { .. }), "{error}");
    assert!(
        error.to_string().contains("web.yaml"),
        "names the file: {error}"
    );
    assert_eq!(read(&file), "replicas: 3 # someone else's edit\n");
}

#[test]
fn never_writes_outside_the_root_or_through_a_symlink_that_leaves_it() {
    let root = tempfile::tempdir().expect("root");
    let elsewhere = tempfile::tempdir().expect("elsewhere");
    let outside = elsewhere.path().join("secret.yaml");
    write(&outside, "a: 1\n");
    let hash = ContentHash::of(b"a: 1\n");

    let error = write_verified(root.path(), &outside, hash, "a: 2\n").expect_err("outside");
    assert!(matches!(error, WriteError::OutsideRoot { .. }), "{error}");

    let link = root.path().join("link.yaml");
    std::os::unix::fs::symlink(&outside, &link).expect("symlink");
    let error = write_verified(root.path(), &link, hash, "a: 2\n").expect_err("through link");
    assert!(matches!(error, WriteError::OutsideRoot { .. }), "{error}");

    let error = write_verified(
        root.path(),
        Path::new("../x/../secret.yaml"),
        hash,
        "a: 2\n",
    );
    assert!(error.is_err());
    assert_eq!(read(&outside), "a: 1\n");
}

#[test]
fn a_symlink_inside_the_root_writes_its_target_and_stays_a_link() {
    let root = tempfile::tempdir().expect("root");
    std::fs::create_dir(root.path().join("base")).expect("mkdir");
    let target = root.path().join("base/web.yaml");
    write(&target, "a: 1\n");
    let link = root.path().join("web.yaml");
    std::os::unix::fs::symlink("base/web.yaml", &link).expect("symlink");
    write_verified(root.path(), &link, ContentHash::of(b"a: 1\n"), "a: 2\n").expect("written");
    assert_eq!(read(&target), "a: 2\n");
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("meta")
            .file_type()
            .is_symlink()
    );
}
