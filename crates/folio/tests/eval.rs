//! `folio eval` end to end: the real CLI over a tiny JSONL corpus with the
//! kit's real embedding model and SmolLM2. Assertions are on structure
//! (rows, fields, the summary table, the index being reused), never on the
//! tiny model's answers.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

mod common;

use common::llm_server::{shared_server, ALIAS};
use common::wait::Background;
use folio_engine::store::JobState;

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
    /// The user's library, which holds the evaluation's job.
    data: PathBuf,
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
        data: root.path().join("data"),
        _root: root,
    }
}

const MAX_TOKENS: &str = "24";

/// `folio eval` over `inputs` with an empty configuration (a developer's
/// folio.toml never changes what is tested) and one model thread, as in
/// crates/folio/tests/ask.rs; `extra` flags go last.
fn eval_command(inputs: &Inputs, methods: &str, max_tokens: &str, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_folio"));
    command
        .arg("--data-dir")
        .arg(&inputs.data)
        .arg("eval")
        .arg("--dataset")
        .arg(&inputs.dataset)
        .arg("--corpus")
        .arg(&inputs.corpus)
        .args(["--methods", methods, "--max-tokens", max_tokens])
        .args(["--temperature", "0", "--out"])
        .arg(&inputs.out)
        .args(extra)
        .env("FOLIO_CONFIG", "/dev/null")
        .env("FOLIO_LLM_MODEL", common::engine::tiny_model())
        .env("FOLIO_LLM_THREADS", "1")
        .stdin(Stdio::null());
    command
}

fn eval(inputs: &Inputs, methods: &str, extra: &[&str]) -> Output {
    eval_command(inputs, methods, MAX_TOKENS, extra)
        .output()
        .expect("run folio")
}

fn succeeded(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "folio eval failed: {stderr}");
    stderr
}

fn results(out: &Path) -> String {
    std::fs::read_to_string(out.join("results.jsonl")).unwrap()
}

fn rows(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn pairs(rows: &[Value]) -> Vec<(&str, &str)> {
    rows.iter()
        .map(|r| {
            (
                r["question_id"].as_str().unwrap(),
                r["spec"].as_str().unwrap(),
            )
        })
        .collect()
}

fn run_ids(rows: &[Value]) -> HashSet<i64> {
    rows.iter().map(|r| r["run_id"].as_i64().unwrap()).collect()
}

const EVERY_PAIR: [(&str, &str); 4] = [
    ("q1", "llm-only"),
    ("q1", "vanilla-rag"),
    ("q2", "llm-only"),
    ("q2", "vanilla-rag"),
];

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
    let out = eval(&inputs, "llm-only,vanilla-rag", &[]);
    let stderr = succeeded(&out);
    assert!(stderr.contains("[4/4] vanilla-rag q2"), "{stderr}");

    let first = rows(&inputs.out);
    assert_eq!(pairs(&first), EVERY_PAIR);
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

    // What the app's Evaluate view reads back: every answer, and the runs
    // behind them from the evaluation's own index, traces and all.
    let report = folio_engine::eval::report::load(&inputs.out).unwrap();
    assert_eq!(report.questions.len(), 2);
    assert_eq!(report.questions[0].rows.len(), 2);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for question in &report.questions {
        let runs = runtime
            .block_on(folio_engine::eval::report::runs(&inputs.out, &question.id))
            .unwrap();
        let read: Vec<_> = runs.iter().map(|r| (&r.spec, Some(r.run.id))).collect();
        let rows: Vec<_> = question.rows.iter().map(|r| (&r.spec, r.run_id)).collect();
        assert_eq!(read, rows);
        assert!(runs.iter().all(|r| r.run.trace.is_some()), "{runs:?}");
    }

    // A second run over the same folder reuses the index: no passage file is
    // rewritten and nothing is indexed or embedded again; every answer is
    // already given.
    let before = mtimes(&corpus_dir);
    let answers = results(&inputs.out);
    let again = eval(&inputs, "llm-only,vanilla-rag", &["--json"]);
    let stderr = succeeded(&again);
    assert!(stderr.contains("the index is up to date"), "{stderr}");
    assert!(stderr.contains("resuming: 4 of 4 answers"), "{stderr}");
    let summary: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(summary["corpus_files"]["written"], 0);
    assert_eq!(summary["corpus_files"]["unchanged"], PASSAGES.len() as u64);
    assert_eq!(summary["ingest"]["indexed"], 0);
    assert_eq!(summary["ingest"]["chunks_embedded"], 0);
    assert_eq!(summary["methods"].as_array().unwrap().len(), 2);
    assert_eq!(mtimes(&corpus_dir), before);
    assert_eq!(results(&inputs.out), answers, "nothing is answered twice");
}

