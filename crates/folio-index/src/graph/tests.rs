//! The graph job over a real library (real embeddings, store and prompts)
//! with a scripted scorer: what it asks, what it stores, how it treats bad
//! replies, and that later passes only score what is new.

use std::collections::HashSet;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::*;
use crate::testing::{Indexed, ADA_NOTES};
use folio_llm::prompts::Prompts;
use folio_llm::testing::{says, ScriptedLlm};
use folio_retrieve::ExactVectors;
use folio_store::JobState;

fn prompts() -> Prompts {
    Prompts::load(None, folio_llm::rubric::PROMPTS).unwrap()
}

async fn build(library: &Indexed, llm: &ScriptedLlm, rubric: Rubric) -> BuildProgress {
    build_within(library, llm, rubric, None).await
}

async fn build_within(
    library: &Indexed,
    llm: &ScriptedLlm,
    rubric: Rubric,
    scope: Option<&HashSet<i64>>,
) -> BuildProgress {
    let dim = library.retrieval().model().await.unwrap().1.dim;
    let vectors = ExactVectors::load(library.store(), dim).await.unwrap();
    let prompts = prompts();
    let cancel = CancellationToken::new();
    GraphBuild {
        store: library.store(),
        llm,
        prompts: &prompts,
        vectors: &vectors,
        options: GraphBuildOptions { rubric, n: 5 },
        job: None,
        scope,
        timeout: Duration::from_secs(10),
        cancel: &cancel,
        reuse_prefix: true,
    }
    .run(&|_| {})
    .await
    .unwrap()
}

async fn status(library: &Indexed, rubric: Rubric) -> RubricStatus {
    let store = library.store();
    store
        .rubric_status(rubric, store.embedded_chunks().await.unwrap())
        .await
        .unwrap()
}

const BOTH_NOVEL: &str = r#"{"P1": "novel", "P2": "minor"}"#;

