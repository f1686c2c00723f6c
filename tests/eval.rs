//! `folio eval` end to end: the real CLI over a tiny JSONL corpus with the
//! kit's real embedding model and SmolLM2. Assertions are on structure
//! (rows, fields, the summary table, the index being reused), never on the
//! tiny model's answers.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::SystemTime;

use serde_json::Value;

const PASSAGES: &[(&str, &str, &str)] = &[
    (
        "zorblat",
        "Zorblat",
        "The zorblat is a purple fruit grown on the island of Quenby.",
    ),
    (
        "quenby",
        "Quenby",
        "Quenby is a small island whose capital is Port Arlo.",
    ),
    (
        "port-arlo",
        "Port Arlo",
        "Port Arlo was founded in 1812 by the sailor Mira Tovel.",
    ),
    (
        "mira-tovel",
        "Mira Tovel",
        "Mira Tovel was a sailor born in Lisbon who mapped the Quenby coast.",
    ),
    (
        "lisbon",
        "Lisbon",
        "Lisbon is the capital and largest city of Portugal.",
    ),
    (
        "tovel-bridge",
        "Tovel Bridge",
        "The Tovel Bridge in Port Arlo is made of grey granite.",
    ),
];

const QUESTIONS: &str = r#"{"id": "q1", "question": "What colour is the zorblat fruit?", "answers": ["purple"], "supporting_titles": ["Zorblat"]}
{"id": "q2", "question": "Who founded Port Arlo?", "answers": ["Mira Tovel"], "supporting_titles": ["Port Arlo"]}
"#;

const ROW_FIELDS: &[&str] = &[
    "question_id",
    "spec",
    "status",
    "answer",
    "error",
    "em",
    "f1",
    "cover_em",
    "llm_calls",
    "prompt_tokens",
    "completion_tokens",
    "wall_ms",
    "run_id",
    "sources",
];

struct Inputs {
    dataset: PathBuf,
    corpus: PathBuf,
    out: PathBuf,
    _root: tempfile::TempDir,
}

fn inputs() -> Inputs {
    let root = tempfile::tempdir().unwrap();
    let corpus = root.path().join("corpus.jsonl");
    let lines: Vec<String> = PASSAGES
        .iter()
        .map(|(id, title, text)| {
            serde_json::json!({ "id": id, "title": title, "text": text }).to_string()
        })
        .collect();
    std::fs::write(&corpus, lines.join("\n") + "\n").unwrap();
    let dataset = root.path().join("dev.jsonl");
    std::fs::write(&dataset, QUESTIONS).unwrap();
    Inputs {
        dataset,
        corpus,
        out: root.path().join("eval-out"),
        _root: root,
    }
}

/// The CLI with an empty configuration (a developer's folio.toml never
/// changes what is tested) and one model thread, as in tests/ask.rs.
fn folio(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_folio"))
        .args(args)
        .env("FOLIO_CONFIG", "/dev/null")
        .env("FOLIO_LLM_THREADS", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run folio")
}

fn eval(inputs: &Inputs, methods: &str, json: bool) -> Output {
    let mut args = Vec::new();
    if json {
        args.push("--json");
    }
    args.extend([
        "eval",
        "--dataset",
        inputs.dataset.to_str().unwrap(),
        "--corpus",
        inputs.corpus.to_str().unwrap(),
        "--methods",
        methods,
        "--out",
        inputs.out.to_str().unwrap(),
        "--max-tokens",
        "24",
        "--temperature",
        "0",
    ]);
    folio(&args)
}

fn succeeded(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "folio eval failed: {stderr}");
    stderr
}

fn rows(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn mtimes(dir: &Path) -> Vec<(PathBuf, SystemTime)> {
    let mut all: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
            (path, modified)
        })
        .collect();
    all.sort();
    all
}

#[test]
fn every_question_is_answered_by_every_method_and_summarised() {
    let inputs = inputs();
    let out = eval(&inputs, "llm-only,vanilla-rag", false);
    let stderr = succeeded(&out);
    assert!(stderr.contains("[4/4] vanilla-rag q2"), "{stderr}");

    let first = rows(&inputs.out);
    let order: Vec<(&str, &str)> = first
        .iter()
        .map(|r| {
            (
                r["question_id"].as_str().unwrap(),
                r["spec"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            ("q1", "llm-only"),
            ("q1", "vanilla-rag"),
            ("q2", "llm-only"),
            ("q2", "vanilla-rag")
        ]
    );
    let corpus_dir = std::fs::canonicalize(inputs.out.join("corpus")).unwrap();
    for row in &first {
        for field in ROW_FIELDS {
            assert!(row.get(field).is_some(), "no `{field}` in {row}");
        }
        assert!(
            ["done", "failed"].contains(&row["status"].as_str().unwrap()),
            "{row}"
        );
        assert!(row["run_id"].is_i64(), "{row}");
        assert!(row["llm_calls"].as_i64().unwrap() >= 1, "{row}");
        assert!(row["f1"].is_number(), "{row}");
        let sources = row["sources"].as_array().unwrap();
        if row["spec"] == "llm-only" {
            assert!(sources.is_empty(), "{row}");
        } else {
            assert!(!sources.is_empty(), "{row}");
            for s in sources {
                assert!(
                    Path::new(s.as_str().unwrap()).starts_with(&corpus_dir),
                    "{s}"
                );
            }
        }
    }
    assert_eq!(mtimes(&corpus_dir).len(), PASSAGES.len());

    let table = std::fs::read_to_string(inputs.out.join("summary.md")).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    assert!(lines[0].starts_with("| method | n | Cover-EM | EM | F1 |"));
    assert!(lines[2].starts_with("| llm-only | 2 | "), "{table}");
    assert!(lines[3].starts_with("| vanilla-rag | 2 | "), "{table}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), table);
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(inputs.out.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["ingest"]["indexed"], PASSAGES.len() as u64);

    // A second run over the same folder reuses the index: no passage file is
    // rewritten and nothing is indexed or embedded again.
    let before = mtimes(&corpus_dir);
    let again = eval(&inputs, "llm-only,vanilla-rag", true);
    let stderr = succeeded(&again);
    assert!(stderr.contains("the index is up to date"), "{stderr}");
    let summary: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(summary["corpus_files"]["written"], 0);
    assert_eq!(summary["corpus_files"]["unchanged"], PASSAGES.len() as u64);
    assert_eq!(summary["ingest"]["indexed"], 0);
    assert_eq!(summary["ingest"]["chunks_embedded"], 0);
    assert_eq!(summary["methods"].as_array().unwrap().len(), 2);
    assert_eq!(mtimes(&corpus_dir), before);
    assert_eq!(rows(&inputs.out).len(), 4, "the results are this run's");
}

#[test]
fn bad_specs_and_lines_fail_before_any_question() {
    let inputs = inputs();
    let out = eval(&inputs, "llm-only,vanilla-rag:mood=x", false);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("method spec `vanilla-rag:mood=x`") && stderr.contains("mood"),
        "{stderr}"
    );
    let out = eval(&inputs, "pager:variant", false);
    assert!(String::from_utf8_lossy(&out.stderr).contains("`variant` is not name=value"));

    std::fs::write(
        &inputs.dataset,
        format!("{QUESTIONS}{{\"id\": \"q3\", \"question\": \"Why?\"}}\n"),
    )
    .unwrap();
    let out = eval(&inputs, "llm-only", false);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let at = format!("{}:3: ", inputs.dataset.display());
    assert!(
        stderr.contains(&at) && stderr.contains("answers"),
        "{stderr}"
    );
    assert!(!inputs.out.exists(), "nothing was written or indexed");
}
