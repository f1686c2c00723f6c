//! An index made before int8 vectors keeps its vectors: on first use they
//! are converted in place, batch by batch with progress on the event bus,
//! without re-embedding, and an interrupted conversion goes on where it
//! stopped. (kill_loop.rs kills the real binary during one.)

mod common;

use common::engine::{
    assert_consistent, downgrade_to_f32_vectors, ingest, int8_vectors, open, scalar,
    write_hotpotqa_passages,
};
use folio_engine::events::EngineEvent;
use folio_engine::retrieve::SearchMode;
use folio_engine::store::{Scope, Store};

/// Copies of every chunk: enough vectors for several upgrade batches.
const COPIES: usize = 150;

#[tokio::test(flavor = "multi_thread")]
async fn an_f32_index_is_converted_in_place_resumably_without_re_embedding() {
    let data = tempfile::tempdir().unwrap();
    let corpus = tempfile::tempdir().unwrap();
    write_hotpotqa_passages(corpus.path(), 30);
    let library = open(data.path()).await;
    ingest(&library, corpus.path()).await;
    let query = "Which country is the band from?";
    let before = library
        .search(query, 5, SearchMode::Dense, &Scope::default())
        .await
        .unwrap();
    let space = library.retrieval().model().await.unwrap().1.clone();
    let mut expected = downgrade_to_f32_vectors(&library, COPIES).await;
    assert!(expected.len() > 4_000, "{} vectors", expected.len());
    library.close().await;
    drop(library);

    // The same model over an f32 index: the int8 table is made empty and
    // nothing is marked for re-embedding.
    let store = Store::open(&data.path().join("folio.sqlite"))
        .await
        .unwrap();
    let (_, rebuilt) = store
        .ensure_vector_space(&space.name, space.dim)
        .await
        .unwrap();
    assert!(!rebuilt);
    assert!(store.vectors_need_upgrade().await.unwrap());
    // A vector written before the upgrade reaches its chunk is kept.
    let (&late, _) = expected.iter().next_back().unwrap();
    let replaced = vec![0.05f32; space.dim];
    store
        .store_vectors(&space, &[(late, replaced.clone())])
        .await
        .unwrap();
    expected.insert(late, folio_engine::store::vector_blob(&replaced));

    // Interrupted after its first batch.
    let (sender, mut reports) = tokio::sync::mpsc::unbounded_channel();
    let upgrading = {
        let store = store.clone();
        tokio::spawn(async move {
            store
                .upgrade_vectors(move |p| {
                    let _ = sender.send(p);
                })
                .await
        })
    };
    let first = reports.recv().await.expect("a first batch");
    upgrading.abort();
    let _ = upgrading.await;
    assert!(0 < first.done && first.done < first.total, "{first:?}");
    store.close().await;

    // The next open goes on from there, on first use, reporting as it goes.
    let library = open(data.path()).await;
    assert_consistent(&library).await;
    let mut events = library.subscribe();
    let after = library
        .search(query, 5, SearchMode::Dense, &Scope::default())
        .await
        .unwrap();
    let mut progress = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let EngineEvent::VectorsUpgrading { progress: p } = event {
            progress.push(p);
        }
    }
    let last = progress.last().expect("upgrade progress on the bus");
    assert_eq!(last.done, last.total);
    assert!(progress.windows(2).all(|w| w[0].done <= w[1].done));
    assert!(progress[0].done > first.done, "resumed, not restarted");

    assert_eq!(int8_vectors(&library).await, expected);
    assert!(!library.store().vectors_need_upgrade().await.unwrap());
    assert_eq!(
        scalar(
            &library,
            "SELECT COUNT(*) FROM sqlite_master WHERE name = 'chunk_vectors'"
        )
        .await,
        0
    );
    assert_consistent(&library).await;
    // The copies tie with their originals: the best passage is the same text.
    assert_eq!(before[0].snippet, after[0].snippet);
    assert_eq!(before.len(), after.len());
}
