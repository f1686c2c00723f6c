//! `eval.json`, beside `results.jsonl`: what the rows there answer. A re-run
//! with the same `--out` reads it to tell whether those rows are answers to
//! the questions it would ask, so an interrupted evaluation goes on where it
//! stopped instead of paying for its answers again, and rows of another
//! evaluation are never mixed into its summary.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::dataset::Question;
use super::error::{EvalError, Result};
use super::results::{Opened, ResultsFile};
use super::spec::MethodSpec;
use super::OutDir;
use crate::Config;
use folio_documents::loaders::OcrSettings;
use folio_documents::scan::scan;
use folio_llm::{Backend, LlmSettings};
use folio_methods::runner::ResolvedSettings;

/// Everything an answer depends on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub dataset: Fingerprint,
    pub corpus: Fingerprint,
    /// The ids of the questions asked, in order, after `--limit`.
    pub questions: Vec<String>,
    /// The spec texts, in the order given: rows name their spec by its text.
    pub specs: Vec<String>,
    pub settings: ResolvedSettings,
    /// The tags the questions were scoped to, as given; none for the whole
    /// corpus (and in manifests written before evaluations were scoped).
    #[serde(default)]
    pub tags: Vec<String>,
    pub model: ModelId,
    /// The embedding model as configured (`Config::embedding_label`):
    /// retrieval, and so every answer of a method that retrieves, depends
    /// on it.
    pub embedding_model: String,
}

/// A file's or folder's content, by its BLAKE3 hash rather than its size and
/// modification time: a dataset copied or downloaded again still matches
/// (its modification time changes), and an edit that keeps the size is still
/// caught. Hashing a few megabytes takes milliseconds, less than one answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// Where it was read, for people: only the content is compared, so
    /// moving the files does not void the answers.
    pub path: PathBuf,
    pub bytes: u64,
    pub blake3: String,
}

impl Fingerprint {
    /// A folder's fingerprint covers the documents the scanner indexes
    /// (each one's path in the folder and content, in order), so files the
    /// index never reads, hidden ones, do not count.
    pub fn of(path: &Path) -> Result<Fingerprint> {
        let read = |file: &Path| {
            std::fs::read(file).map_err(|source| EvalError::Read {
                path: file.to_path_buf(),
                source,
            })
        };
        let mut hasher = blake3::Hasher::new();
        let mut bytes = 0;
        if path.is_dir() {
            for file in scan(path, &OcrSettings::default()).files {
                let content = read(&file.path)?;
                let name = file.path.strip_prefix(path).unwrap_or(&file.path);
                hasher.update(name.as_os_str().as_encoded_bytes());
                hasher.update(&[0]);
                hasher.update(&(content.len() as u64).to_le_bytes());
                hasher.update(&content);
                bytes += content.len() as u64;
            }
        } else {
            let content = read(path)?;
            hasher.update(&content);
            bytes = content.len() as u64;
        }
        Ok(Fingerprint {
            path: path.to_path_buf(),
            bytes,
            blake3: hasher.finalize().to_hex().to_string(),
        })
    }

    fn same_content(&self, other: &Fingerprint) -> bool {
        (self.bytes, &self.blake3) == (other.bytes, &other.blake3)
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hash = self.blake3.get(..12).unwrap_or(&self.blake3);
        write!(
            f,
            "{} ({} bytes, blake3 {hash}…)",
            self.path.display(),
            self.bytes
        )
    }
}

/// The model that answers, as the configuration names it: the GGUF file of
/// the embedded backend, or the server and model name of an OpenAI-style one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "backend", rename_all = "lowercase")]
pub enum ModelId {
    Embedded { gguf: String },
    Openai { base_url: String, model: String },
}

impl From<&LlmSettings> for ModelId {
    fn from(llm: &LlmSettings) -> ModelId {
        match llm.backend {
            Backend::Embedded => ModelId::Embedded {
                gguf: llm.model.clone(),
            },
            Backend::Openai => ModelId::Openai {
                base_url: llm.base_url.clone(),
                model: llm.model.clone(),
            },
        }
    }
}

impl fmt::Display for ModelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelId::Embedded { gguf } => write!(f, "embedded {gguf}"),
            ModelId::Openai { base_url, model } => write!(f, "openai {model} at {base_url}"),
        }
    }
}

/// One way this run differs from the earlier evaluation in its `--out`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The setting, as a flag or field name: `max_tokens`, `dataset`, …
    pub what: &'static str,
    pub was: String,
    pub now: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} before, {} now", self.what, self.was, self.now)
    }
}

