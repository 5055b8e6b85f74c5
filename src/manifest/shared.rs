//! One parse of a manifest file for every load under way that reads it: the contexts of a fleet
//! that read one checkout load at once, and each would parse every file again.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{parse, tree};

/// A file as a load read it: its path, the namespace its objects without one take, its text.
type FileRead = (PathBuf, String, Arc<str>);

/// The files parsed by the loads under way, shared by every load that reads the same file with
/// the same text and namespace: the contexts of a fleet that read one checkout load at once,
/// and each file is parsed once, its objects' bodies held once. Emptied when the last load
/// under way ends, so that it holds nothing between loads.
#[derive(Default)]
struct ParsesUnderWay {
    loads: usize,
    files: HashMap<FileRead, Arc<std::sync::OnceLock<parse::ParsedFile>>>,
}

static PARSES: std::sync::LazyLock<std::sync::Mutex<ParsesUnderWay>> =
    std::sync::LazyLock::new(Default::default);

fn parses() -> std::sync::MutexGuard<'static, ParsesUnderWay> {
    PARSES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One load under way: its parses are shared with the others until the last one ends.
pub(super) struct LoadUnderWay;

impl LoadUnderWay {
    pub(super) fn begin() -> LoadUnderWay {
        parses().loads += 1;
        LoadUnderWay
    }
}

impl Drop for LoadUnderWay {
    fn drop(&mut self) {
        let mut parses = parses();
        parses.loads = parses.loads.saturating_sub(1);
        if parses.loads == 0 {
            parses.files = HashMap::new();
        }
    }
}

/// `path` parsed as another load under way parsed it (waiting for that parse when it is under
/// way), else parsed here.
pub(super) fn parse(
    path: &Path,
    text: String,
    namespace: &str,
    names: &mut tree::Names,
) -> parse::ParsedFile {
    let text: Arc<str> = Arc::from(text);
    let read = (path.to_path_buf(), namespace.to_owned(), Arc::clone(&text));
    let cell = Arc::clone(parses().files.entry(read).or_default());
    cell.get_or_init(|| parse::parse_file_sharing(&Arc::from(path), &text, namespace, names))
        .clone()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::super::ManifestIndex;
    use super::*;

    fn web(replicas: u32) -> String {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  replicas: {replicas}\n"
        )
    }

    #[test]
    fn loads_under_way_together_share_each_files_parse_and_an_edit_is_parsed_again() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("web.yaml");
        std::fs::write(&file, web(3)).unwrap();
        let key = super::super::ObjectKey::new("apps", "Deployment", "shop", "web");
        let body = |index: &ManifestIndex| index.get(&key).unwrap().body.clone();
        // Another load under way (a context still reading) while these two read the folder.
        let under_way = LoadUnderWay::begin();
        let (a, b) = (
            ManifestIndex::load(dir.path(), "default"),
            ManifestIndex::load(dir.path(), "default"),
        );
        assert!(body(&a).same_bytes(&body(&b)), "one parse, one body");
        // Another namespace for objects that set none is another parse.
        let other = ManifestIndex::load(dir.path(), "staging");
        assert!(!body(&a).same_bytes(&body(&other)));
        // The file edited: its new text is parsed, not the first load's reused.
        std::fs::write(&file, web(5)).unwrap();
        let edited = ManifestIndex::load(dir.path(), "default");
        assert!(!body(&a).same_bytes(&body(&edited)));
        let replicas = |index: &ManifestIndex| {
            index
                .get(&key)
                .unwrap()
                .body
                .get("spec")
                .and_then(|s| s.get("replicas"))
                .map(|r| r.to_value())
        };
        assert_ne!(replicas(&a), replicas(&edited));
        drop(under_way);
    }
}
