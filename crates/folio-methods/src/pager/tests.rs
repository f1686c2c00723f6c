//! PAGER's control flow with a scripted model over a real three-note
//! library: slot order, what each prompt shows, repairs and retries, the
//! variants' call counts, and the trace growing as the run goes.

use super::fill::UNFILLED;
use super::page::PLACEHOLDER;
use super::*;
use crate::runner::AskRequest;
use crate::testing::{
    ask_with, library_with, reply, says, ScriptedLlm, ADA_NOTES, ADA_QUESTION as QUESTION,
};
use crate::RunEvent;
use folio_store::{RunRecord, RunStatus};

const OUTLINE_REPLY: &str = "The answer needs the woman, then her birthplace.\n<OUTLINE>\n# Ada and her birthplace\n## Who wrote the first algorithm\n<TO BE FILLED>\n## Where she was born\n<TO BE FILLED>";

async fn run_pager(
    variant: &str,
    script: Vec<folio_llm::Result<folio_llm::Completion>>,
) -> (RunRecord, Vec<RunEvent>, PagerTrace, ScriptedLlm) {
    run_pager_with(&[("variant", variant)], script).await
}

async fn run_pager_with(
    options: &[(&str, &str)],
    script: Vec<folio_llm::Result<folio_llm::Completion>>,
) -> (RunRecord, Vec<RunEvent>, PagerTrace, ScriptedLlm) {
    let dir = tempfile::tempdir().unwrap();
    let library = library_with(dir.path(), ADA_NOTES).await;
    let llm = ScriptedLlm::new(script);
    let mut request = AskRequest::new(QUESTION, "pager");
    request.k = Some(2);
    for (name, value) in options {
        request.options.insert(name.to_string(), value.to_string());
    }
    let (run, events) = ask_with(&library, &llm, &request).await;
    let trace: PagerTrace = match serde_json::from_value(run.trace.clone().unwrap()).unwrap() {
        Trace::Pager(t) => t,
        other => panic!("not a PAGER trace: {other:?}"),
    };
    (run, events, trace, llm)
}

fn bodies(page: &Page) -> Vec<Option<&str>> {
    page.sections.iter().map(|s| s.body.as_deref()).collect()
}

#[tokio::test]
async fn iterative_fills_slots_in_order_with_one_sub_query_each() {
    let (run, events, trace, llm) = run_pager(
        "iterative",
        vec![
            says(OUTLINE_REPLY),
            says("Query: who wrote the first algorithm for the Analytical Engine"),
            says("Ada Lovelace wrote it [1]."),
            says("Ada Lovelace birthplace"),
            says("She was born in London [1]."),
            says("She was born in London [1]."),
        ],
    )
    .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(
        run.llm_calls,
        1 + 2 * 2 + 1,
        "outline, two calls per slot, answer"
    );
    assert_eq!(llm.unused(), 0);
    assert_eq!(
        trace.steps.iter().map(|s| s.slot).collect::<Vec<_>>(),
        [0, 1]
    );
    assert_eq!(
        bodies(&trace.page),
        [
            Some("Ada Lovelace wrote it [1]."),
            Some("She was born in London [1].")
        ]
    );
    assert_eq!(
        trace.steps[0].sub_query,
        "who wrote the first algorithm for the Analytical Engine"
    );
    assert!(trace.steps[0].overlap.is_none() && trace.steps[1].overlap.is_some());
    assert!(trace.steps[0].page_after.contains(PLACEHOLDER));
    assert!(!trace.steps[1].page_after.contains(PLACEHOLDER));
    assert_eq!(
        trace.reasoning,
        "The answer needs the woman, then her birthplace."
    );
    // The second slot's prompts see the first slot filled, the second empty.
    let prompts = llm.prompts();
    assert!(prompts[3].contains("Ada Lovelace wrote it [1].") && prompts[3].contains(PLACEHOLDER));
    assert!(prompts[4].contains("\"Where she was born\""));
    assert_eq!(run.answer.as_deref(), Some("She was born in London [1]."));
    assert!(trace.passages.iter().any(|p| p.path.ends_with("ada.md")));
    // The page grows live: one trace event after the outline and one per slot.
    let traced: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Trace {
                trace: Trace::Pager(t),
            } => Some(t.steps.len()),
            _ => None,
        })
        .collect();
    assert_eq!(traced, [0, 1, 2]);
}

#[tokio::test]
async fn a_bad_outline_is_asked_again_then_repaired() {
    let (run, _, trace, _) = run_pager(
        "no-iter",
        vec![
            says("I am not sure what to plan."),
            says("## Who wrote it\n## Who wrote it\n## Birthplace"),
            says("Ada Lovelace [1]."),
            says("London [1]."),
            says("London."),
        ],
    )
    .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    let notes = trace.outline_notes.join(" | ");
    for expected in [
        "rejected the outline reply: the outline has no sections; asked again",
        "repeated",
        "no title",
    ] {
        assert!(notes.contains(expected), "{notes}");
    }
    assert_eq!(trace.page.title, QUESTION);
    assert_eq!(trace.page.sections.len(), 2);
}

