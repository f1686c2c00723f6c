//! RDR²'s control flow with a scripted router over a real library: what the
//! router is shown, how expansions change the view, strict handling of bad
//! replies, fallbacks and refusals, and the ablations' call counts.

use super::*;
use crate::runner::AskRequest;
use crate::testing::{ask_with, exported, library_with, refused, says, Indexed, ScriptedLlm};
use crate::{RetrievalPart, RetrieverKind};
use folio_documents::structure_tree::StructureTree;
use folio_store::{RunRecord, RunStatus};

const PARK: &str = "# Seaside Park

## Getting there

The park is reached by ferry from the north pier.

Ferries leave at eight and at two every day.

## Rides

### Coasters

The Titan coaster is 245 feet tall and opened in 2001.

### Towers

The SkyScreamer swing ride is 400 feet tall, the tallest ride in the park.

## History

The park opened in 1961 on the old shipyard.
";
const GARDEN: &str = "# Garden notes\n\nTomatoes need six hours of sun a day.\n";
const QUESTION: &str = "How tall is the SkyScreamer swing ride?";

struct Fixture {
    _dir: tempfile::TempDir,
    library: Indexed,
    tree: StructureTree,
}

impl Fixture {
    async fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let library = library_with(dir.path(), &[("park.md", PARK), ("garden.md", GARDEN)]).await;
        let store = library.store();
        let park = store
            .all_documents()
            .await
            .unwrap()
            .into_iter()
            .find(|d| d.path.ends_with("park.md"))
            .unwrap();
        let tree = store.structure_tree(park.id).await.unwrap();
        Fixture {
            _dir: dir,
            library,
            tree,
        }
    }

    /// The id of the park node whose text starts with `start`.
    fn id(&self, start: &str) -> usize {
        self.tree
            .nodes()
            .iter()
            .position(|n| n.text.starts_with(start))
            .unwrap_or_else(|| panic!("no node starts with {start:?}"))
    }

    async fn ask(
        &self,
        k: usize,
        options: &[(&str, &str)],
        script: Vec<&str>,
    ) -> (RunRecord, Rdr2Trace, ScriptedLlm) {
        let (run, llm) = self.ask_method("rdr2", k, options, script).await;
        let trace = match serde_json::from_value(run.trace.clone().unwrap()).unwrap() {
            Trace::Rdr2(t) => t,
            other => panic!("not an RDR2 trace: {other:?}"),
        };
        (run, trace, llm)
    }

    async fn ask_method(
        &self,
        method: &str,
        k: usize,
        options: &[(&str, &str)],
        script: Vec<&str>,
    ) -> (RunRecord, ScriptedLlm) {
        let llm = ScriptedLlm::new(script.into_iter().map(says).collect());
        let mut request = AskRequest::new(QUESTION, method);
        request.k = Some(k);
        for (name, value) in options {
            request.options.insert(name.to_string(), value.to_string());
        }
        let (run, _) = ask_with(&self.library, &llm, &request).await;
        assert_eq!(llm.unused(), 0, "the script had replies left");
        (run, llm)
    }
}

/// The vanilla-rag trace of `run`, which must be one.
fn vanilla_trace(run: &RunRecord) -> crate::VanillaRagTrace {
    match serde_json::from_value(run.trace.clone().unwrap()).unwrap() {
        Trace::VanillaRag(t) => t,
        other => panic!("not a vanilla-rag trace: {other:?}"),
    }
}

