//! The documents questions are answered from. A JSONL corpus (`{"id",
//! "title", "text"}` a line, like `../shared/eval/hotpotqa/corpus.jsonl`)
//! becomes a folder of one markdown file per passage, so it goes through the
//! same pipeline as a user's notes and nothing about passages is special-cased
//! in the engine. A folder corpus is indexed as it is.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::error::{EvalError, Result};
use crate::library::Library;
use folio_index::pipeline::PassSummary;

#[derive(Deserialize)]
struct Passage {
    id: String,
    title: String,
    text: String,
}

/// What writing a JSONL corpus out did.
#[derive(
    Debug,
    Clone,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    Deserialize,
    ts_rs::TS,
    schemars::JsonSchema,
)]
#[ts(export)]
pub struct WrittenCorpus {
    pub passages: usize,
    /// Bytes of all the passage files, written or not.
    pub bytes: u64,
    pub written: usize,
    /// Files already on disk with the same content, left untouched.
    pub unchanged: usize,
    /// Markdown files of an earlier corpus that this one no longer has.
    pub removed: usize,
    #[serde(skip)]
    #[ts(skip)]
    pub titles: PassageTitles,
}

/// Which passage title each written file holds, so retrieved files can be
/// matched against a question's supporting titles.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassageTitles(HashMap<String, String>);

impl PassageTitles {
    /// The title of the passage at `path` (a source as runs list it), when
    /// it is one of the written files.
    pub fn of(&self, path: &str) -> Option<&str> {
        let name = Path::new(path).file_name()?.to_str()?;
        self.0.get(name).map(String::as_str)
    }
}

