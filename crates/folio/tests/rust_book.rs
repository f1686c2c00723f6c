//! The rust-book fixture (samples/rust-book/docs: 112 real markdown
//! chapters) through the real CLI:
//! trees, chunk coverage, and search quality on a known query.

mod common;

use std::collections::BTreeSet;

use common::engine::{assert_consistent, folio_json, open, rust_book};
use folio_engine::retrieve::{common_threshold, fts_query, SearchMode};

#[tokio::test(flavor = "multi_thread")]
async fn rust_book_ingests_into_trees_chunks_and_searchable_vectors() {
    let data = tempfile::tempdir().unwrap();
    let docs = rust_book();
    let added = folio_json(data.path(), &["add", docs.to_str().unwrap()]);
    assert_eq!(added["summary"]["indexed"], 112, "{added}");
    assert_eq!(added["summary"]["failed"], 0);

    let status = folio_json(data.path(), &["status"]);
    assert_eq!(status["counts"]["documents"], 112);
    assert_eq!(status["counts"]["errors"], 0);
    assert_eq!(status["counts"]["chunks"], status["counts"]["embedded"]);
    assert_eq!(status["jobs"][0]["state"], "done");
    assert_eq!(status["jobs"][0]["done"], 112);

    // Tree shape: chapters open with `##`, so the file stem is the root and the
    // headings nest by level below it.
    let rc = docs.join("ch15-04-rc.md");
    let tree = folio_json(data.path(), &["tree", rc.to_str().unwrap()]);
    let nodes = tree["tree"]["nodes"].as_array().unwrap();
    let headings: Vec<(u64, &str)> = nodes
        .iter()
        .filter(|n| n["kind"] == "structure")
        .map(|n| (n["depth"].as_u64().unwrap(), n["text"].as_str().unwrap()))
        .collect();
    assert_eq!(
        headings,
        vec![
            (0, "ch15-04-rc"),
            (1, "Rc<T>, the Reference-Counted Smart Pointer"),
            (2, "Sharing Data"),
            (2, "Cloning to Increase the Reference Count"),
        ]
    );
    let source = std::fs::read_to_string(&rc).unwrap();
    for n in nodes.iter().skip(1) {
        let (s, e) = (
            n["span"]["start"].as_u64().unwrap() as usize,
            n["span"]["end"].as_u64().unwrap() as usize,
        );
        let first_word = n["text"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap_or("");
        let first_word = first_word.trim_matches(|c: char| !c.is_alphanumeric());
        assert!(
            source[s..e].contains(first_word),
            "span {s}..{e} does not hold {first_word:?}"
        );
    }

    // Every non-empty content node of every document is covered by a chunk,
    // and chunks carry their document's heading path.
    let library = open(data.path()).await;
    for doc in library.store().all_documents().await.unwrap() {
        let tree = library.store().structure_tree(doc.id).await.unwrap();
        let content: BTreeSet<usize> = tree
            .nodes()
            .iter()
            .enumerate()
            .filter(|(_, n)| {
                n.kind == folio_engine::documents::structure_tree::NodeKind::Content
                    && !n.text.trim().is_empty()
            })
            .map(|(i, _)| i)
            .collect();
        let mut covered = BTreeSet::new();
        for c in library.store().chunks_of(doc.id).await.unwrap() {
            let ordinals: Vec<usize> = serde_json::from_str(&c.node_ordinals).unwrap();
            covered.extend(ordinals);
            assert!(
                c.heading_path.starts_with(tree.title()),
                "{}: {}",
                doc.path,
                c.heading_path
            );
        }
        assert_eq!(covered, content, "chunk coverage of {}", doc.path);
    }
    assert_consistent(&library).await;

    for mode in ["hybrid", "dense", "bm25"] {
        let hits = folio_json(
            data.path(),
            &["search", "reference counting", "-k", "3", "--mode", mode],
        );
        let top: Vec<&str> = hits
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["path"].as_str().unwrap())
            .collect();
        assert!(
            top.iter().any(|p| p.ends_with("ch15-04-rc.md")),
            "{mode}: {top:?}"
        );
    }
    let hit = &folio_json(data.path(), &["search", "reference counting", "-k", "1"])[0];
    assert!(hit["heading_path"].as_str().unwrap().contains("Rc<T>"));
    assert!(!hit["snippet"].as_str().unwrap().is_empty());

    // BM25 leaves a question's common words out: in this real index "is"
    // and "the" match more chunks than a term may and stay distinctive, and
    // "rc" does not, so "is the Rc" ranks as "rc" alone does.
    let store = library.store();
    let chunks = store.chunk_count().await.unwrap();
    let common = common_threshold(chunks);
    let terms = ["\"is\"", "\"the\"", "\"rc\""].map(String::from);
    let matches = store.term_matches(&terms, chunks).await.unwrap();
    assert!(
        matches[0] > common && matches[1] > common && (1..=common).contains(&matches[2]),
        "{matches:?} of {chunks} chunks"
    );
    let ids = |hits: Vec<(i64, f64)>| hits.into_iter().map(|(id, _)| id).collect::<Vec<_>>();
    let question = SearchMode::Bm25
        .rank(store, None, "is the Rc", &[], 5, None)
        .await
        .unwrap();
    assert_eq!(
        ids(question),
        ids(store.bm25("\"rc\"", 5, None).await.unwrap())
    );
    let every_word = store
        .bm25(&fts_query("is the Rc").unwrap(), chunks as usize, None)
        .await
        .unwrap();
    assert!(
        every_word.len() as u64 > common,
        "the unpruned query scores {} chunks",
        every_word.len()
    );

    // Adding again finds nothing to do.
    let again = folio_json(data.path(), &["add", docs.to_str().unwrap()]);
    assert_eq!(again["summary"]["indexed"], 0);
    assert_eq!(again["summary"]["chunks_embedded"], 0);
}
