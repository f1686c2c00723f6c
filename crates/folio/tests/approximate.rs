//! A library past the approximate index's size (lowered here to 100
//! vectors), on the real parts: SQLite with sqlite-vec, the kit's embedding
//! model, usearch's HNSW saved beside the database. Searches go through the
//! saved index with the exact scan's answers, follow every change at once
//! (new files found, removed ones never returned), merge changes into the
//! saved index, stay inside a scope, survive a restart without a rebuild,
//! and rebuild a damaged index with progress while sqlite-vec answers.

mod common;

use std::io::BufRead;
use std::path::Path;
use std::time::{Duration, Instant};

use common::engine::{ingest, scalar, write_hotpotqa_passages};
use folio_engine::events::EngineEvent;
use folio_engine::retrieve::{CopyLimits, CopyStatus, Ranker, SearchMode};
use folio_engine::store::DocumentSet;
use folio_engine::{Config, Library};

const PASSAGES: usize = 800;

async fn open(data: &Path, limits: CopyLimits) -> Library {
    let mut config = Config::new(Some(data.to_path_buf()), None);
    config.vector_copy = limits;
    Library::open(config).await.expect("open library")
}

fn limits() -> CopyLimits {
    CopyLimits {
        approximate_from: 100,
        merge_from: 25,
    }
}

/// Queries: `n` passages of the HotpotQA sample that are not indexed.
fn queries(n: usize) -> Vec<String> {
    let path = common::engine::samples().join("hotpotqa/corpus.jsonl");
    std::io::BufReader::new(std::fs::File::open(path).unwrap())
        .lines()
        .skip(PASSAGES + 200)
        .take(n)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(&l.unwrap()).unwrap();
            v["text"].as_str().unwrap().to_string()
        })
        .collect()
}

async fn dense(library: &Library, query: &str, k: usize, scope: Option<&DocumentSet>) -> Vec<i64> {
    library
        .retrieval()
        .rank(query, k, &Ranker::Search(SearchMode::Dense), scope)
        .await
        .unwrap()
        .ranked
        .iter()
        .map(|(id, _)| *id)
        .collect()
}

/// sqlite-vec's exact answer.
async fn exact(library: &Library, query: &str, k: usize, scope: Option<&DocumentSet>) -> Vec<i64> {
    let vector = library
        .retrieval()
        .embed(&[query.to_string()])
        .await
        .unwrap();
    library
        .store()
        .nearest_chunks(&vector[0], k, scope)
        .await
        .unwrap()
        .iter()
        .map(|(id, _)| *id)
        .collect()
}

