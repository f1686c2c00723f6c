//! Markdown export of a run: the question, the answer, its sources as links
//! to the files, and a readable account of how the answer was built. The
//! answer and the documents are untrusted text, so HTML in them is escaped:
//! a viewer that renders HTML shows it as text.

mod markdown;

use std::path::{Path, PathBuf};

pub use markdown::render;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{0} is a directory; give a file name such as answer.md")]
    IsDirectory(PathBuf),
    #[error("the folder {0} does not exist")]
    NoParent(PathBuf),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Writes `contents` to exactly `path`: through a temporary file beside it
/// that is renamed over `path`, so a crash never leaves half a file and
/// nothing is written anywhere else.
pub fn write_file(path: &Path, contents: &str) -> Result<PathBuf, ExportError> {
    if path.is_dir() {
        return Err(ExportError::IsDirectory(path.to_path_buf()));
    }
    let parent = match path.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => return Err(ExportError::NoParent(path.to_path_buf())),
    };
    if !parent.is_dir() {
        return Err(ExportError::NoParent(parent.to_path_buf()));
    }
    // Readable like any file the person saves, not private like a temp file.
    crate::atomic_file::replace(path, contents.as_bytes(), 0o644).map_err(|source| {
        ExportError::Write {
            path: path.to_path_buf(),
            source,
        }
    })?;
    Ok(path.to_path_buf())
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::BTreeSet;

    use serde_json::json;

    use super::*;
    use crate::store::{NewRun, RunOutcome, RunStatus};
    use crate::{Config, Library};

    /// Every file and folder under `root`, to show that a write added
    /// exactly one.
    pub(crate) fn tree(root: &Path) -> BTreeSet<PathBuf> {
        walkdir::WalkDir::new(root)
            .into_iter()
            .map(|entry| entry.unwrap().into_path())
            .collect()
    }

    /// Names a run could smuggle into a path if any part of one were built
    /// from its text.
    pub(crate) const PATH_LIKE: &str = "../../etc/passwd /tmp/evil.md ..\\..\\win.ini nul\0byte";

    #[tokio::test]
    async fn export_writes_the_chosen_file_and_nothing_the_run_names() {
        let root = tempfile::tempdir().unwrap();
        let library = Library::open(Config::new(Some(root.path().join("data")), None))
            .await
            .unwrap();
        let passage = json!({
            "number": 1, "chunk_id": 1, "path": PATH_LIKE, "heading_path": PATH_LIKE,
            "span_start": 0, "span_end": 1, "page": null, "score": 1.0, "text": PATH_LIKE,
        });
        let id = library
            .store()
            .start_run(&NewRun {
                question: PATH_LIKE,
                method: "vanilla-rag",
                params: &json!({}),
                model: &json!({ "model": PATH_LIKE }),
            })
            .await
            .unwrap();
        let outcome = RunOutcome {
            status: RunStatus::Done,
            answer: Some(format!("# {PATH_LIKE}\n\n[1]({PATH_LIKE})")),
            citations: json!([passage]),
            trace: Some(json!({
                "method": "vanilla-rag", "query": PATH_LIKE, "mode": "hybrid", "k": 1,
                "passages": [passage], "unknown_citations": [],
            })),
            error: None,
            timings: json!({}),
            calls: Vec::new(),
        };
        library.store().finish_run(id, &outcome).await.unwrap();
        let out = root.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let before = tree(root.path());
        let chosen = out.join("answer.md");

        assert_eq!(library.export(id, &chosen).await.unwrap(), chosen);

        let added: Vec<_> = tree(root.path()).difference(&before).cloned().collect();
        assert_eq!(
            added,
            std::slice::from_ref(&chosen),
            "only the chosen file is new"
        );
        assert!(std::fs::read_to_string(&chosen)
            .unwrap()
            .contains("etc/passwd"));
        assert!(matches!(
            library.export(id, &out).await,
            Err(crate::Error::Export(ExportError::IsDirectory(_)))
        ));
        assert!(matches!(
            library.export(id, &out.join("missing/answer.md")).await,
            Err(crate::Error::Export(ExportError::NoParent(_)))
        ));
        assert_eq!(tree(root.path()).len(), before.len() + 1);
    }
}