impl Manifest {
    pub fn new(
        dataset: &Path,
        corpus: &Path,
        questions: &[Question],
        specs: &[MethodSpec],
        settings: ResolvedSettings,
        tags: &[String],
        config: &Config,
    ) -> Result<Manifest> {
        Ok(Manifest {
            dataset: Fingerprint::of(dataset)?,
            corpus: Fingerprint::of(corpus)?,
            questions: questions.iter().map(|q| q.id.clone()).collect(),
            specs: specs.iter().map(ToString::to_string).collect(),
            settings,
            tags: tags.to_vec(),
            model: ModelId::from(&config.llm),
            embedding_model: config.embedding_label(),
        })
    }

    /// How `now` differs from this earlier evaluation in ways that make its
    /// rows no answers to `now`'s questions; empty when the two share them.
    /// Another `--limit` (the questions of one start the other's) and another
    /// set or order of specs share them: each row answers one question with
    /// one spec under the same settings, whichever others were asked beside.
    pub fn differences(&self, now: &Manifest) -> Vec<Difference> {
        let mut found = Vec::new();
        let mut check = |what, differs: bool, was: &dyn fmt::Display, now: &dyn fmt::Display| {
            if differs {
                found.push(Difference {
                    what,
                    was: was.to_string(),
                    now: now.to_string(),
                });
            }
        };
        let (a, b) = (&self.dataset, &now.dataset);
        check("dataset", !a.same_content(b), a, b);
        let (a, b) = (&self.corpus, &now.corpus);
        check("corpus", !a.same_content(b), a, b);
        let (a, b) = (&self.questions, &now.questions);
        check(
            "questions",
            !(b.starts_with(a) || a.starts_with(b)),
            &question_list(a),
            &question_list(b),
        );
        let (a, b) = (&self.settings, &now.settings);
        check("k", a.k != b.k, &a.k_shown(), &b.k_shown());
        check(
            "temperature",
            a.temperature_shown() != b.temperature_shown(),
            &a.temperature_shown(),
            &b.temperature_shown(),
        );
        check(
            "max_tokens",
            a.max_tokens != b.max_tokens,
            &a.max_tokens,
            &b.max_tokens,
        );
        check("seed", a.seed != b.seed, &a.seed, &b.seed);
        let (a, b) = (&self.tags, &now.tags);
        check("tags", a != b, &tag_list(a), &tag_list(b));
        check("model", self.model != now.model, &self.model, &now.model);
        let (a, b) = (&self.embedding_model, &now.embedding_model);
        check("embedding model", a != b, a, b);
        found
    }

    /// What the results file answers once `now` has run beside this earlier
    /// evaluation: the longer question list and every spec of either.
    fn joined(&self, now: &Manifest) -> Manifest {
        let mut joined = now.clone();
        if self.questions.len() > now.questions.len() {
            joined.questions = self.questions.clone();
        }
        joined.specs = self.specs.clone();
        for spec in &now.specs {
            if !joined.specs.contains(spec) {
                joined.specs.push(spec.clone());
            }
        }
        joined
    }

