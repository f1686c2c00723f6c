//! Markdown export of a run: the question, the answer, its sources as links
//! to the files, and a readable account of how the answer was built. The
//! answer and the documents are untrusted text, so HTML in them is escaped:
//! a viewer that renders HTML shows it as text.

mod markdown;

use std::path::{Path, PathBuf};

pub use markdown::{render, render_thread};

/// Prompt tokens in words: `812`, or `812 (600 from the cache)` where the
/// model took some from its cache rather than computing them.
pub fn prompt_tokens(sent: i64, cached: i64) -> String {
    if cached > 0 {
        format!("{sent} ({cached} from the cache)")
    } else {
        sent.to_string()
    }
}

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
    folio_core::atomic_file::replace(path, contents.as_bytes(), 0o644).map_err(|source| {
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
    use crate::{Config, Library};
    use folio_store::{NewRun, RunOutcome, RunStatus};

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
            .store
            .start_run(&NewRun {
                placement: folio_store::Placement::NewThread,
                question: PATH_LIKE,
                method: "vanilla-rag",
                scope: &Default::default(),
                params: &json!({}),
                model: &json!({ "model": PATH_LIKE }),
            })
            .await
            .unwrap()
            .unwrap()
            .run;
        let outcome = RunOutcome {
            status: RunStatus::Done,
            turn: None,
            answer: Some(format!("# {PATH_LIKE}\n\n[1]({PATH_LIKE})")),
            cut_off: None,
            citations: json!([passage]),
            trace: Some(json!({
                "method": "vanilla-rag", "query": PATH_LIKE, "mode": "hybrid", "k": 1,
                "passages": [passage], "unknown_citations": [],
            })),
            error: None,
            timings: json!({}),
            calls: Vec::new(),
        };
        library.store.finish_run(id, &outcome).await.unwrap();
        let out = root.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let before = tree(root.path());
        let chosen = out.join("answer.md");

        assert_eq!(library.runs().export(id, &chosen).await.unwrap(), chosen);

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
            library.runs().export(id, &out).await,
            Err(crate::Error::Export(ExportError::IsDirectory(_)))
        ));
        assert!(matches!(
            library
                .runs()
                .export(id, &out.join("missing/answer.md"))
                .await,
            Err(crate::Error::Export(ExportError::NoParent(_)))
        ));
        assert_eq!(tree(root.path()).len(), before.len() + 1);
    }

    /// A thread exports as one file, turn after turn, and keeps its answers
    /// after the documents they cite are removed, marking those sources.
    #[tokio::test]
    async fn a_thread_exports_whole_with_removed_sources_marked() {
        use crate::testing::{ask_with, library_with, says, ScriptedLlm, ADA_NOTES};
        use folio_methods::runner::AskRequest;

        let root = tempfile::tempdir().unwrap();
        let library = library_with(root.path(), ADA_NOTES).await;
        let llm = ScriptedLlm::new(vec![
            says("Ada Lovelace [1]."),
            says("Where was Ada Lovelace born?"),
            says("```\n# London [1]"),
        ]);
        let request = AskRequest::new("Who wrote the first algorithm?", "vanilla-rag");
        let (first, _) = ask_with(&library, &llm, &request).await;
        let mut request = AskRequest::new("Where was she born?", "vanilla-rag");
        request.thread = Some(first.thread_id);
        let (second, _) = ask_with(&library, &llm, &request).await;
        library.remove(&root.path().join("notes")).await.unwrap();

        let out = root.path().join("thread.md");
        library
            .threads()
            .export(first.thread_id, &out)
            .await
            .unwrap();
        let text = std::fs::read_to_string(&out).unwrap();
        let headings: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with('#') && !l.starts_with("####"))
            .collect();
        assert_eq!(
            headings,
            [
                "# Who wrote the first algorithm?",
                "## Who wrote the first algorithm?",
                "### Sources",
                "### How this answer was built",
                "## Where was she born?",
                "# London [1]", // code in the answer, not a heading
                "### Sources",
                "### How this answer was built",
            ],
            "{text}"
        );
        assert!(text.contains("rewritten as *Where was Ada Lovelace born?*"));
        assert!(text.contains(&format!("saw the earlier turns run {}", first.id)));
        assert!(
            text.contains("# London [1]\n```"),
            "the answer's fence is closed"
        );
        assert_eq!(
            text.matches("no longer in the library").count(),
            2,
            "{text}"
        );
        assert_eq!(second.thread_id, first.thread_id);
    }
}