#[tokio::test]
async fn every_chunk_gets_one_batched_call_and_its_edges() {
    let dir = tempfile::tempdir().unwrap();
    let library = Indexed::with(dir.path(), ADA_NOTES).await;
    let llm = ScriptedLlm::new((0..3).map(|_| says(BOTH_NOVEL)).collect());
    let p = build(&library, &llm, Rubric::Coarse).await;
    assert_eq!(
        (
            p.progress.done,
            p.progress.total,
            p.progress.failed,
            p.edges,
            p.calls
        ),
        (3, 3, 0, 6, 3)
    );
    let prompt = &llm.prompts()[0];
    assert!(prompt.contains("<baseline>") && prompt.contains("<passage id=\"P2\">"));
    assert!(
        !prompt.contains("P3\">"),
        "three chunks give two neighbours each"
    );
    let s = status(&library, Rubric::Coarse).await;
    assert_eq!((s.scored, s.pending, s.edges), (3, 0, 6));
    assert_eq!(s.edges_by_class, [0, 3, 0, 3]);
    assert_eq!(s.models, ["scripted"]);
    assert_eq!(s.cost.calls, 3);

    let again = ScriptedLlm::new(vec![]);
    assert_eq!(
        build(&library, &again, Rubric::Coarse).await.progress.total,
        0
    );
    // Another rubric is a graph of its own.
    let binary = ScriptedLlm::new((0..3).map(|_| says(r#"{"P1": 1, "P2": 0}"#)).collect());
    assert_eq!(build(&library, &binary, Rubric::Binary).await.edges, 6);
    assert_eq!(status(&library, Rubric::Coarse).await.edges, 6);
}

#[tokio::test]
async fn a_scoped_pass_scores_only_its_chunks_and_leaves_the_rest_pending() {
    let dir = tempfile::tempdir().unwrap();
    let library = Indexed::with(dir.path(), ADA_NOTES).await;
    let ids = library.store().embedded_chunk_ids().await.unwrap();
    let scope: HashSet<i64> = ids.iter().take(1).copied().collect();
    let llm = ScriptedLlm::new(vec![says(BOTH_NOVEL)]);
    let p = build_within(&library, &llm, Rubric::Coarse, Some(&scope)).await;
    assert_eq!((p.progress.done, p.progress.total, p.edges), (1, 1, 2));
    let edges = library.store().gain_edges(Rubric::Coarse).await.unwrap();
    assert!(edges.iter().all(|e| scope.contains(&e.source)));
    assert_eq!(status(&library, Rubric::Coarse).await.pending, 2);
}

#[tokio::test]
async fn a_bad_reply_is_retried_once_then_the_node_fails_without_edges() {
    let dir = tempfile::tempdir().unwrap();
    let library = Indexed::with(dir.path(), ADA_NOTES).await;
    let llm = ScriptedLlm::new(vec![
        says("P1 is novel"),
        says(BOTH_NOVEL),
        says(r#"{"P1": "novel"}"#),
        says(r#"{"P1": "novel", "P2": "huge"}"#),
        says(BOTH_NOVEL),
    ]);
    let p = build(&library, &llm, Rubric::Coarse).await;
    assert_eq!(
        (p.progress.done, p.progress.failed, p.edges, p.calls),
        (3, 1, 4, 5)
    );
    let prompts = llm.prompts();
    assert!(!prompts[0].contains("could not be used"));
    assert!(prompts[1].contains("could not be used: the reply holds no JSON object"));
    assert!(prompts[3].contains("it gives no grade for P2"));
    let s = status(&library, Rubric::Coarse).await;
    assert_eq!((s.scored, s.failed, s.edges), (2, 1, 4));
    assert!(s.recent_failures[0].1.contains("\"huge\" is not redundant"));
}

#[tokio::test]
async fn new_chunks_are_scored_alone_and_deleted_ones_take_their_edges() {
    let dir = tempfile::tempdir().unwrap();
    let library = Indexed::with(dir.path(), ADA_NOTES).await;
    build(
        &library,
        &ScriptedLlm::new((0..3).map(|_| says(BOTH_NOVEL)).collect()),
        Rubric::Coarse,
    )
    .await;
    let before = library.store().gain_edges(Rubric::Coarse).await.unwrap();

    let notes = dir.path().join("notes");
    std::fs::write(
        notes.join("engine.md"),
        "# The Analytical Engine\n\nThe Analytical Engine was to be programmed with punched cards.\n",
    )
    .unwrap();
    library.reconcile_all().await;
    let llm = ScriptedLlm::new(vec![says(
        r#"{"P1": "significant", "P2": "minor", "P3": "redundant"}"#,
    )]);
    let p = build(&library, &llm, Rubric::Coarse).await;
    assert_eq!((p.progress.total, p.edges), (1, 3));
    let after = library.store().gain_edges(Rubric::Coarse).await.unwrap();
    assert!(
        before.iter().all(|e| after.contains(e)),
        "existing edges stay"
    );

    std::fs::remove_file(notes.join("babbage.md")).unwrap();
    library.reconcile_all().await;
    let ids = library.store().embedded_chunk_ids().await.unwrap();
    let left = library.store().gain_edges(Rubric::Coarse).await.unwrap();
    assert!(left.len() < after.len());
    assert!(left
        .iter()
        .all(|e| ids.contains(&e.source) && ids.contains(&e.target)));
    assert_eq!(status(&library, Rubric::Coarse).await.scored, 3);
}

#[tokio::test]
async fn a_job_resumes_where_a_cancelled_pass_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let library = Indexed::with(dir.path(), ADA_NOTES).await;
    let job = library
        .store()
        .create_job(
            GRAPH_JOB,
            &serde_json::to_value(GraphBuildOptions::default()).unwrap(),
            JobState::Queued,
        )
        .await
        .unwrap();
    let store = library.store();
    let dim = library.retrieval().model().await.unwrap().1.dim;
    let vectors = ExactVectors::load(store, dim).await.unwrap();
    let prompts = prompts();
    let cancel = CancellationToken::new();
    let llm = ScriptedLlm::new(vec![says(BOTH_NOVEL)]);
    // A pause after the first chunk, as the job runtime fires it.
    let stop_after_one = |p: &BuildProgress| {
        if p.progress.done == 1 {
            cancel.cancel();
        }
    };
    let first = GraphBuild {
        store,
        llm: &llm,
        prompts: &prompts,
        vectors: &vectors,
        options: GraphBuildOptions::default(),
        job: Some((job, 0)),
        scope: None,
        timeout: Duration::from_secs(10),
        cancel: &cancel,
        reuse_prefix: true,
    }
    .run(&stop_after_one)
    .await
    .unwrap();
    assert!(first.stopped);
    assert_eq!((first.progress.done, first.progress.total), (1, 3));
    let row = store.job(job).await.unwrap().unwrap();
    assert_eq!((row.done, row.total), (1, 3));

    let rest = ScriptedLlm::new((0..2).map(|_| says(BOTH_NOVEL)).collect());
    assert_eq!(
        build(&library, &rest, Rubric::Coarse).await.progress.total,
        2
    );
}
