//! iG²RAG's control flow over a real library and a real (scripted-scorer)
//! graph: seeds, the walk and its ablations, the trace's subgraph, and the
//! single answer call.

use super::*;
use crate::runner::AskRequest;
use crate::testing::{
    ask_with, exported, library_with, refused, says, Indexed, ScriptedLlm, ADA_NOTES, ADA_QUESTION,
};
use crate::{RetrievalPart, RetrieverKind};
use folio_index::graph::{GraphBuild, GraphBuildOptions};
use folio_llm::prompts::Prompts;
use folio_retrieve::ExactVectors;

async fn built(dir: &std::path::Path) -> Indexed {
    let library = library_with(dir, ADA_NOTES).await;
    let dim = library.retrieval().model().await.unwrap().1.dim;
    let vectors = ExactVectors::load(library.store(), dim).await.unwrap();
    let prompts = Prompts::load(None, folio_llm::rubric::PROMPTS).unwrap();
    let cancel = tokio_util::sync::CancellationToken::new();
    let scorer = ScriptedLlm::new(
        (0..3)
            .map(|_| says(r#"{"P1": "novel", "P2": "redundant"}"#))
            .collect(),
    );
    GraphBuild {
        store: library.store(),
        llm: &scorer,
        prompts: &prompts,
        vectors: &vectors,
        options: GraphBuildOptions::default(),
        job: None,
        scope: None,
        timeout: std::time::Duration::from_secs(10),
        cancel: &cancel,
        reuse_prefix: true,
    }
    .run(&|_| {})
    .await
    .unwrap();
    library
}

async fn ask(library: &Indexed, k: usize, options: &[(&str, &str)]) -> (Ig2RagTrace, ScriptedLlm) {
    let llm = ScriptedLlm::new(vec![says("She was born in London [1].")]);
    let mut request = AskRequest::new(ADA_QUESTION, "ig2rag");
    request.k = Some(k);
    for (name, value) in options {
        request.options.insert(name.to_string(), value.to_string());
    }
    let (run, _) = ask_with(library, &llm, &request).await;
    assert_eq!(llm.unused(), 0, "one answer call");
    match serde_json::from_value(run.trace.clone().unwrap()).unwrap() {
        Trace::Ig2rag(t) => (t, llm),
        other => panic!("not an iG²RAG trace: {other:?}"),
    }
}

#[tokio::test]
async fn the_walk_starts_at_the_seeds_and_reaches_past_them() {
    let dir = tempfile::tempdir().unwrap();
    let library = built(dir.path()).await;
    let (trace, llm) = ask(&library, 3, &[("h", "1")]).await;
    assert_eq!(trace.ranking.seeds.len(), 1);
    assert!((trace.ranking.seeds[0].weight - 1.0).abs() < 1e-12);
    let walk = trace.ranking.walk.unwrap();
    assert!(walk.converged && walk.graph_nodes == 3 && walk.graph_edges == 6);
    assert_eq!(trace.passages.len(), 3, "the walk reaches every chunk");
    assert_eq!(trace.passages[0].chunk_id, trace.ranking.seeds[0].chunk_id);
    let scores: Vec<f64> = trace.ranking.nodes.iter().map(|n| n.score).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert!(trace.ranking.nodes[0].seed && trace.ranking.nodes[0].passage == Some(1));
    assert_eq!(trace.ranking.edges.len(), 6);
    assert!(trace.ranking.edges.iter().all(|e| e.class.is_some()));
    assert_eq!(trace.ranking.coverage.scored, 3);
    assert!(trace.ranking.notes.is_empty(), "{:?}", trace.ranking.notes);
    assert!(llm.prompts()[0].contains("Ada Lovelace"));
}

#[tokio::test]
async fn a_scoped_walk_stays_on_the_part_of_the_graph_in_the_scope() {
    let dir = tempfile::tempdir().unwrap();
    let library = built(dir.path()).await;
    let place = |name: &str| folio_store::place(&dir.path().join("notes").join(name));
    let llm = ScriptedLlm::new(vec![says("She was born in London [1].")]);
    let mut request = AskRequest::new(ADA_QUESTION, "ig2rag");
    request.k = Some(3);
    request.options.insert("h".into(), "1".into());
    request.scope.paths = vec![place("babbage.md"), place("london.md")];
    let (run, _) = ask_with(&library, &llm, &request).await;
    let trace = match serde_json::from_value(run.trace.clone().unwrap()).unwrap() {
        Trace::Ig2rag(t) => t,
        other => panic!("not an iG²RAG trace: {other:?}"),
    };
    let walk = trace.ranking.walk.unwrap();
    assert_eq!((walk.graph_nodes, walk.graph_edges), (2, 2));
    assert_eq!(
        trace.passages.len(),
        2,
        "k = 3, but the scope holds two chunks"
    );
    let allowed = [place("babbage.md"), place("london.md")];
    assert!(trace.passages.iter().all(|p| allowed.contains(&p.path)));
    assert!(trace
        .ranking
        .edges
        .iter()
        .all(|e| trace.passages.iter().any(|p| p.chunk_id == e.source)));
}

#[tokio::test]
async fn the_ablations_walk_similarity_or_follow_the_strongest_edge() {
    let dir = tempfile::tempdir().unwrap();
    let library = built(dir.path()).await;
    let (sim, _) = ask(&library, 2, &[("h", "1"), ("variant", "sim-ppr")]).await;
    assert!(sim.ranking.walk.is_some());
    assert!(sim.ranking.edges.iter().all(|e| e.class.is_none()));

    let (greedy, _) = ask(&library, 2, &[("h", "1"), ("variant", "greedy")]).await;
    assert!(greedy.ranking.walk.is_none());
    assert_eq!(greedy.passages.len(), 2);
    // Each chunk's P1 (its nearest neighbour) was graded novel.
    let seed = greedy.ranking.seeds[0].chunk_id;
    let second = greedy.passages[1].chunk_id;
    let edge = greedy
        .ranking
        .edges
        .iter()
        .find(|e| e.source == seed && e.target == second)
        .expect("greedy took an edge out of the seed");
    assert_eq!(edge.class, Some(folio_index::graph::GainClass::Novel));
}

#[tokio::test]
async fn without_a_graph_the_walk_stays_on_the_seeds_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let library = library_with(dir.path(), ADA_NOTES).await;
    let (trace, _) = ask(&library, 3, &[("h", "2")]).await;
    assert_eq!(trace.passages.len(), 2);
    assert!(trace.ranking.edges.is_empty());
    assert!(
        trace.ranking.notes[0].contains("has not been built"),
        "{:?}",
        trace.ranking.notes
    );
    assert!(trace.ranking.notes[1].contains("fewer than k = 3"));
}

#[tokio::test]
async fn out_of_range_options_are_refused_before_a_run_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let library = library_with(dir.path(), ADA_NOTES).await;
    for (name, value) in [
        ("alpha", "0"),
        ("alpha", "1.5"),
        ("h", "0"),
        ("links", "sometimes"),
    ] {
        let llm = ScriptedLlm::new(vec![]);
        let mut request = AskRequest::new(ADA_QUESTION, "ig2rag");
        request.options.insert(name.into(), value.into());
        let err = refused(&library, &llm, &request).await;
        assert!(
            err.is_user_error() && err.to_string().contains(name),
            "{name}={value}: {err}"
        );
    }
    assert!(library.store().runs(None, 10).await.unwrap().is_empty());
}