#[tokio::test]
async fn an_outline_that_stays_unusable_leaves_the_question_as_the_only_section() {
    let (run, _, trace, _) = run_pager(
        "iterative",
        vec![
            says("No idea."),
            says("Still none."),
            says("Ada Lovelace"),
            says("Ada Lovelace wrote it [1]."),
            says("Ada Lovelace."),
        ],
    )
    .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(
        run.llm_calls,
        2 + 2 + 1,
        "two outline replies, one slot, answer"
    );
    let notes = trace.outline_notes.join(" | ");
    assert!(
        notes.contains("the question became the page's only section"),
        "{notes}"
    );
    assert_eq!(trace.page.sections.len(), 1);
    assert_eq!(trace.page.sections[0].heading, QUESTION);
    assert_eq!(
        trace.page.sections[0].body.as_deref(),
        Some("Ada Lovelace wrote it [1].")
    );
}

#[tokio::test]
async fn fills_that_overreach_are_cut_down_and_empty_ones_marked() {
    let (run, _, trace, _) = run_pager(
        "no-iter",
        vec![
            says(OUTLINE_REPLY),
            says("# Ada and her birthplace\n## Who wrote the first algorithm\nAda Lovelace [1].\n## Where she was born\nrewritten by the model"),
            says("<TO BE FILLED>"),
            reply("", folio_llm::FinishReason::Length),
            says("London."),
        ],
    )
    .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(
        bodies(&trace.page),
        [Some("Ada Lovelace [1]."), Some(UNFILLED)]
    );
    assert!(trace.steps[0].notes[0].contains("only \"Who wrote the first algorithm\" was kept"));
    assert!(trace.steps[1].failed);
    let notes = trace.steps[1].notes.join(" | ");
    assert!(
        notes.contains("asked again") && notes.contains("max_tokens"),
        "{notes}"
    );
    assert_eq!(
        trace.steps[0].sub_query, QUESTION,
        "no-iter searches with the question"
    );
    assert_eq!(trace.steps[0].sources, trace.steps[1].sources);
}

#[tokio::test]
async fn parallel_writes_all_sub_queries_at_once_and_fills_from_the_first_page() {
    let (run, _, trace, llm) = run_pager(
        "parallel",
        vec![
            says(OUTLINE_REPLY),
            says("1. first algorithm Analytical Engine author\n"),
            says("Ada Lovelace [1]."),
            says("London [2]."),
            says("London."),
        ],
    )
    .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(run.llm_calls, 1 + 1 + 2 + 1);
    assert_eq!(
        trace.steps[0].sub_query,
        "first algorithm Analytical Engine author"
    );
    assert_eq!(
        trace.steps[1].sub_query,
        fill::fallback_query("Where she was born", QUESTION)
    );
    assert!(trace
        .outline_notes
        .iter()
        .any(|n| n.starts_with("sub-queries: 1 of 2")));
    let prompts = llm.prompts();
    assert_eq!(prompts[2].matches(PLACEHOLDER).count(), 2);
    assert_eq!(
        prompts[3].matches(PLACEHOLDER).count(),
        2,
        "the second fill sees the first page"
    );
}

#[tokio::test]
async fn no_outline_summarises_until_sufficient() {
    let (run, _, trace, llm) = run_pager(
        "no-outline",
        vec![
            says("Ada Lovelace wrote the algorithm [1].\nSUFFICIENT: no"),
            says("Ada Lovelace birthplace"),
            says("She was born in London [1].\nSUFFICIENT: yes"),
            says("London [1]."),
        ],
    )
    .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(llm.unused(), 0);
    assert_eq!(
        trace.steps.iter().map(|s| s.sufficient).collect::<Vec<_>>(),
        [Some(false), Some(true)]
    );
    assert_eq!(trace.steps[0].sub_query, QUESTION);
    assert_eq!(trace.page.sections[1].heading, "Ada Lovelace birthplace");
    assert!(trace.outline.sections.is_empty());
}

#[tokio::test]
async fn a_long_outline_keeps_its_last_sections_and_the_last_fill_may_answer() {
    let outline = "It needs the author, then where she was born.\n<OUTLINE>\n# Ada\n## The Analytical Engine\n## Who wrote the first algorithm\n## Where she was born\n";
    let (run, _, trace, llm) = run_pager_with(
        &[("variant", "no-iter"), ("slots-max", "2")],
        vec![
            says(outline),
            says("Ada Lovelace wrote it [1]."),
            says("She was born in London [1], so the answer is London."),
            says("London [1]."),
        ],
    )
    .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(
        trace
            .page
            .sections
            .iter()
            .map(|s| s.heading.as_str())
            .collect::<Vec<_>>(),
        ["Who wrote the first algorithm", "Where she was born"],
        "the paper's later sections matter most"
    );
    assert!(trace
        .outline_notes
        .iter()
        .any(|n| n == "kept the last 2 of 3 sections"));
    let prompts = llm.prompts();
    let answer_it = "last section: end it with one sentence that states the answer";
    assert!(!prompts[1].contains(answer_it) && prompts[2].contains(answer_it));
    assert!(prompts[1].contains("you may add what you know"));
    // The paper's sampling, unless the request names its own.
    assert_eq!(run.params["temperature"].as_f64(), Some(0.7f32 as f64));
    assert_eq!(run.params["sampling"]["top_k"], 20);
}
