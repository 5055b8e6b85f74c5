//! A manifest file as its documents: byte ranges split at `---` and `...` marker lines — the one
//! splitter of the manifest loader (`manifest::parse`), kustomize's sources and the edit, so that a
//! document index means the same thing in all.
use std::ops::Range;

/// The byte range of every document of `text`, in order. `--- key: value` keeps the content of
/// the marker line in the document that follows it.
pub fn split(text: &str) -> Vec<Range<usize>> {
    let mut pieces = Vec::new();
    let (mut start, mut offset) = (0, 0);
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end();
        if bare == "---" || bare.starts_with("--- ") || bare == "..." {
            pieces.push(start..offset);
            start = offset
                + if bare.starts_with("--- ") {
                    4
                } else {
                    line.len()
                };
        }
        offset += line.len();
    }
    pieces.push(start..text.len());
    pieces
}

/// True when every line of `text` ends in CRLF (and there is at least one line end).
pub fn uses_crlf(text: &str) -> bool {
    let lf = text.matches('\n').count();
    lf > 0 && text.matches("\r\n").count() == lf
}

/// `edited` ending as `original` ends: with or without a final line break. Only the one break
/// the edit added goes: blank lines before it are the file's own.
pub fn keep_final_newline(original: &str, mut edited: String) -> String {
    match (original.ends_with('\n'), edited.ends_with('\n')) {
        (false, true) => {
            edited.pop();
        }
        (true, false) if !edited.is_empty() => edited.push('\n'),
        _ => {}
    }
    edited
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_counts_documents_like_the_loader() {
        let text = "---\na: 1\n---\nb: 2\n...\n--- c: 3\n";
        let docs: Vec<&str> = split(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(docs, vec!["", "a: 1\n", "b: 2\n", "", "c: 3\n"]);
    }

    #[test]
    fn crlf_only_when_every_line_has_it() {
        assert!(uses_crlf("a: 1\r\nb: 2\r\n"));
        assert!(!uses_crlf("a: 1\r\nb: 2\n"));
        assert!(!uses_crlf("a: 1"));
    }
}
