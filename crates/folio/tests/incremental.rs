//! Edits, renames and deletes: only changed text is re-embedded, renamed
//! files keep their vectors, deleted files leave nothing behind; both through
//! reconciliation (changes made while Folio was closed) and the live watcher.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::engine::{assert_consistent, ingest, open, scalar};
use common::wait::{eventually, Background};
use folio_engine::retrieve::SearchMode;
use folio_engine::Library;

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

async fn bm25_paths(library: &Library, query: &str) -> Vec<String> {
    library
        .retrieval()
        .search(query, 5, SearchMode::Bm25, None)
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.path)
        .collect()
}

const ALPHA: &str = "# Alpha\n\n## One\n\nFirst paragraph about apples.\n\n## Two\n\nSecond paragraph about bananas.\n";

fn seed(docs: &Path) {
    write(docs, "a.md", ALPHA);
    write(docs, "b.md", "# Beta\n\nSome text about cherries.\n");
    write(
        docs,
        "c.txt",
        "Gamma text about dates.\n\nAnother paragraph about elderberries.\n",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn reconciling_after_edit_rename_and_delete_touches_only_what_changed() {
    let (data, docs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let docs_path = std::fs::canonicalize(docs.path()).unwrap();
    seed(&docs_path);
    let library = open(data.path()).await;
    let first = ingest(&library, &docs_path).await;
    assert_eq!(first.indexed, 3);
    assert_eq!(scalar(&library, "SELECT COUNT(*) FROM chunks").await, 4);

    // Edit one section: one new chunk is embedded, the other is reused.
    write(&docs_path, "a.md", &ALPHA.replace("bananas", "figs"));
    let edit = library.jobs().reconcile_all().await.unwrap();
    assert_eq!(
        (edit.indexed, edit.chunks_embedded, edit.chunks_reused),
        (1, 1, 1),
        "{edit:?}"
    );
    assert!(bm25_paths(&library, "figs").await[0].ends_with("a.md"));
    assert!(bm25_paths(&library, "bananas").await.is_empty());

    // Unchanged content under a new timestamp is not re-read into the index.
    let a = docs_path.join("a.md");
    let content = std::fs::read(&a).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&a, content).unwrap();
    let touch = library.jobs().reconcile_all().await.unwrap();
    assert_eq!(
        (touch.indexed, touch.unchanged, touch.chunks_embedded),
        (0, 1, 0),
        "{touch:?}"
    );

    // Rename: the new path is indexed with the old vectors, the old path is gone.
    std::fs::create_dir(docs_path.join("sub")).unwrap();
    std::fs::rename(docs_path.join("b.md"), docs_path.join("sub/beta.md")).unwrap();
    let rename = library.jobs().reconcile_all().await.unwrap();
    assert_eq!(rename.chunks_embedded, 0, "{rename:?}");
    assert_eq!(rename.removed, 1);
    assert!(bm25_paths(&library, "cherries").await[0].ends_with("sub/beta.md"));
    assert!(library
        .store()
        .document(&docs_path.join("b.md").to_string_lossy())
        .await
        .unwrap()
        .is_none());

    // Delete: no chunk, vector or FTS row survives.
    std::fs::remove_file(docs_path.join("c.txt")).unwrap();
    let delete = library.jobs().reconcile_all().await.unwrap();
    assert_eq!(delete.removed, 1);
    assert!(bm25_paths(&library, "elderberries").await.is_empty());
    assert_eq!(
        scalar(
            &library,
            "SELECT COUNT(*) FROM chunks_fts WHERE chunks_fts MATCH 'elderberries'"
        )
        .await,
        0
    );
    assert_eq!(scalar(&library, "SELECT COUNT(*) FROM documents").await, 2);
    assert_consistent(&library).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_watcher_follows_creates_edits_renames_and_deletes() {
    let (data, docs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let docs_path = std::fs::canonicalize(docs.path()).unwrap();
    seed(&docs_path);
    let library = Arc::new(open(data.path()).await);
    ingest(&library, &docs_path).await;

    // Changed while "closed": the watcher's first reconcile picks it up.
    write(
        &docs_path,
        "offline.md",
        "# Offline\n\nWritten while nobody watched: quinces.\n",
    );
    let background = Background::start(&library);
    eventually("offline edit indexed", || async {
        !bm25_paths(&library, "quinces").await.is_empty()
    })
    .await;
    assert!(library.overview().await.unwrap().watching);

    write(
        &docs_path,
        "new.md",
        "# New\n\nA fresh note about kumquats.\n",
    );
    eventually("created file searchable", || async {
        !bm25_paths(&library, "kumquats").await.is_empty()
    })
    .await;

    write(&docs_path, "a.md", &ALPHA.replace("apples", "mangosteens"));
    eventually("edit searchable", || async {
        !bm25_paths(&library, "mangosteens").await.is_empty()
    })
    .await;
    assert!(bm25_paths(&library, "apples").await.is_empty());

    std::fs::rename(docs_path.join("new.md"), docs_path.join("renamed.md")).unwrap();
    eventually("rename followed", || async {
        bm25_paths(&library, "kumquats")
            .await
            .iter()
            .any(|p| p.ends_with("renamed.md"))
    })
    .await;
    assert_eq!(
        bm25_paths(&library, "kumquats").await.len(),
        1,
        "old path left behind"
    );

    std::fs::remove_file(docs_path.join("c.txt")).unwrap();
    eventually("delete followed", || async {
        bm25_paths(&library, "elderberries").await.is_empty()
    })
    .await;

    background.stop().await;
    assert!(!library.overview().await.unwrap().watching);
    assert_consistent(&library).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_different_embedding_model_rebuilds_the_vectors() {
    let (data, docs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    seed(docs.path());
    {
        let library = open(data.path()).await;
        ingest(&library, docs.path()).await;
        // Pretend the index was built by another model.
        library
            .store()
            .set_setting("vector_model", "some-other-model@0000")
            .await
            .unwrap();
    }
    let library = open(data.path()).await;
    library.retrieval().model().await.unwrap();
    assert_eq!(
        scalar(
            &library,
            "SELECT COUNT(*) FROM chunks WHERE embed_model_id IS NULL"
        )
        .await,
        4
    );
    assert_eq!(
        scalar(&library, "SELECT COUNT(*) FROM chunk_vectors_int8").await,
        0
    );
    let pass = library.jobs().reconcile_all().await.unwrap();
    assert_eq!((pass.indexed, pass.chunks_embedded), (0, 4), "{pass:?}");
    assert_consistent(&library).await;
    let hits = library
        .retrieval()
        .search("cherries", 1, SearchMode::Dense, None)
        .await
        .unwrap();
    assert!(hits[0].path.ends_with("b.md"));
}

#[tokio::test(flavor = "multi_thread")]
async fn in_memory_vectors_answer_like_sqlite_vec_and_are_never_stale() {
    let (data, docs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    seed(docs.path());
    let library = open(data.path()).await;
    ingest(&library, docs.path()).await;
    let cold = library
        .retrieval()
        .search("fruit cherries", 4, SearchMode::Dense, None)
        .await
        .unwrap();
    library.retrieval().warm_vectors().await.unwrap();
    let warm = library
        .retrieval()
        .search("fruit cherries", 4, SearchMode::Dense, None)
        .await
        .unwrap();
    assert_eq!(cold.len(), warm.len());
    // sqlite-vec compares an int8 query with the int8 rows, the in-memory
    // scan a nearly exact one, so the query's rounding (about 1e-3 of
    // cosine here) is the difference; the ranking is the same.
    for (c, w) in cold.iter().zip(&warm) {
        assert_eq!(c.chunk_id, w.chunk_id);
        assert!(
            (c.score - w.score).abs() < 5e-3,
            "{} vs {}",
            c.score,
            w.score
        );
    }

    // A write makes the copy stale; answers must include the new text at once.
    write(
        docs.path(),
        "g.md",
        "# Green\n\nA note about kiwis and their fuzzy skin.\n",
    );
    library.jobs().reconcile_all().await.unwrap();
    for _ in 0..20 {
        let hits = library
            .retrieval()
            .search("kiwis fuzzy skin", 1, SearchMode::Dense, None)
            .await
            .unwrap();
        assert!(hits[0].path.ends_with("g.md"), "{hits:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