#[tokio::test]
async fn another_method_reads_what_the_routes_select() {
    let f = Fixture::new().await;
    let towers = f.id("The SkyScreamer");
    let (run, llm) = f
        .ask_method(
            "vanilla-rag",
            1,
            &[("retriever", "rdr2")],
            vec![&format!("[ANSWER] {towers}"), "It is 400 feet tall [1]."],
        )
        .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert!(
        llm.prompts()[0].contains("You are routing through one document"),
        "the route comes first"
    );
    let trace = vanilla_trace(&run);
    assert_eq!(trace.mode, RetrieverKind::Rdr2);
    let texts: Vec<&str> = trace.passages.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(
        texts,
        ["The SkyScreamer swing ride is 400 feet tall, the tallest ride in the park."],
        "the reasoner reads the selected node, not the retrieved chunk"
    );
    let [RetrievalPart::Rdr2(routing)] = trace.retrieval.as_slice() else {
        panic!("one routing part: {:?}", trace.retrieval);
    };
    assert_eq!(routing.query, QUESTION);
    assert_eq!(routing.routes[0].selected, [towers]);
    assert_eq!(run.citations.as_array().unwrap().len(), 1);
    let exported = exported(&run);
    assert!(
        exported.contains("Retrieved by RDR²'s routing") && exported.contains("selected nodes"),
        "{exported}"
    );
}

#[tokio::test]
async fn when_every_route_refuses_the_searched_passages_are_passed_on() {
    let f = Fixture::new().await;
    let (run, _) = f
        .ask_method(
            "vanilla-rag",
            2,
            &[("retriever", "rdr2")],
            vec!["Cannot answer", "I do not know."],
        )
        .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    let trace = vanilla_trace(&run);
    let [RetrievalPart::Rdr2(routing)] = trace.retrieval.as_slice() else {
        panic!("one routing part: {:?}", trace.retrieval);
    };
    assert!(routing
        .routes
        .iter()
        .all(|r| r.outcome == RouteOutcome::Refused));
    assert_eq!(trace.passages, routing.retrieved);
    assert!(
        routing
            .notes
            .iter()
            .any(|n| n.contains("searched passages were passed on")),
        "{:?}",
        routing.notes
    );
}

#[tokio::test]
async fn rdr2_routes_searched_or_linked_passages_only() {
    let f = Fixture::new().await;
    let llm = ScriptedLlm::new(Vec::new());
    let mut request = AskRequest::new(QUESTION, "rdr2");
    request.options.insert("retriever".into(), "ig2rag".into());
    let err = refused(&f.library, &llm, &request).await;
    assert!(
        err.to_string()
            .contains("one of: hybrid, dense, bm25, links"),
        "{err}"
    );
}

#[tokio::test]
async fn the_route_expands_a_heading_then_selects_from_it() {
    let f = Fixture::new().await;
    let (towers, coasters) = (f.id("The SkyScreamer"), f.id("Coasters"));
    let titan = f.id("The Titan");
    let (run, trace, llm) = f
        .ask(
            1,
            &[],
            vec![
                &format!("[ANSWER] {towers}\n[EXPAND] {coasters}"),
                &format!("[ANSWER] {titan}"),
                "The SkyScreamer is 400 feet tall [1]; the Titan is 245 [2].",
            ],
        )
        .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(run.llm_calls, 3, "two routing turns and the read");
    let prompts = llm.prompts();
    let (first, second) = (shown_tree(&prompts[0]), shown_tree(&prompts[1]));
    assert!(first.contains(&format!("{towers}: The SkyScreamer")));
    assert!(first.contains(&format!("{coasters}: ### Coasters (collapsed)")));
    assert!(
        !first.contains("The Titan coaster"),
        "collapsed text is hidden"
    );
    assert!(
        second.contains("The Titan coaster") && !second.contains("SkyScreamer swing"),
        "the expansion replaced what was in view"
    );

    let route = &trace.routing.routes[0];
    assert!(route.path.ends_with("park.md"));
    assert_eq!(route.title, "Seaside Park");
    assert_eq!(route.hits, [towers]);
    assert_eq!(route.outcome, RouteOutcome::Selected);
    assert_eq!(route.selected, [titan, towers]);
    assert_eq!(route.steps.len(), 2);
    assert_eq!(route.steps[0].visible, [towers]);
    assert!(route.steps[0].collapsed.contains(&coasters));
    assert_eq!(route.steps[1].visible, [titan]);
    assert!(
        route.nodes.iter().any(|n| n.id == titan)
            && route.nodes.iter().all(|n| !n.text.contains("1961"))
    );

    let texts: Vec<&str> = trace.passages.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "The Titan coaster is 245 feet tall and opened in 2001.",
            "The SkyScreamer swing ride is 400 feet tall, the tallest ride in the park."
        ],
        "selected passages in document order"
    );
    assert_eq!(
        trace.passages[0].heading_path,
        "Seaside Park > Rides > Coasters"
    );
    assert!(prompts[2].contains("<document number=\"2\"") && prompts[2].contains("SkyScreamer"));
    assert_eq!(run.citations.as_array().unwrap().len(), 2);
    assert_eq!(run.citations[1]["span_start"], trace.passages[1].span_start);
}

