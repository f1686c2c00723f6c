//! kill -9 in the middle of ingestion: the store stays consistent, the job is
//! seen as interrupted, and the next `folio add` finishes the work so that the
//! index equals a clean ingest of the same folder.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::engine::{assert_consistent, folio_json, open, snapshot, write_hotpotqa_passages};

#[tokio::test(flavor = "multi_thread")]
async fn kill_9_mid_ingest_then_restart_equals_a_clean_ingest() {
    const FILES: usize = 1200;
    let docs = tempfile::tempdir().unwrap();
    let corpus = std::fs::canonicalize(docs.path()).unwrap();
    write_hotpotqa_passages(&corpus, FILES);

    let crashed = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_folio"))
        .arg("--data-dir")
        .arg(crashed.path())
        // Commits far smaller than a pass, so the kill falls between two.
        .env("FOLIO_COMMIT_CHUNKS", "100")
        .arg("add")
        .arg(&corpus)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    // Wait for some batches to commit, then kill without warning.
    let db = crashed.path().join("folio.sqlite");
    let start = Instant::now();
    let committed = loop {
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "ingestion never committed a batch"
        );
        if let Some(status) = child.try_wait().unwrap() {
            panic!("ingestion finished ({status}) before it could be killed; use a larger corpus");
        }
        if db.exists() {
            let store = folio_engine::store::Store::open(&db).await.unwrap();
            let n = store.counts().await.map(|c| c.documents).unwrap_or(0);
            store.close().await;
            if n >= 100 {
                break n;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert!((committed as usize) < FILES);

    // After the crash: consistent, partially done, and known to be interrupted.
    let status = folio_json(crashed.path(), &["status"]);
    let documents = status["counts"]["documents"].as_i64().unwrap();
    assert!(
        documents >= committed && (documents as usize) < FILES,
        "{documents}"
    );
    assert_eq!(
        status["jobs"][0]["interrupted"], true,
        "{}",
        status["jobs"][0]
    );
    {
        let library = open(crashed.path()).await;
        assert_consistent(&library).await;
    }

    // Restart finishes the interrupted job.
    let resumed = folio_json(crashed.path(), &["add", corpus.to_str().unwrap()]);
    assert_eq!(resumed["counts"]["documents"], FILES as i64, "{resumed}");
    let status = folio_json(crashed.path(), &["status"]);
    assert!(
        status["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|j| j["state"] == "done"),
        "{}",
        status["jobs"]
    );

    let clean = tempfile::tempdir().unwrap();
    folio_json(clean.path(), &["add", corpus.to_str().unwrap()]);

    let (a, b) = (open(crashed.path()).await, open(clean.path()).await);
    assert_consistent(&a).await;
    assert_consistent(&b).await;
    assert_eq!(snapshot(&a).await, snapshot(&b).await);
}