/// Waits for the copy to be approximate and to satisfy `done`.
async fn until(
    library: &Library,
    what: &str,
    done: impl Fn(usize, usize) -> bool,
) -> (usize, usize) {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if let CopyStatus::Approximate { indexed, pending } = library.retrieval().vector_copy() {
            if done(indexed, pending) {
                return (indexed, pending);
            }
        }
        assert!(
            Instant::now() < deadline,
            "{what}: {:?}",
            library.retrieval().vector_copy()
        );
        // A query is what brings the copy up to date.
        dense(library, "river", 1, None).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn building(events: &mut tokio::sync::broadcast::Receiver<EngineEvent>) -> Vec<(u64, u64, String)> {
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let EngineEvent::VectorIndexBuilding { progress, reason } = event {
            seen.push((progress.done, progress.total, reason));
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_library_searches_a_saved_approximate_index_that_follows_every_change() {
    let root = tempfile::tempdir().unwrap();
    let (docs, data) = (root.path().join("docs"), root.path().join("data"));
    std::fs::create_dir_all(&docs).unwrap();
    write_hotpotqa_passages(&docs, PASSAGES);
    let library = open(&data, limits()).await;
    ingest(&library, &docs).await;
    let vectors = scalar(&library, "SELECT COUNT(*) FROM chunks").await as usize;
    let questions = queries(25);
    let mut truth = Vec::new();
    for q in &questions {
        truth.push(exact(&library, q, 10, None).await);
    }

    // Warming finds no index, so one is built in the background, with
    // progress, while searches are answered exactly.
    let mut events = library.subscribe();
    library.retrieval().warm_vectors().await.unwrap();
    let (indexed, pending) = until(&library, "the first build", |_, _| true).await;
    assert_eq!((indexed, pending), (vectors, 0));
    let built = building(&mut events);
    let last = built.last().expect("build progress on the bus");
    assert_eq!((last.0, last.1), (vectors as u64, vectors as u64));
    assert!(last.2.contains("none yet"), "{built:?}");
    assert!(data.join("vector-index/manifest.json").exists());
    let mut found = 0;
    for (q, t) in questions.iter().zip(&truth) {
        let got = dense(&library, q, 10, None).await;
        assert_eq!(got.len(), 10);
        found += got.iter().filter(|id| t.contains(id)).count();
    }
    let recall = found as f64 / (10 * questions.len()) as f64;
    assert!(
        recall >= 0.95,
        "recall@10 against sqlite-vec's exact answer: {recall}"
    );

    // A new file is found at once, from the log, without a rebuild.
    std::fs::write(
        docs.join("quokka.txt"),
        "Quokka census\n\nThe quokka census on Rottnest Island counted twelve thousand quokkas.\n",
    )
    .unwrap();
    ingest(&library, &docs).await;
    let question = "How many quokkas live on Rottnest Island?";
    let new_chunk = scalar(&library, "SELECT MAX(id) FROM chunks").await;
    assert_eq!(dense(&library, question, 3, None).await[0], new_chunk);
    assert_eq!(
        library.retrieval().vector_copy(),
        CopyStatus::Approximate {
            indexed: vectors,
            pending: 1
        }
    );

    // A removed file's chunks are never returned, though the saved index
    // still holds them.
    let first_text = std::fs::read_to_string(docs.join("passage-00000.txt")).unwrap();
    let removed: Vec<i64> = sqlx::query_scalar(
        "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.path LIKE '%passage-00000.txt'",
    )
    .fetch_all(library.store().pool())
    .await
    .unwrap();
    assert!(!removed.is_empty());
    assert!(dense(&library, &first_text, 10, None)
        .await
        .contains(&removed[0]));
    std::fs::remove_file(docs.join("passage-00000.txt")).unwrap();
    ingest(&library, &docs).await;
    let after = dense(&library, &first_text, 10, None).await;
    assert_eq!(after.len(), 10);
    assert!(
        after.iter().all(|id| !removed.contains(id)),
        "{after:?} holds {removed:?}"
    );

    // A scope: only its chunks, the same as sqlite-vec's scoped answer (as
    // a set: sqlite-vec rounds the query to int8 too, so near-ties may
    // swap places).
    let documents: Vec<i64> = sqlx::query_scalar("SELECT id FROM documents ORDER BY id LIMIT 40")
        .fetch_all(library.store().pool())
        .await
        .unwrap();
    let chunks: Vec<i64> = sqlx::query_scalar(
        "SELECT id FROM chunks WHERE document_id IN (SELECT id FROM documents ORDER BY id LIMIT 40)",
    )
    .fetch_all(library.store().pool())
    .await
    .unwrap();
    let scope = DocumentSet::new(documents, chunks.clone());
    for q in &questions[..5] {
        let got = dense(&library, q, 10, Some(&scope)).await;
        let mut sorted = got.clone();
        sorted.sort();
        let mut expected = exact(&library, q, 10, Some(&scope)).await;
        expected.sort();
        assert_eq!(sorted, expected, "{q}");
        assert!(got.iter().all(|id| chunks.contains(id)));
    }

    // Enough changes are merged into the saved index in the background.
    for i in 0..30 {
        std::fs::write(
            docs.join(format!("lighthouse-{i}.txt")),
            format!("Lighthouse {i}\n\nKeeper number {i} of the lighthouse logged {i} storms in the ledger.\n"),
        )
        .unwrap();
    }
    ingest(&library, &docs).await;
    let now = scalar(&library, "SELECT COUNT(*) FROM chunks").await as usize;
    let (indexed, _) = until(&library, "the merge", |_, pending| pending == 0).await;
    assert_eq!(indexed, now);
    assert_eq!(
        scalar(&library, "SELECT COUNT(*) FROM vector_log").await,
        0,
        "merged entries are pruned"
    );
    let index_files = std::fs::read_dir(data.join("vector-index"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".usearch")
        })
        .count();
    assert_eq!(index_files, 1);
    drop(library);

    // A restart opens the saved index: no build.
    let library = open(&data, limits()).await;
    let mut events = library.subscribe();
    library.retrieval().warm_vectors().await.unwrap();
    assert_eq!(
        library.retrieval().vector_copy(),
        CopyStatus::Approximate {
            indexed: now,
            pending: 0
        }
    );
    assert_eq!(dense(&library, question, 3, None).await[0], new_chunk);
    assert!(building(&mut events).is_empty());
    drop(library);

    // A damaged index is refused and built again, with the reason, while
    // sqlite-vec answers.
    let file = std::fs::read_dir(data.join("vector-index"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "usearch"))
        .unwrap();
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 3]).unwrap();
    let library = open(&data, limits()).await;
    let mut events = library.subscribe();
    library.retrieval().warm_vectors().await.unwrap();
    assert_eq!(dense(&library, question, 3, None).await[0], new_chunk);
    until(&library, "the rebuild", |indexed, _| indexed == now).await;
    let rebuilt = building(&mut events);
    assert!(
        rebuilt.iter().any(|(_, _, why)| why.contains("not usable")),
        "{rebuilt:?}"
    );
    drop(library);

    // Below the size, the library is searched exactly and keeps no index.
    let library = open(
        &data,
        CopyLimits {
            approximate_from: 1_000_000,
            ..limits()
        },
    )
    .await;
    library.retrieval().warm_vectors().await.unwrap();
    assert_eq!(
        library.retrieval().vector_copy(),
        CopyStatus::Exact { vectors: now }
    );
    assert!(!data.join("vector-index/manifest.json").exists());
    assert_eq!(library.store().vector_log_position().await.unwrap(), None);
}