    /// `None` when there is no manifest: a new output folder.
    pub fn read(path: &Path) -> Result<Option<Manifest>> {
        let read_error = |source| EvalError::Read {
            path: path.to_path_buf(),
            source,
        };
        match std::fs::read(path) {
            Ok(text) => serde_json::from_slice(&text)
                .map(Some)
                .map_err(|e| read_error(e.into())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(read_error(e)),
        }
    }

    /// Replaces the file at once, so a crash never leaves half a manifest.
    pub fn write(&self, path: &Path) -> Result<()> {
        let write_error = |source| EvalError::Write {
            path: path.to_path_buf(),
            source,
        };
        let json = serde_json::to_string_pretty(self).map_err(|e| write_error(e.into()))?;
        folio_core::atomic_file::replace(path, (json + "\n").as_bytes(), 0o644).map_err(write_error)
    }
}

/// Tags as a scope names them, or what no tags mean.
pub(super) fn tag_list(tags: &[String]) -> String {
    if tags.is_empty() {
        return "the whole corpus".into();
    }
    let tags: Vec<String> = tags
        .iter()
        .map(|t| format!("#{}", t.trim_start_matches('#')))
        .collect();
    tags.join(", ")
}

fn question_list(ids: &[String]) -> String {
    match ids {
        [] => "none".into(),
        [only] => format!("1 ({only})"),
        [first, .., last] => format!("{} ({first} … {last})", ids.len()),
    }
}

/// Opens `out`'s results for `manifest`'s evaluation, with the rows earlier
/// runs left there for its questions and specs. Without `fresh`, an earlier
/// evaluation's answers are reused when they answer the same questions under
/// the same settings and the run is refused otherwise, before anything in
/// `out` changes; with `fresh`, or in a new folder, the results start empty.
/// Rows of specs or questions this run does not ask stay in the file, and
/// the manifest written covers them, so a later run may ask for them again.
/// It is written after the results are ready, so a crash between the two
/// leaves the earlier manifest over results it still describes.
pub fn open(out: &OutDir, manifest: &Manifest, fresh: bool) -> Result<Opened> {
    let earlier = if fresh {
        None
    } else {
        Manifest::read(&out.manifest())?
    };
    let (mut opened, covered): (Opened, Manifest) = match earlier {
        Some(earlier) => {
            let differences = earlier.differences(manifest);
            if !differences.is_empty() {
                return Err(EvalError::Mismatch {
                    out: out.root().to_path_buf(),
                    differences,
                });
            }
            (
                ResultsFile::resume(&out.results())?,
                earlier.joined(manifest),
            )
        }
        None if !fresh && std::fs::metadata(out.results()).is_ok_and(|m| m.len() > 0) => {
            return Err(EvalError::NoManifest(out.results()))
        }
        None => (ResultsFile::create(&out.results())?, manifest.clone()),
    };
    covered.write(&out.manifest())?;
    let questions: HashSet<&str> = manifest.questions.iter().map(String::as_str).collect();
    opened
        .rows
        .retain(|r| questions.contains(r.question_id.as_str()) && manifest.specs.contains(&r.spec));
    Ok(opened)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Supporting;

    fn fingerprint(path: &str, content: &str) -> Fingerprint {
        Fingerprint {
            path: path.into(),
            bytes: content.len() as u64,
            blake3: blake3::hash(content.as_bytes()).to_hex().to_string(),
        }
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn manifest() -> Manifest {
        Manifest {
            dataset: fingerprint("dev.jsonl", "questions"),
            corpus: fingerprint("corpus.jsonl", "passages"),
            questions: strings(&["q1", "q2"]),
            specs: strings(&["llm-only", "vanilla-rag"]),
            settings: ResolvedSettings {
                k: Some(5),
                temperature: Some(0.0),
                configured_temperature: 0.0,
                max_tokens: 24,
                seed: 42,
            },
            tags: Vec::new(),
            model: ModelId::Embedded {
                gguf: "smollm2.gguf".into(),
            },
            embedding_model: "models/emb".into(),
        }
    }

    fn differing(now: &Manifest) -> Vec<&'static str> {
        manifest().differences(now).iter().map(|d| d.what).collect()
    }

    #[test]
    fn the_same_evaluation_resumes() {
        assert!(differing(&manifest()).is_empty());
        let moved = Manifest {
            dataset: fingerprint("elsewhere/dev.jsonl", "questions"),
            ..manifest()
        };
        assert!(differing(&moved).is_empty(), "only content counts");
    }

    #[test]
    fn another_limit_shares_answers_other_questions_do_not() {
        for ids in [&["q1", "q2", "q3"][..], &["q1"]] {
            let limited = Manifest {
                questions: strings(ids),
                ..manifest()
            };
            assert!(differing(&limited).is_empty(), "{ids:?}");
        }
        let other = Manifest {
            questions: strings(&["q2", "q1"]),
            ..manifest()
        };
        let differences = manifest().differences(&other);
        assert_eq!(differences.len(), 1);
        assert_eq!(
            differences[0].to_string(),
            "questions: 2 (q1 … q2) before, 2 (q2 … q1) now"
        );
    }

    #[test]
    fn any_specs_share_answers_and_the_manifest_covers_them_all() {
        let other = Manifest {
            specs: strings(&["pager", "llm-only"]),
            questions: strings(&["q1"]),
            ..manifest()
        };
        assert!(differing(&other).is_empty());
        let joined = manifest().joined(&other);
        assert_eq!(joined.specs, ["llm-only", "vanilla-rag", "pager"]);
        assert_eq!(joined.questions, ["q1", "q2"]);
    }

    #[test]
    fn other_changes_are_named() {
        let mut now = manifest();
        now.settings.max_tokens = 32;
        let differences = manifest().differences(&now);
        assert_eq!(
            differences,
            [Difference {
                what: "max_tokens",
                was: "24".into(),
                now: "32".into()
            }]
        );
        let err = EvalError::Mismatch {
            out: "eval-out".into(),
            differences,
        }
        .to_string();
        assert!(
            err.starts_with(
                "eval-out holds another evaluation's results (max_tokens: 24 before, 32 now)"
            ),
            "{err}"
        );
        assert!(
            err.contains("--fresh") && err.contains("new --out"),
            "{err}"
        );

        let now = Manifest {
            dataset: fingerprint("dev.jsonl", "other questions"),
            corpus: fingerprint("corpus.jsonl", "other passages"),
            settings: ResolvedSettings {
                k: Some(8),
                temperature: Some(0.7),
                configured_temperature: 0.7,
                max_tokens: 24,
                seed: 42,
            },
            model: ModelId::Openai {
                base_url: "http://127.0.0.1:8080/v1".into(),
                model: "qwen".into(),
            },
            tags: strings(&["garden/fruit"]),
            embedding_model: "models/other".into(),
            ..manifest()
        };
        assert_eq!(
            differing(&now),
            [
                "dataset",
                "corpus",
                "k",
                "temperature",
                "tags",
                "model",
                "embedding model"
            ]
        );
        let tags = manifest()
            .differences(&now)
            .into_iter()
            .find(|d| d.what == "tags")
            .unwrap();
        assert_eq!(
            tags.to_string(),
            "tags: the whole corpus before, #garden/fruit now"
        );
    }

    #[test]
    fn a_folder_is_fingerprinted_by_the_documents_indexed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "# A").unwrap();
        let first = Fingerprint::of(dir.path()).unwrap();
        std::fs::write(dir.path().join(".notes.md"), "hidden").unwrap();
        assert_eq!(Fingerprint::of(dir.path()).unwrap(), first);
        std::fs::write(dir.path().join("a.md"), "# B").unwrap();
        let edited = Fingerprint::of(dir.path()).unwrap();
        assert_eq!(edited.bytes, first.bytes);
        assert!(!edited.same_content(&first), "same size, other content");
    }

    fn question(id: &str) -> Question {
        Question {
            id: id.into(),
            question: "Who?".into(),
            answers: vec!["Ann".into()],
            supporting: Supporting::Unknown,
            turn: None,
        }
    }

    fn answer(opened: &mut Opened, id: &str) {
        let spec: MethodSpec = "llm-only".parse().unwrap();
        let error = crate::Error::Task("boom".into());
        let row = crate::eval::Row::failed(&question(id), &spec, &error, 1);
        opened.file.append(&row).unwrap();
    }

    #[test]
    fn open_resumes_refuses_or_starts_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::create(dir.path()).unwrap();
        let mut first = open(&out, &manifest(), false).unwrap();
        assert!(first.rows.is_empty());
        answer(&mut first, "q1");
        drop(first);
        assert_eq!(Manifest::read(&out.manifest()).unwrap(), Some(manifest()));

        let longer = Manifest {
            questions: strings(&["q1", "q2", "q3"]),
            ..manifest()
        };
        let mut resumed = open(&out, &longer, false).unwrap();
        assert_eq!(resumed.rows.len(), 1);
        answer(&mut resumed, "q2");
        drop(resumed);
        assert_eq!(
            Manifest::read(&out.manifest()).unwrap(),
            Some(longer.clone())
        );

        let one_question = Manifest {
            questions: strings(&["q1"]),
            ..manifest()
        };
        assert_eq!(open(&out, &one_question, false).unwrap().rows.len(), 1);
        let other_spec = Manifest {
            specs: strings(&["pager"]),
            ..manifest()
        };
        assert!(open(&out, &other_spec, false).unwrap().rows.is_empty());
        let covered = Manifest::read(&out.manifest()).unwrap().unwrap();
        assert_eq!(covered.questions, longer.questions, "the longest list");
        assert_eq!(covered.specs, ["llm-only", "vanilla-rag", "pager"]);
        assert_eq!(
            open(&out, &longer, false).unwrap().rows.len(),
            2,
            "rows kept"
        );

        let before = std::fs::read(out.results()).unwrap();
        let mut other = manifest();
        other.settings.max_tokens = 32;
        let err = open(&out, &other, false).unwrap_err();
        assert!(matches!(err, EvalError::Mismatch { .. }), "{err}");
        assert_eq!(std::fs::read(out.results()).unwrap(), before);

        let fresh = open(&out, &other, true).unwrap();
        assert!(fresh.rows.is_empty());
        assert_eq!(std::fs::read(out.results()).unwrap(), b"");
        assert_eq!(Manifest::read(&out.manifest()).unwrap(), Some(other));
    }

    #[test]
    fn answers_without_a_manifest_are_not_taken_on_trust() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::create(dir.path()).unwrap();
        std::fs::write(out.results(), "{}\n").unwrap();
        let err = open(&out, &manifest(), false).unwrap_err();
        assert!(matches!(&err, EvalError::NoManifest(_)), "{err}");
        assert!(err.to_string().contains("--fresh"), "{err}");
        assert!(open(&out, &manifest(), true).unwrap().rows.is_empty());
    }
}