#[tokio::test]
async fn bad_actions_are_ignored_with_reasons_and_an_unusable_route_falls_back() {
    let f = Fixture::new().await;
    let (history, rides) = (f.id("The park opened"), f.id("Rides"));
    let towers = f.id("The SkyScreamer");
    let (run, trace, llm) = f
        .ask(
            1,
            &[],
            vec![
                &format!("Sure, here you go.\n[ANSWER] 999\n[ANSWER] {history}\n[ANSWER] {rides}\n[EXPAND] {towers}"),
                "It is 400 feet tall [1].",
            ],
        )
        .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    let route = &trace.routing.routes[0];
    assert_eq!(route.outcome, RouteOutcome::FellBack);
    let reasons: Vec<&str> = route.steps[0]
        .ignored
        .iter()
        .map(|i| i.reason.as_str())
        .collect();
    assert_eq!(
        reasons,
        [
            "not an action".to_string(),
            "there is no node 999".to_string(),
            format!("passage {history} was not shown"),
            format!("node {rides} is a heading; only passages can be selected"),
            format!("node {towers} is a passage; only collapsed headings can be expanded"),
        ]
    );
    assert!(route
        .notes
        .iter()
        .any(|n| n.contains("no usable routing reply")));
    assert_eq!(trace.passages.len(), 1);
    assert_eq!(
        trace.passages[0].chunk_id, trace.routing.retrieved[0].chunk_id,
        "the retrieved chunk itself"
    );
    assert!(llm.prompts()[1].contains("SkyScreamer"));
}

#[tokio::test]
async fn when_every_document_refuses_the_reader_answers_from_no_passages() {
    let f = Fixture::new().await;
    let (run, trace, llm) = f
        .ask(1, &[], vec!["Cannot answer.", "The documents do not say."])
        .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(run.llm_calls, 2, "the route, then the reader");
    assert_eq!(run.answer.as_deref(), Some("The documents do not say."));
    assert!(trace
        .routing
        .routes
        .iter()
        .all(|r| r.outcome == RouteOutcome::Refused));
    assert!(trace.passages.is_empty() && run.citations.as_array().unwrap().is_empty());
    assert!(trace.refused);
    let read = &llm.prompts()[1];
    assert!(
        read.contains("Nothing in the person's documents") && !read.contains("<document number"),
        "{read}"
    );
}

#[tokio::test]
async fn without_refusal_the_router_is_not_offered_it() {
    let f = Fixture::new().await;
    let towers = f.id("The SkyScreamer");
    let (run, trace, llm) = f
        .ask(
            1,
            &[("variant", "no-refuse")],
            vec![&format!("[ANSWER] {towers}"), "It is 400 feet tall [1]."],
        )
        .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(trace.routing.variant, Rdr2Variant::NoRefuse);
    assert_eq!(trace.routing.expand_iter, 5, "it still expands");
    let route = &llm.prompts()[0];
    assert!(!route.contains("Cannot answer"), "{route}");
    assert!(route.contains("Always name at least one passage or heading"));
}