/// Writes the first `limit` passages of `corpus` (all without a limit) to
/// `dir` as `{id}.md` holding `# {title}\n\n{text}\n`. Files whose content
/// is already there are not rewritten, so their modification times stay and
/// the pipeline skips them: re-running an evaluation reuses its index. Other
/// `.md` files in `dir` are removed, so the folder is exactly this corpus.
pub fn write_passages(corpus: &Path, dir: &Path, limit: Option<usize>) -> Result<WrittenCorpus> {
    let text = std::fs::read_to_string(corpus).map_err(|source| EvalError::Read {
        path: corpus.to_path_buf(),
        source,
    })?;
    std::fs::create_dir_all(dir).map_err(|source| EvalError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut done = WrittenCorpus::default();
    let mut ids_by_file: HashMap<String, (String, usize)> = HashMap::new();
    for (index, raw) in text.lines().enumerate() {
        if done.passages >= limit.unwrap_or(usize::MAX) {
            break;
        }
        if raw.trim().is_empty() {
            continue;
        }
        let line = index + 1;
        let bad = |message: String| EvalError::BadLine {
            path: corpus.to_path_buf(),
            line,
            message,
        };
        let passage: Passage = serde_json::from_str(raw).map_err(|e| bad(e.to_string()))?;
        let name = file_name(&passage.id);
        if let Some((other, other_line)) =
            ids_by_file.insert(name.clone(), (passage.id.clone(), line))
        {
            return Err(bad(format!(
                "passage `{}` would be written to {name}, like passage `{other}` of line {other_line}",
                passage.id
            )));
        }
        let body = format!("# {}\n\n{}\n", passage.title, passage.text);
        done.titles.0.insert(name.clone(), passage.title.clone());
        let path = dir.join(&name);
        if std::fs::read(&path).is_ok_and(|old| old == body.as_bytes()) {
            done.unchanged += 1;
        } else {
            std::fs::write(&path, &body).map_err(|source| EvalError::Write {
                path: path.clone(),
                source,
            })?;
            done.written += 1;
        }
        done.bytes += body.len() as u64;
        done.passages += 1;
    }
    let kept: BTreeSet<String> = ids_by_file.into_keys().collect();
    done.removed = remove_others(dir, &kept)?;
    Ok(done)
}

/// The id as a file name: characters other than ASCII letters, digits, `-`,
/// `_` and `.` become `_`, and a leading `.` too, since the scanner skips
/// hidden files.
fn file_name(id: &str) -> String {
    let mut name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() || name.starts_with('.') {
        name.insert(0, '_');
    }
    name + ".md"
}

fn remove_others(dir: &Path, kept: &BTreeSet<String>) -> Result<usize> {
    let read_error = |source| EvalError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut removed = 0;
    for entry in std::fs::read_dir(dir).map_err(read_error)? {
        let path = entry.map_err(read_error)?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let stale =
            path.extension().is_some_and(|e| e == "md") && name.is_some_and(|n| !kept.contains(&n));
        if stale {
            std::fs::remove_file(&path).map_err(|source| EvalError::Write {
                path: path.clone(),
                source,
            })?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Indexes `dir` as the library's only folder (a folder of an earlier
/// corpus is dropped) and runs the pending work, resuming an ingest an
/// earlier run left unfinished. Unchanged files are skipped by the pipeline.
pub async fn ingest(library: &Library, dir: &Path) -> crate::Result<PassSummary> {
    let root = std::fs::canonicalize(dir).map_err(|_| crate::Error::NotFound(dir.into()))?;
    for other in library.roots().await? {
        if other.path != root {
            library.remove(&other.path).await?;
        }
    }
    let job = library.add(&[root]).await?;
    let passes = library.jobs().run_pending().await?;
    Ok(passes
        .into_iter()
        .find(|(id, _)| *id == job)
        .map(|(_, summary)| summary)
        .unwrap_or_default())
}

/// The folder an evaluation indexes, and what writing it out did when the
/// corpus was a JSONL file.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedCorpus {
    pub folder: PathBuf,
    pub written: Option<WrittenCorpus>,
}

/// A folder corpus as it is; a JSONL corpus written out to `passages_dir`.
pub fn prepare(corpus: &Path, passages_dir: &Path) -> Result<PreparedCorpus> {
    if corpus.is_dir() {
        return Ok(PreparedCorpus {
            folder: corpus.to_path_buf(),
            written: None,
        });
    }
    let written = write_passages(corpus, passages_dir, None)?;
    Ok(PreparedCorpus {
        folder: passages_dir.to_path_buf(),
        written: Some(written),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus(dir: &Path, lines: &[&str]) -> PathBuf {
        let path = dir.join("corpus.jsonl");
        std::fs::write(&path, lines.join("\n")).unwrap();
        path
    }

    #[test]
    fn passages_become_markdown_files_written_once() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let source = corpus(
            tmp.path(),
            &[
                r#"{"id": "p-1", "title": "Ann", "text": "Ann was born."}"#,
                "",
                r#"{"id": "p/2", "title": "Bo", "text": "Bo left."}"#,
            ],
        );
        let first = write_passages(&source, &out, None).unwrap();
        assert_eq!((first.passages, first.written, first.unchanged), (2, 2, 0));
        assert_eq!(
            std::fs::read_to_string(out.join("p-1.md")).unwrap(),
            "# Ann\n\nAnn was born.\n"
        );
        assert!(out.join("p_2.md").exists());
        assert_eq!(first.bytes, 21 + 15);

        let again = write_passages(&source, &out, None).unwrap();
        assert_eq!((again.written, again.unchanged, again.removed), (0, 2, 0));

        let smaller = corpus(
            tmp.path(),
            &[r#"{"id": "p-1", "title": "Ann", "text": "Ann was born in 1901."}"#],
        );
        let changed = write_passages(&smaller, &out, None).unwrap();
        assert_eq!((changed.written, changed.removed), (1, 1));
        assert!(!out.join("p_2.md").exists());
    }

    #[test]
    fn a_limit_takes_the_first_passages() {
        let tmp = tempfile::tempdir().unwrap();
        let source = corpus(
            tmp.path(),
            &[
                r#"{"id": "a", "title": "A", "text": "a"}"#,
                r#"{"id": "b", "title": "B", "text": "b"}"#,
            ],
        );
        let out = tmp.path().join("out");
        assert_eq!(write_passages(&source, &out, Some(1)).unwrap().passages, 1);
        assert!(out.join("a.md").exists() && !out.join("b.md").exists());
    }

    #[test]
    fn bad_lines_and_clashing_ids_name_the_line() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let missing = corpus(tmp.path(), &[r#"{"id": "a", "text": "a"}"#]);
        let err = write_passages(&missing, &out, None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("corpus.jsonl:1: ") && err.contains("title"),
            "{err}"
        );
        let clash = corpus(
            tmp.path(),
            &[
                r#"{"id": "a b", "title": "A", "text": "a"}"#,
                r#"{"id": "a/b", "title": "B", "text": "b"}"#,
            ],
        );
        let err = write_passages(&clash, &out, None).unwrap_err().to_string();
        assert!(
            err.contains("corpus.jsonl:2: ") && err.contains("line 1"),
            "{err}"
        );
    }

    #[test]
    fn ids_become_visible_file_names() {
        assert_eq!(file_name("hp-3b5a14676d"), "hp-3b5a14676d.md");
        assert_eq!(file_name(".hidden"), "_.hidden.md");
        assert_eq!(file_name(""), "_.md");
        assert_eq!(file_name("São"), "S_o.md");
    }
}