#[test]
fn a_larger_limit_goes_on_from_the_answers_already_given() {
    let inputs = inputs();
    let methods = "llm-only,vanilla-rag";
    succeeded(&eval(&inputs, methods, &["--limit", "1"]));
    let first = results(&inputs.out);
    let first_ids = run_ids(&rows(&inputs.out));
    assert_eq!(first_ids.len(), 2);

    let stderr = succeeded(&eval(&inputs, methods, &["--limit", "2"]));
    assert!(
        stderr.contains("resuming: 2 of 4 answers already in results.jsonl"),
        "{stderr}"
    );
    assert!(stderr.contains("[3/4] llm-only q2"), "{stderr}");
    assert!(!stderr.contains(" q1 …"), "q1 is not asked again: {stderr}");
    let second = results(&inputs.out);
    assert!(
        second.starts_with(&first),
        "q1's rows are kept as they were"
    );
    let all = rows(&inputs.out);
    assert_eq!(pairs(&all), EVERY_PAIR);
    let all_ids = run_ids(&all);
    assert!(all_ids.is_superset(&first_ids) && all_ids.len() == 4);
    let table = std::fs::read_to_string(inputs.out.join("summary.md")).unwrap();
    assert!(
        table.contains("| llm-only | 2 | "),
        "old and new rows: {table}"
    );
    assert!(table.contains("| vanilla-rag | 2 | "), "{table}");

    // Another answer length is another evaluation: refused before anything
    // runs, naming what differs.
    let manifest = std::fs::read_to_string(inputs.out.join("eval.json")).unwrap();
    let refused = eval_command(&inputs, methods, "32", &["--limit", "2"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("max_tokens: 24 before, 32 now") && stderr.contains("--fresh"),
        "{stderr}"
    );
    assert_eq!(results(&inputs.out), second, "results.jsonl is untouched");
    assert_eq!(
        std::fs::read_to_string(inputs.out.join("eval.json")).unwrap(),
        manifest
    );

    // --fresh starts over with it.
    let fresh = eval_command(&inputs, methods, "32", &["--limit", "1", "--fresh"])
        .output()
        .unwrap();
    let stderr = succeeded(&fresh);
    assert!(!stderr.contains("resuming"), "{stderr}");
    let rows = rows(&inputs.out);
    assert_eq!(pairs(&rows), EVERY_PAIR[..2]);
    assert!(run_ids(&rows).is_disjoint(&all_ids), "answered again");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(inputs.out.join("eval.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["settings"]["max_tokens"], 32);
    assert_eq!(manifest["questions"], serde_json::json!(["q1"]));
}

/// The report's promise: the command that evaluated the embedded model
/// evaluates one behind an OpenAI-compatible URL unchanged; only folio.toml
/// differs. The real llama-cpp-python server answers, two requests at a time.
#[test]
fn the_same_command_evaluates_a_model_behind_an_openai_compatible_url() {
    let inputs = inputs();
    let config = inputs.out.with_file_name("folio.toml");
    let base_url = shared_server();
    std::fs::write(
        &config,
        format!(
            "[llm]\nbackend = \"openai\"\nbase_url = \"{base_url}\"\nmodel = \"{ALIAS}\"\n\
             context_size = 2048\n"
        ),
    )
    .unwrap();
    let methods = "llm-only,vanilla-rag";
    let out = eval_command(
        &inputs,
        methods,
        MAX_TOKENS,
        &["--concurrency", "2", "--json"],
    )
    .env("FOLIO_CONFIG", &config)
    .env_remove("FOLIO_LLM_MODEL")
    .output()
    .unwrap();
    succeeded(&out);

    let all = rows(&inputs.out);
    let mut answered = pairs(&all);
    answered.sort();
    assert_eq!(answered, EVERY_PAIR);
    for row in &all {
        assert!(
            ["done", "failed"].contains(&row["status"].as_str().unwrap()),
            "{row}"
        );
        assert!(row["run_id"].is_i64(), "{row}");
        assert!(row["llm_calls"].as_i64().unwrap() >= 1, "{row}");
    }
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["model"]["backend"], "openai");
    assert_eq!(summary["model"]["model"], ALIAS);
    // This server reports no token counts while streaming: unknown, not 0.
    for m in summary["methods"].as_array().unwrap() {
        assert!(m["prompt_tokens_mean"].is_null(), "{m}");
        assert!(m["completion_tokens_mean"].is_null(), "{m}");
    }
    let table = std::fs::read_to_string(inputs.out.join("summary.md")).unwrap();
    assert!(table.contains("reported no token counts"), "{table}");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(inputs.out.join("eval.json")).unwrap())
            .unwrap();
    assert_eq!(
        manifest["model"],
        serde_json::json!({ "backend": "openai", "base_url": base_url, "model": ALIAS })
    );

    // The embedded model's answers are another evaluation's.
    let embedded = eval(&inputs, methods, &[]);
    assert!(!embedded.status.success());
    let stderr = String::from_utf8_lossy(&embedded.stderr);
    assert!(
        stderr.contains(&format!("model: openai {ALIAS} at {base_url} before"))
            && stderr.contains("--fresh"),
        "{stderr}"
    );
}

/// Answers outlive their index (it was deleted here; a folder copied to
/// another machine is the same), and the rebuilt index numbers its runs
/// afresh: the app and `eval diff` must not show a new run as an old
/// answer's.
#[test]
fn an_index_rebuilt_under_kept_answers_shows_no_other_run_as_theirs() {
    let inputs = inputs();
    succeeded(&eval(&inputs, "llm-only", &[]));
    std::fs::remove_dir_all(inputs.out.join("index")).unwrap();
    let stderr = succeeded(&eval(&inputs, "llm-only,vanilla-rag", &[]));
    assert!(stderr.contains("resuming: 2 of 4 answers"), "{stderr}");

    let all = rows(&inputs.out);
    let ids = |spec: &str| -> Vec<i64> {
        all.iter()
            .filter(|r| r["spec"] == spec)
            .map(|r| r["run_id"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(ids("llm-only"), ids("vanilla-rag"), "the ids collide");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for (question, id) in ["q1", "q2"].into_iter().zip(ids("vanilla-rag")) {
        let runs = runtime
            .block_on(folio_engine::eval::report::runs(&inputs.out, question))
            .unwrap();
        let read: Vec<_> = runs.iter().map(|r| (r.spec.as_str(), r.run.id)).collect();
        assert_eq!(read, [("vanilla-rag", id)], "{question}");
    }
}

/// A conversation whose second turn names its subject only by a pronoun,
/// and a question asked alone.
const CONVERSATION: &str = r#"{"id": "c", "turns": [{"question": "Who founded Port Arlo?", "answers": ["Mira Tovel"]}, {"question": "Where was she born?", "answers": ["Lisbon"], "supporting_titles": ["Mira Tovel"]}], "supporting_titles": ["Port Arlo"]}
{"id": "q1", "question": "What colour is the zorblat fruit?", "answers": ["purple"], "supporting_titles": ["Zorblat"]}
"#;

#[test]
fn a_conversation_is_asked_turn_by_turn_in_one_thread_with_its_last_turn_apart() {
    let inputs = inputs();
    std::fs::write(&inputs.dataset, CONVERSATION).unwrap();
    let specs = "vanilla-rag,vanilla-rag:rewrite=off";
    // Room for a first answer to finish, so the follow-up has one to follow.
    let out = eval_command(&inputs, specs, "128", &["--concurrency", "2"])
        .output()
        .unwrap();
    succeeded(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Last turn of each conversation"),
        "{stdout}"
    );

    let all = rows(&inputs.out);
    let mut got = pairs(&all);
    got.sort();
    assert_eq!(
        got,
        [
            ("c/1", "vanilla-rag"),
            ("c/1", "vanilla-rag:rewrite=off"),
            ("c/2", "vanilla-rag"),
            ("c/2", "vanilla-rag:rewrite=off"),
            ("q1", "vanilla-rag"),
            ("q1", "vanilla-rag:rewrite=off"),
        ]
    );
    let run_of = |question: &str, spec: &str| {
        all.iter()
            .find(|r| r["question_id"] == question && r["spec"] == spec)
            .and_then(|r| r["run_id"].as_i64())
            .unwrap()
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let index = runtime
        .block_on(folio_engine::Library::open(
            common::engine::plumbing_config(&inputs.out.join("index"), None),
        ))
        .unwrap();
    for spec in specs.split(',') {
        let first = runtime
            .block_on(index.runs().get(run_of("c/1", spec)))
            .unwrap();
        let second = runtime
            .block_on(index.runs().get(run_of("c/2", spec)))
            .unwrap();
        assert_eq!(first.thread_id, second.thread_id, "{spec}");
        assert_eq!(first.turn, None);
        let rewrite = second.turn.expect("a follow-up records its turn").rewrite;
        // Greedy decoding answers turn 1 the same way every run, within 128 tokens.
        assert_eq!(first.status, folio_engine::store::RunStatus::Done, "{spec}");
        assert_eq!(
            rewrite == folio_engine::store::Rewrite::Off,
            spec.ends_with("rewrite=off"),
            "{spec}: {rewrite:?}"
        );
        let alone = runtime
            .block_on(index.runs().get(run_of("q1", spec)))
            .unwrap();
        assert_ne!(alone.thread_id, first.thread_id);
    }

    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(inputs.out.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["questions"], 3);
    let last = summary["last_turns"].as_array().unwrap();
    assert_eq!(last.len(), 2);
    for (s, spec) in last.iter().zip(specs.split(',')) {
        assert_eq!((s["spec"].as_str(), s["n"].as_u64()), (Some(spec), Some(1)));
    }
}

/// Starts `folio eval` and SIGKILLs it once its first answer is written:
/// nothing is cleaned up or flushed, and its job is left running under a
/// dead process.
fn kill_after_first_answer(inputs: &Inputs, methods: &str) {
    let mut child = eval_command(inputs, methods, MAX_TOKENS, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let path = inputs.out.join("results.jsonl");
    let deadline = Instant::now() + Duration::from_secs(600);
    while !std::fs::read_to_string(&path).is_ok_and(|text| text.contains('\n')) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "folio eval ended before its first answer"
        );
        assert!(Instant::now() < deadline, "no answer in 10 minutes");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The evaluation jobs in the user's library, newest first.
fn eval_jobs(inputs: &Inputs) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_folio"))
        .arg("--data-dir")
        .arg(&inputs.data)
        .args(["--json", "status"])
        .env("FOLIO_CONFIG", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    status["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["kind"] == "eval")
        .cloned()
        .collect()
}

/// Every pair answered exactly once, each by a run of its own.
fn assert_every_pair_once(out: &Path) {
    let rows = rows(out);
    let mut answered = pairs(&rows);
    answered.sort();
    assert_eq!(answered, EVERY_PAIR, "every pair exactly once");
    assert_eq!(run_ids(&rows).len(), 4);
}

#[test]
fn a_killed_run_is_resumed_without_answering_anything_twice() {
    let inputs = inputs();
    let methods = "llm-only,vanilla-rag";
    kill_after_first_answer(&inputs, methods);
    let killed = eval_jobs(&inputs);
    assert_eq!(killed.len(), 1);
    assert_eq!(killed[0]["state"], "running");
    assert_eq!(killed[0]["interrupted"], true, "{killed:?}");
    let path = inputs.out.join("results.jsonl");
    let kept = results(&inputs.out);
    let kept = &kept[..=kept.rfind('\n').unwrap()];
    // And as if it had died in the middle of writing a row.
    std::fs::write(&path, format!("{kept}{{\"question_id\": \"q2\", \"spe")).unwrap();

    let stderr = succeeded(&eval(&inputs, methods, &[]));
    assert!(
        stderr.contains("warning: line") && stderr.contains("cut off mid-write"),
        "{stderr}"
    );
    assert!(stderr.contains("resuming: "), "{stderr}");
    assert!(results(&inputs.out).starts_with(kept));
    assert_every_pair_once(&inputs.out);
    // The same command took the killed job over and finished it.
    let jobs = eval_jobs(&inputs);
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(jobs[0]["id"], killed[0]["id"]);
    assert_eq!(jobs[0]["state"], "done");
    assert_eq!(
        (jobs[0]["done"].as_i64(), jobs[0]["total"].as_i64()),
        (Some(4), Some(4))
    );
}

#[test]
fn a_killed_run_is_finished_by_the_background_work_the_app_runs() {
    let inputs = inputs();
    kill_after_first_answer(&inputs, "llm-only,vanilla-rag");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let library = std::sync::Arc::new(common::engine::open(&inputs.data).await);
        let background = Background::start(&library);
        let deadline = Instant::now() + Duration::from_secs(600);
        loop {
            let jobs = library.jobs().list(10).await.unwrap();
            let job = jobs.iter().find(|j| j.kind == "eval").unwrap();
            if job.state == JobState::Done {
                break;
            }
            assert!(
                !matches!(job.state, JobState::Failed | JobState::Cancelled),
                "{job:?}"
            );
            assert!(
                Instant::now() < deadline,
                "not resumed in 10 minutes: {job:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        background.stop().await;
    });
    assert_every_pair_once(&inputs.out);
    assert!(inputs.out.join("summary.json").exists());
}

#[test]
fn bad_specs_and_lines_fail_before_any_question() {
    let inputs = inputs();
    let out = eval(&inputs, "llm-only,vanilla-rag:mood=x", &[]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("method spec `vanilla-rag:mood=x`") && stderr.contains("mood"),
        "{stderr}"
    );
    let out = eval(&inputs, "pager:variant", &[]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("`variant` is not name=value"));
    let out = eval(&inputs, "ig2rag", &["--graph-reach", "0"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("graph reach must be at least 1"));

    std::fs::write(
        &inputs.dataset,
        format!("{QUESTIONS}{{\"id\": \"q3\", \"question\": \"Why?\"}}\n"),
    )
    .unwrap();
    let out = eval(&inputs, "llm-only", &[]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let at = format!("{}:3: ", inputs.dataset.display());
    assert!(
        stderr.contains(&at) && stderr.contains("answers"),
        "{stderr}"
    );
    assert!(!inputs.out.exists(), "nothing was written or indexed");
    let out = eval(&inputs, "llm-only", &["--concurrency", "0"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("concurrency must be at least 1"));
}

const FIVE_QUESTIONS: &str = r#"{"id": "q1", "question": "What colour is the zorblat fruit?", "answers": ["purple"], "supporting_titles": ["Zorblat"]}
{"id": "q2", "question": "Who founded Port Arlo?", "answers": ["Mira Tovel"], "supporting_titles": ["Port Arlo"]}
{"id": "q3", "question": "What is the capital of Quenby?", "answers": ["Port Arlo"], "supporting_titles": ["Quenby"]}
{"id": "q4", "question": "Where was Mira Tovel born?", "answers": ["Lisbon"], "supporting_titles": ["Mira Tovel"]}
{"id": "q5", "question": "What is the Tovel Bridge made of?", "answers": ["grey granite", "granite"], "supporting_titles": ["Tovel Bridge"]}
"#;

/// Five questions, two in flight at once, a seed, and the LLM judge (the
/// answering SmolLM2, as no [judge] model is configured): every answer is
/// given and judged exactly once, and the judge has its own marked column.
#[test]
fn five_questions_answered_concurrently_and_judged() {
    let inputs = inputs();
    std::fs::write(&inputs.dataset, FIVE_QUESTIONS).unwrap();
    let methods = "llm-only,vanilla-rag";
    let flags = ["--concurrency", "2", "--seed", "7", "--judge"];
    let out = eval(&inputs, methods, &flags);
    let stderr = succeeded(&out);
    assert!(stderr.contains("[10/10] "), "{stderr}");
    assert!(stderr.contains("judged 10 of 10"), "{stderr}");

    let rows = rows(&inputs.out);
    let mut answered = pairs(&rows);
    answered.sort();
    let mut every: Vec<(&str, &str)> = ["q1", "q2", "q3", "q4", "q5"]
        .iter()
        .flat_map(|q| [(*q, "llm-only"), (*q, "vanilla-rag")])
        .collect();
    every.sort();
    assert_eq!(answered, every, "every pair exactly once");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(inputs.out.join("eval.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["settings"]["seed"], 7);

    let verdicts: Vec<Value> = std::fs::read_to_string(inputs.out.join("judgements.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(verdicts.len(), 10);
    for v in &verdicts {
        assert!(v["judge"].as_str().unwrap().contains("SmolLM2"), "{v}");
        assert!(v["verdict"].is_boolean() || v["verdict"].is_null(), "{v}");
        assert!(!v["reply"].as_str().unwrap().is_empty(), "{v}");
    }
    let table = std::fs::read_to_string(inputs.out.join("summary.md")).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].ends_with("| LLM judge* |"), "{table}");
    assert!(lines[2].starts_with("| llm-only | 5 | "), "{table}");
    assert!(
        table.contains("* LLM judge: the share of answers that embedded "),
        "{table}"
    );

    // Judged answers are not judged again; without --judge there is no
    // judge column.
    let again = succeeded(&eval(&inputs, methods, &flags));
    assert!(!again.contains("judged "), "{again}");
    let plain = eval(&inputs, methods, &["--seed", "7"]);
    succeeded(&plain);
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("judge"));
}

/// Answers are reused across other --methods and a smaller --limit, and
/// `eval diff` compares two specs of the folder question by question.
#[test]
fn other_methods_reuse_answers_and_diff_compares_two_specs() {
    let inputs = inputs();
    succeeded(&eval(&inputs, "llm-only,vanilla-rag", &[]));
    let answers = results(&inputs.out);

    let one = eval(&inputs, "vanilla-rag", &["--limit", "1", "--json"]);
    let stderr = succeeded(&one);
    assert!(stderr.contains("resuming: 1 of 1 answers"), "{stderr}");
    let summary: Value = serde_json::from_slice(&one.stdout).unwrap();
    let methods = summary["methods"].as_array().unwrap();
    assert_eq!(methods.len(), 1);
    assert_eq!(
        (&methods[0]["spec"], &methods[0]["n"]),
        (&"vanilla-rag".into(), &1.into())
    );
    assert_eq!(results(&inputs.out), answers, "nothing answered again");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(inputs.out.join("eval.json")).unwrap())
            .unwrap();
    assert_eq!(
        manifest["specs"],
        serde_json::json!(["llm-only", "vanilla-rag"])
    );
    assert_eq!(manifest["questions"], serde_json::json!(["q1", "q2"]));

    let folder = inputs.out.display().to_string();
    let diff = |a: &str, b: &str, json: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_folio"));
        if json {
            command.arg("--json");
        }
        command
            .args(["eval", "diff", a, b])
            .env("FOLIO_CONFIG", "/dev/null")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let (a, b) = (
        format!("{folder}#llm-only"),
        format!("{folder}#vanilla-rag"),
    );
    let out = diff(&a, &b, true);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(d["compared"], 2);
    let parted = d["only_a"].as_array().unwrap().len() + d["only_b"].as_array().unwrap().len();
    let agreed = d["both_right"].as_u64().unwrap() + d["both_wrong"].as_u64().unwrap();
    assert_eq!(parted as u64 + agreed, 2);
    for p in d["only_a"]
        .as_array()
        .unwrap()
        .iter()
        .chain(d["only_b"].as_array().unwrap())
    {
        assert!(p["question"].is_string(), "{p}");
        let parts = p["b"]["key_parts"].as_array().unwrap();
        assert!(
            parts
                .iter()
                .any(|k| k.as_str().unwrap().starts_with("passages: ")),
            "{p}"
        );
    }
    let text = diff(&a, &b, false);
    assert!(String::from_utf8_lossy(&text.stdout).starts_with(&format!("# {a} vs {b}")));

    let ambiguous = diff(&folder, &b, false);
    assert!(!ambiguous.status.success());
    let stderr = String::from_utf8_lossy(&ambiguous.stderr);
    assert!(
        stderr.contains("llm-only, vanilla-rag") && stderr.contains("#SPEC"),
        "{stderr}"
    );
}