#[tokio::test]
async fn another_method_reasons_over_the_walk_and_its_trace_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let library = built(dir.path()).await;
    let (alone, _) = ask(&library, 2, &[]).await;

    let llm = ScriptedLlm::new(vec![says("She was born in London [1].")]);
    let mut request = AskRequest::new(ADA_QUESTION, "vanilla-rag");
    request.k = Some(2);
    request.options.insert("retriever".into(), "ig2rag".into());
    let (run, _) = ask_with(&library, &llm, &request).await;
    assert_eq!(llm.unused(), 0, "one answer call");
    let trace = match serde_json::from_value(run.trace.clone().unwrap()).unwrap() {
        Trace::VanillaRag(t) => t,
        other => panic!("not a vanilla-rag trace: {other:?}"),
    };
    assert_eq!(trace.mode, RetrieverKind::Ig2rag);
    let [RetrievalPart::Ig2rag(walk)] = trace.retrieval.as_slice() else {
        panic!("one walk part: {:?}", trace.retrieval);
    };
    let same = |w: &GainWalkPart| (w.seeds.clone(), w.nodes.clone(), w.edges.clone());
    assert_eq!(
        same(walk),
        same(&alone.ranking),
        "the same walk as iG²RAG's at its defaults"
    );
    let ids =
        |passages: &[crate::Passage]| -> Vec<i64> { passages.iter().map(|p| p.chunk_id).collect() };
    assert_eq!(ids(&trace.passages), ids(&alone.passages));
    let exported = exported(&run);
    assert!(
        exported.contains("Retrieved by the gain walk") && exported.contains("| Node | Score"),
        "{exported}"
    );
}

/// Three notes, the first linking to the second; no graph is built.
const LINKED_NOTES: &[(&str, &str)] = &[
    (
        "start.md",
        "# Start\n\nThe woman who wrote the first algorithm for the Analytical Engine was born where [[place]] says.\n",
    ),
    ("place.md", "# Place\n\nThe city of her birth was London.\n"),
    (
        "river.md",
        "# River\n\nThe River Thames flows to the sea.\n",
    ),
];

#[tokio::test]
async fn with_links_followed_the_walk_goes_where_the_notes_point() {
    let dir = tempfile::tempdir().unwrap();
    let library = library_with(dir.path(), LINKED_NOTES).await;
    let name = |p: &crate::Passage| p.path.rsplit('/').next().unwrap_or_default().to_string();

    let (alone, _) = ask(&library, 2, &[("h", "1")]).await;
    assert_eq!(
        alone.passages.len(),
        1,
        "no graph, no links: the seed alone"
    );
    assert_eq!(name(&alone.passages[0]), "start.md", "the seed");
    assert_eq!(alone.ranking.links, WalkLinks::Off);

    let (linked, llm) = ask(&library, 2, &[("h", "1"), ("links", "follow")]).await;
    let names: Vec<String> = linked.passages.iter().map(name).collect();
    assert_eq!(names, ["start.md", "place.md"]);
    assert_eq!(linked.ranking.links, WalkLinks::Follow);
    let [edge] = linked.ranking.edges.as_slice() else {
        panic!("one edge: {:?}", linked.ranking.edges);
    };
    assert_eq!(
        (edge.source, edge.target),
        (linked.passages[0].chunk_id, linked.passages[1].chunk_id)
    );
    assert!(edge.link && edge.class.is_none());
    assert_eq!(edge.weight, folio_retrieve::LINK_WEIGHT);
    assert!(
        linked.ranking.notes[0].contains("follows only the notes' links"),
        "{:?}",
        linked.ranking.notes
    );
    assert!(llm.prompts()[0].contains("London"));
}