#[tokio::test]
async fn a_refusal_ends_only_the_subtree_in_view() {
    let f = Fixture::new().await;
    let (coasters, history) = (f.id("Coasters"), f.id("History"));
    let opened = f.id("The park opened");
    let (run, trace, llm) = f
        .ask(
            1,
            &[],
            vec![
                &format!("[EXPAND] {coasters}, {history}"),
                "Cannot answer",
                &format!("[ANSWER] {opened}"),
                "It opened in 1961 [1].",
            ],
        )
        .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    let route = &trace.routing.routes[0];
    assert_eq!(route.steps.len(), 3, "each opened heading has its own turn");
    let prompts = llm.prompts();
    let (second, third) = (shown_tree(&prompts[1]), shown_tree(&prompts[2]));
    assert!(second.contains("The Titan coaster") && !second.contains("1961"));
    assert!(
        third.contains("1961") && !third.contains("The Titan coaster"),
        "after the refusal the route goes on to the next opened heading"
    );
    assert!(route.steps[1].refused);
    assert_eq!(route.selected, [opened]);
    assert_eq!(route.outcome, RouteOutcome::Selected);
}

#[tokio::test]
async fn passages_an_empty_detour_pushed_out_come_back() {
    let f = Fixture::new().await;
    let (towers, coasters) = (f.id("The SkyScreamer"), f.id("Coasters"));
    let (run, trace, llm) = f
        .ask(
            1,
            &[],
            vec![
                &format!("[EXPAND] {coasters}"),
                "Cannot answer",
                &format!("[ANSWER] {towers}"),
                "It is 400 feet tall [1].",
            ],
        )
        .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    let route = &trace.routing.routes[0];
    assert_eq!(route.steps.len(), 3, "the first view came back for a turn");
    let prompts = llm.prompts();
    let (second, third) = (shown_tree(&prompts[1]), shown_tree(&prompts[2]));
    assert!(second.contains("The Titan coaster") && !second.contains("SkyScreamer swing"));
    assert!(third.contains("SkyScreamer swing") && !third.contains("The Titan coaster"));
    assert!(
        route.steps[2].collapsed.is_empty(),
        "the returned view offers no expansion"
    );
    assert!(route
        .notes
        .iter()
        .any(|n| n.contains("came back into view")));
    assert_eq!(route.selected, [towers]);
    assert_eq!(route.outcome, RouteOutcome::Selected);
}

#[tokio::test]
async fn expansions_stop_at_expand_iter() {
    let f = Fixture::new().await;
    let (coasters, history) = (f.id("Coasters"), f.id("History"));
    let (run, trace, _) = f
        .ask(
            1,
            &[("expand-iter", "1")],
            vec![
                &format!("[EXPAND] {coasters}"),
                &format!("[EXPAND] {history}"),
                "It is 400 feet tall [1].",
            ],
        )
        .await;
    assert_eq!(run.llm_calls, 3);
    let route = &trace.routing.routes[0];
    assert_eq!(route.steps.len(), 2);
    assert!(
        route.steps[1].collapsed.is_empty(),
        "nothing is offered on the last turn"
    );
    assert_eq!(route.steps[1].ignored[0].reason, "no expansions were left");
    assert_eq!(route.outcome, RouteOutcome::FellBack);
}

#[tokio::test]
async fn no_expand_routes_once_and_never_offers_headings() {
    let f = Fixture::new().await;
    let towers = f.id("The SkyScreamer");
    let (run, trace, llm) = f
        .ask(
            1,
            &[("variant", "no-expand")],
            vec![&format!("[ANSWER] {towers}"), "It is 400 feet tall [1]."],
        )
        .await;
    assert_eq!(run.llm_calls, 2);
    assert_eq!(trace.routing.expand_iter, 0);
    let prompt = &llm.prompts()[0];
    assert!(
        !prompt.contains("collapsed") && !prompt.contains("[EXPAND]"),
        "{prompt}"
    );
    assert!(
        shown_tree(prompt).contains("## Rides"),
        "the headings are still shown"
    );
    assert_eq!(trace.routing.routes[0].selected, [towers]);
}

