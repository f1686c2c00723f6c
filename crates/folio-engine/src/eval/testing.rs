//! Evaluation folders built by hand for the tests of what reads them.

use super::manifest::{Fingerprint, Manifest, ModelId};
use super::metrics::Scores;
use super::results::{ResultsFile, Row};
use super::OutDir;
use folio_methods::runner::ResolvedSettings;
use folio_store::RunStatus;

/// A finished answer of `spec` to `question`, right by Cover-EM or not.
pub fn row(question: &str, spec: &str, cover_em: bool) -> Row {
    Row {
        question_id: question.into(),
        spec: spec.into(),
        status: RunStatus::Done,
        answer: Some(format!("{spec} says {question}")),
        error: None,
        scores: Scores {
            em: false,
            f1: 0.0,
            cover_em,
        },
        llm_calls: 1,
        prompt_tokens: 1,
        cached_tokens: 0,
        completion_tokens: 1,
        wall_ms: 1,
        run_id: Some(1),
        sources: Vec::new(),
        cited: Vec::new(),
        attributed: Vec::new(),
        evidence_hit: None,
        refused: false,
        cut_off: false,
    }
}

/// An evaluation folder with no index: the answers, no traces.
pub fn folder(rows: &[Row]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = OutDir::create(dir.path()).unwrap();
    let dataset = dir.path().join("dev.jsonl");
    std::fs::write(
        &dataset,
        "{\"id\": \"q1\", \"question\": \"Who?\", \"answers\": [\"Ann\"]}\n\
         {\"id\": \"q2\", \"question\": \"When?\", \"answers\": [\"1984\"]}\n\
         {\"id\": \"q3\", \"question\": \"Where?\", \"answers\": [\"Oslo\"]}\n",
    )
    .unwrap();
    let fingerprint = Fingerprint::of(&dataset).unwrap();
    let manifest = Manifest {
        dataset: fingerprint.clone(),
        corpus: fingerprint,
        questions: vec!["q1".into(), "q2".into(), "q3".into()],
        specs: vec!["a".into(), "b".into()],
        settings: ResolvedSettings {
            k: Some(5),
            temperature: Some(0.0),
            configured_temperature: 0.0,
            max_tokens: 24,
            seed: 42,
        },
        tags: Vec::new(),
        model: ModelId::Embedded { gguf: "m".into() },
        embedding_model: "e".into(),
    };
    manifest.write(&out.manifest()).unwrap();
    let mut file = ResultsFile::create(&out.results()).unwrap().file;
    for r in rows {
        file.append(r).unwrap();
    }
    dir
}
