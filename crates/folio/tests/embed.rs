//! The kit's embedding model shared by indexing and queries, as in the app:
//! bulk embedding gives the same vectors as embedding for someone waiting,
//! and a query asked in the middle of a long bulk pass is answered without
//! waiting for the pass to end.

use std::sync::Arc;
use std::time::{Duration, Instant};

use folio_engine::config::Config;
use folio_engine::embed::{Embedder, EmbeddingSource};

fn kit_embedder() -> Arc<Embedder> {
    let source = EmbeddingSource::Embedded(Config::new(None, None).embedding_files());
    Arc::new(Embedder::load(&source).expect("the kit's embedding model loads"))
}

fn passages(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            format!(
                "Passage {i}: the harbour master logs ship number {} entering the bay{}.",
                i * 7,
                " at night".repeat(i % 5)
            )
        })
        .collect()
}

#[test]
fn bulk_and_waiting_callers_get_the_same_vectors_in_input_order() {
    let embedder = kit_embedder();
    // More texts than one bulk turn, in no particular length order.
    let texts = passages(75);
    let bulk = embedder.embed_bulk(&texts).unwrap();
    let now = embedder.embed(&texts).unwrap();
    assert_eq!(bulk.len(), texts.len());
    for (i, (a, b)) in bulk.iter().zip(&now).enumerate() {
        let distance: f32 = a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum();
        assert!(distance < 1e-3, "text {i}: {distance}");
    }
    let alone = embedder.embed_one(&texts[40]).unwrap();
    let dot: f32 = alone.iter().zip(&bulk[40]).map(|(x, y)| x * y).sum();
    assert!(dot > 0.999, "text 40 alone: dot {dot}");
}

#[test]
fn a_query_is_embedded_between_turns_of_a_bulk_pass() {
    let embedder = kit_embedder();
    let texts = passages(1200);
    let bulk = {
        let embedder = embedder.clone();
        std::thread::spawn(move || {
            let vectors = embedder.embed_bulk(&texts).unwrap();
            (vectors.len(), Instant::now())
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let asked = Instant::now();
    embedder
        .embed_one("Who logs the ships entering the bay?")
        .unwrap();
    let answered = Instant::now();
    let (embedded, bulk_done) = bulk.join().unwrap();
    assert_eq!(embedded, 1200);
    eprintln!(
        "query answered after {:?}; the bulk pass ended {:?} after that",
        answered - asked,
        bulk_done.saturating_duration_since(answered)
    );
    assert!(
        answered < bulk_done,
        "the query waited for the whole bulk pass ({:?})",
        answered - asked
    );
}