#[tokio::test]
async fn no_structure_judges_each_passage_alone() {
    let f = Fixture::new().await;
    let towers = f.id("The SkyScreamer");
    let (run, trace, llm) = f
        .ask(
            2,
            &[("variant", "no-structure")],
            vec![
                &format!("[ANSWER] {towers}"),
                "Cannot answer",
                "It is 400 feet tall [1].",
            ],
        )
        .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(
        trace.routing.routes.len(),
        2,
        "one route per retrieved passage"
    );
    let prompts = llm.prompts();
    let first = shown_tree(&prompts[0]);
    assert!(
        !first.contains('#') && !shown_tree(&prompts[1]).contains('#'),
        "no headings: {first}"
    );
    assert!(first.contains(&format!("\n{towers}: The SkyScreamer")));
    assert_eq!(trace.routing.routes[0].outcome, RouteOutcome::Selected);
    assert_eq!(trace.routing.routes[1].outcome, RouteOutcome::Refused);
    assert_eq!(trace.passages.len(), 1);
    assert!(trace.routing.routes[0]
        .nodes
        .iter()
        .all(|n| n.parent.is_none() && n.depth == 0));
}

#[tokio::test]
async fn out_of_range_options_are_refused_before_a_run_is_stored() {
    let f = Fixture::new().await;
    for (name, value) in [("expand-iter", "99"), ("budget-tokens", "10")] {
        let llm = ScriptedLlm::new(vec![]);
        let mut request = AskRequest::new(QUESTION, "rdr2");
        request.options.insert(name.into(), value.into());
        let err = refused(&f.library, &llm, &request).await;
        assert!(
            err.is_user_error() && err.to_string().contains(name),
            "{name}={value}: {err}"
        );
    }
    assert!(f.library.store().runs(None, 10).await.unwrap().is_empty());
}

/// The document part of a routing prompt, after the few-shot examples.
fn shown_tree(prompt: &str) -> &str {
    &prompt[prompt.rfind("<document title=").expect("a routing prompt")..]
}

#[tokio::test]
async fn with_the_links_retriever_the_notes_linked_to_are_routed_too() {
    let dir = tempfile::tempdir().unwrap();
    let guide = "# Guide\n\nHow tall is the SkyScreamer swing ride? See [[towers]].\n";
    let towers = "# Towers\n\nThe SkyScreamer is 400 feet tall.\n";
    let library = library_with(dir.path(), &[("guide.md", guide), ("towers.md", towers)]).await;
    // Each note's one paragraph is node 1 of its tree.
    let llm = ScriptedLlm::new(vec![
        says("[ANSWER] 1"),
        says("[ANSWER] 1"),
        says("It is 400 feet tall [2]."),
    ]);
    let mut request = AskRequest::new(QUESTION, "rdr2");
    request.k = Some(1);
    request.options.insert("retriever".into(), "links".into());
    let (run, _) = ask_with(&library, &llm, &request).await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(llm.unused(), 0);
    let trace = match serde_json::from_value(run.trace.clone().unwrap()).unwrap() {
        Trace::Rdr2(t) => t,
        other => panic!("not an RDR2 trace: {other:?}"),
    };
    let routed: Vec<&str> = trace
        .routing
        .routes
        .iter()
        .map(|r| r.path.rsplit('/').next().unwrap())
        .collect();
    assert_eq!(
        routed,
        ["guide.md", "towers.md"],
        "the linked note is routed too"
    );
    assert_eq!(trace.routing.routes[1].retrieved, [2]);
    let [RetrievalPart::Links(links)] = trace.retrieval.as_slice() else {
        panic!("one links part: {:?}", trace.retrieval);
    };
    assert_eq!((links.searched, links.followed.len()), (1, 1));
    assert_eq!(links.followed[0].written, "towers");
    assert!(trace.passages.iter().any(|p| p.text.contains("400 feet")));
    let exported = exported(&run);
    assert!(
        exported.contains("Retrieved by following links") && exported.contains("by `[[towers]]`"),
        "{exported}"
    );
}
