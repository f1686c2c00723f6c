//! CRP-RAG's control flow with a scripted model over a real library:
//! graph construction (merging, budgets, the DAG), the sufficiency tests,
//! path selection, refusal and the variants' call counts.

use std::collections::BTreeSet;

use super::answer::{joined_knowledge, select, Selection};
use super::graph::{Graph, SOURCE};
use super::*;
use crate::runner::AskRequest;
use crate::testing::{
    ask_with, calibrations, library_with, says, says_surely, settings, ScriptedLlm, ADA_NOTES,
    ADA_QUESTION,
};
use folio_llm::calibration::Calibration;
use folio_llm::{Completion, LlmError};
use folio_store::{RunRecord, RunStatus};

type Reply = Result<Completion, LlmError>;

async fn run_crp(
    llm: ScriptedLlm,
    options: &[(&str, &str)],
) -> (RunRecord, CrpRagTrace, Vec<String>) {
    run_crp_calibrated(llm, options, None).await
}

/// [`run_crp`] with `calibration` stored as the configured model's.
async fn run_crp_calibrated(
    llm: ScriptedLlm,
    options: &[(&str, &str)],
    calibration: Option<Calibration>,
) -> (RunRecord, CrpRagTrace, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let library = library_with(dir.path(), ADA_NOTES).await;
    if let Some(calibration) = calibration {
        calibrations(&library)
            .save(&settings(), &calibration)
            .unwrap();
    }
    let mut request = AskRequest::new(ADA_QUESTION, "crp-rag");
    request.k = Some(2);
    for (name, value) in options {
        request.options.insert(name.to_string(), value.to_string());
    }
    let (run, _) = ask_with(&library, &llm, &request).await;
    assert_eq!(llm.unused(), 0, "the script has replies left over");
    let trace = match serde_json::from_value(run.trace.clone().unwrap()).unwrap() {
        Trace::CrpRag(t) => t,
        other => panic!("not a CRP-RAG trace: {other:?}"),
    };
    (run, trace, llm.prompts())
}

const WHO: &str = "Who wrote the first algorithm for the Analytical Engine?";
const WHO_AGAIN: &str = "Which person wrote the first algorithm for the Analytical Engine?";
const WHERE: &str = "Where was Ada Lovelace born?";

/// A knowledge summary and a "yes" self-assessment for one step.
fn known(summary: &str) -> [Reply; 2] {
    [says(summary), says("Yes, it says so.")]
}

#[tokio::test]
async fn similar_steps_merge_and_the_answer_follows_the_one_path() {
    let mut script = vec![
        says(&format!("Next: {WHO}\nNext: {WHO_AGAIN}\n")),
        says("Who wrote the first algorithm for the Analytical Engine, and who was she?"),
        says(&format!("Final: {WHERE}\n")),
    ];
    script.extend(known("Ada Lovelace wrote it [1]."));
    script.extend(known("She was born in London [2]."));
    script.extend([
        says("Ada Lovelace wrote the first algorithm [1]."),
        says("She was born in London [2]."),
    ]);
    let (run, trace, prompts) = run_crp(ScriptedLlm::new(script), &[]).await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(run.answer.as_deref(), Some("She was born in London [2]."));
    assert_eq!(run.llm_calls, 9);

    assert_eq!(trace.nodes.len(), 3);
    assert_eq!(trace.merges.len(), 1);
    let merge = &trace.merges[0];
    assert_eq!(
        (merge.node, merge.texts.len(), merge.identical),
        (1, 2, false)
    );
    assert!(merge.similarity >= trace.merge_threshold, "{merge:?}");
    assert!(trace.nodes[1].text.contains("and who was she"));
    assert_eq!(
        trace.edges,
        [
            ReasoningEdge { from: 0, to: 1 },
            ReasoningEdge { from: 1, to: 2 }
        ]
    );
    assert!(trace.nodes[2].is_final && !trace.nodes[1].is_final);
    assert_eq!(trace.stop, Some(GraphStop::AllFinal));
    assert_eq!(trace.threshold_source, ThresholdSource::NotUsed);
    assert!(trace.notes[0].contains("no threshold applies"));
    for node in &trace.nodes[1..] {
        let check = node.check.as_ref().unwrap();
        assert_eq!(check.test, SufficiencyTest::SelfAssessment);
        assert!(check.sufficient && check.perplexity.is_none());
        assert!(!node.passages.is_empty() && node.knowledge.is_some());
    }
    assert_eq!(trace.paths.len(), 1);
    assert_eq!(trace.paths[0].nodes, [0, 1, 2]);
    assert_eq!(trace.paths[0].results.len(), 2);

    // The second round's prompt takes the first step as known; the last
    // reasoning step sees the first one's result as data.
    assert!(prompts[2].contains("Steps already worked out") && prompts[2].contains("who was she"));
    assert!(prompts[8].contains("Result: Ada Lovelace wrote the first algorithm [1]."));
    assert!(prompts[8].contains("This is the last step"));
    let cited: BTreeSet<&str> = run
        .citations
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(cited.len(), 2, "{cited:?}");
}

#[tokio::test]
async fn budgets_stop_the_graph_and_say_so() {
    let mut script = vec![says(&format!("Next: {WHO}\nNext: {WHERE}\n"))];
    script.extend(known("Ada Lovelace wrote it [1]."));
    script.push(says("Ada Lovelace [1]."));
    let (run, trace, _) = run_crp(ScriptedLlm::new(script), &[("nodes", "1")]).await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(trace.nodes.len(), 2);
    assert_eq!(trace.stop, Some(GraphStop::NodeBudget));
    assert!(
        trace
            .notes
            .iter()
            .any(|n| n.contains("1 proposed steps did not fit")),
        "{:?}",
        trace.notes
    );

    let mut script = vec![says(&format!("Next: {WHO}\n"))];
    script.extend(known("Ada Lovelace wrote it [1]."));
    script.push(says("Ada Lovelace [1]."));
    let (_, trace, _) = run_crp(ScriptedLlm::new(script), &[("depth", "1")]).await;
    assert_eq!(trace.stop, Some(GraphStop::DepthBudget));
    assert!(
        !trace.nodes[1].is_final,
        "the open step still ends its path"
    );
    assert_eq!(trace.paths[0].nodes, [0, 1]);
    for expected in [
        "growth stopped at the budget of 1 rounds with step(s) 1 not yet final",
        "1 of the 1 paths reasoned along end before a final step",
    ] {
        assert!(
            trace.notes.iter().any(|n| n.contains(expected)),
            "{expected}: {:?}",
            trace.notes
        );
    }
}

#[tokio::test]
async fn the_graph_grows_until_every_end_is_final() {
    let mut script = vec![
        says(&format!("Next: {WHO}\n")),
        says("Next: Who was Ada Lovelace?\n"),
        says(&format!("Final: {WHERE}\n")),
    ];
    for summary in [
        "Ada Lovelace wrote it [1].",
        "Ada Lovelace was a mathematician [1].",
        "She was born in London [2].",
    ] {
        script.extend(known(summary));
    }
    script.extend([
        says("Ada Lovelace [1]."),
        says("A mathematician [1]."),
        says("London [2]."),
    ]);
    let (run, trace, _) = run_crp(ScriptedLlm::new(script), &[]).await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(trace.stop, Some(GraphStop::AllFinal));
    assert_eq!(
        trace.paths[0].nodes,
        [0, 1, 2, 3],
        "three rounds, past the old two"
    );
    assert!(trace.nodes[3].is_final);
    assert!(!trace
        .notes
        .iter()
        .any(|n| n.contains("before a final step")));
}

#[tokio::test]
async fn perplexity_decides_sufficiency_and_no_sufficient_path_refuses() {
    let sure = (0.5f32).ln(); // perplexity 2
    let unsure = (0.1f32).ln(); // perplexity 10
    let script = vec![
        says(&format!("Final: {WHO}\nFinal: {WHERE}\n")),
        says("Ada Lovelace wrote it [1]."),
        says_surely("Ada Lovelace.", &[sure, sure]),
        says("Nothing about her birthplace."),
        says_surely("Perhaps Paris.", &[unsure, unsure, unsure]),
        says("Ada Lovelace [1]."),
    ];
    let threshold = [("perplexity-threshold", "4")];
    let (run, trace, _) = run_crp(ScriptedLlm::new(script).with_logprobs(), &threshold).await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(trace.perplexity_threshold, 4.0);
    let checks: Vec<_> = trace.nodes[1..]
        .iter()
        .map(|n| n.check.clone().unwrap())
        .collect();
    assert_eq!(checks[0].test, SufficiencyTest::Perplexity);
    assert!((checks[0].perplexity.unwrap() - 2.0).abs() < 1e-4 && checks[0].sufficient);
    assert!((checks[1].perplexity.unwrap() - 10.0).abs() < 1e-3 && !checks[1].sufficient);
    assert_eq!(
        trace.paths.len(),
        1,
        "only the sufficient path is reasoned along"
    );
    assert_eq!(trace.paths[0].nodes, [0, 1]);
    assert!(!trace.refused);

    let script = vec![
        says(&format!("Final: {WHERE}\n")),
        says("Nothing about her birthplace."),
        says_surely("Perhaps Paris.", &[unsure, unsure]),
    ];
    let (run, trace, _) = run_crp(ScriptedLlm::new(script).with_logprobs(), &threshold).await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert!(trace.refused && trace.paths.is_empty());
    let answer = run.answer.unwrap();
    assert!(
        answer.contains("cannot answer") && answer.contains(WHERE) && answer.contains("10.00"),
        "{answer}"
    );
    assert_eq!(run.llm_calls, 3, "a refusal costs no answer call");
}

#[tokio::test]
async fn the_threshold_is_the_models_calibrated_one_and_the_trace_says_whence() {
    let sure = (0.5f32).ln(); // perplexity 2
    let script = || {
        vec![
            says(&format!("Final: {WHO}\n")),
            says("Ada Lovelace wrote it [1]."),
            says_surely("Ada Lovelace.", &[sure, sure]),
            says("Ada Lovelace [1]."),
        ]
    };
    let calibration = Calibration {
        threshold: 2.5,
        accuracy: 0.9,
        held_out_accuracy: 0.85,
        known: vec![1.2],
        unknown: vec![3.0],
        measured_at: 0,
    };
    let llm = ScriptedLlm::new(script()).with_logprobs();
    let (run, trace, _) = run_crp_calibrated(llm, &[], Some(calibration)).await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(trace.perplexity_threshold, 2.5);
    assert_eq!(
        trace.threshold_source,
        ThresholdSource::Calibrated {
            accuracy: 0.9,
            held_out_accuracy: 0.85
        }
    );
    assert!(!trace.refused, "perplexity 2 is under the calibrated 2.5");

    // Never calibrated: SmolLM2's value stands in, and the trace says so.
    let llm = ScriptedLlm::new(script().into_iter().take(3).collect()).with_logprobs();
    let (_, trace, _) = run_crp(llm, &[]).await;
    assert_eq!(trace.threshold_source, ThresholdSource::Uncalibrated);
    assert_eq!(trace.perplexity_threshold, 1.5);
    assert!(trace.refused, "perplexity 2 is over 1.5");
    assert!(trace.notes[0].contains("`folio models calibrate` measures this model's"));
}

#[tokio::test]
async fn an_unreadable_calibrations_file_is_a_note_not_a_failed_run() {
    let dir = tempfile::tempdir().unwrap();
    let library = library_with(dir.path(), ADA_NOTES).await;
    std::fs::write(calibrations(&library).path(), "{ not json").unwrap();
    let sure = (0.5f32).ln();
    let llm = ScriptedLlm::new(vec![
        says(&format!("Final: {WHO}\n")),
        says("Ada Lovelace wrote it [1]."),
        says_surely("Ada Lovelace.", &[sure, sure]),
    ])
    .with_logprobs();
    let (run, _) = ask_with(&library, &llm, &AskRequest::new(ADA_QUESTION, "crp-rag")).await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    let trace = match serde_json::from_value(run.trace.unwrap()).unwrap() {
        Trace::CrpRag(t) => t,
        other => panic!("not a CRP-RAG trace: {other:?}"),
    };
    assert_eq!(trace.threshold_source, ThresholdSource::Uncalibrated);
    assert!(
        trace.notes[0].contains("delete the file and calibrate again"),
        "{:?}",
        trace.notes
    );
}

#[tokio::test]
async fn a_backend_without_logprobs_in_the_reply_falls_back_to_self_assessment() {
    let script = vec![
        says(&format!("Final: {WHO}\n")),
        says("Ada Lovelace wrote it [1]."),
        says("Ada Lovelace."),
        says("Maybe."),
    ];
    let (run, trace, _) = run_crp(ScriptedLlm::new(script).with_logprobs(), &[]).await;
    assert!(trace.refused, "an unclear verdict counts as no");
    assert_eq!(run.llm_calls, 4);
    let check = trace.nodes[1].check.as_ref().unwrap();
    assert_eq!(check.test, SufficiencyTest::SelfAssessment);
    assert!(trace
        .notes
        .iter()
        .any(|n| n.contains("no log-probabilities")));
    assert!(trace.notes.iter().any(|n| n.contains("neither yes nor no")));
}

#[tokio::test]
async fn unusable_step_replies_leave_the_question_as_the_only_step() {
    let mut script = vec![says("London, I believe."), says("It is London.")];
    script.extend(known("Ada Lovelace was born in London [1]."));
    script.push(says("London [1]."));
    let (run, trace, prompts) = run_crp(ScriptedLlm::new(script), &[]).await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert!(prompts[1].contains("Your previous reply had no line"));
    assert_eq!(trace.stop, Some(GraphStop::NoNewSteps));
    assert_eq!(trace.nodes.len(), 2);
    assert_eq!(trace.nodes[1].text, ADA_QUESTION);
    assert!(trace.notes.iter().any(|n| n.contains("question itself")));
}

#[tokio::test]
async fn paths_sharing_a_step_reason_it_once_and_differing_answers_are_merged() {
    // 0 → 1 → {2, 3}: two paths that share step 1.
    let mut script = vec![
        says(&format!("Next: {WHO}\n")),
        says("Final: In which city was she born?\nFinal: When was she born?\n"),
    ];
    for summary in ["Ada wrote it [1].", "London [1].", "In 1815 [1]."] {
        script.extend(known(summary));
    }
    script.extend([
        says("Ada Lovelace [1]."),
        says("London [1]."),
        says("1815 [1]."),
        says("London, in 1815 [1]."),
    ]);
    let (run, trace, prompts) =
        run_crp(ScriptedLlm::new(script), &[("merge-threshold", "0.99")]).await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(run.llm_calls, 12);
    assert_eq!(trace.paths.len(), 2);
    assert_eq!(trace.paths[0].results[0], trace.paths[1].results[0]);
    assert_eq!(run.answer.as_deref(), Some("London, in 1815 [1]."));
    let merge_prompt = prompts.last().unwrap();
    assert!(merge_prompt.contains("London [1].") && merge_prompt.contains("1815 [1]."));
}

#[tokio::test]
async fn the_variants_skip_what_the_paper_removed() {
    // no-aggregation: no summary call; the passages are the knowledge.
    let script = vec![
        says(&format!("Final: {WHO}\n")),
        says("Yes."),
        says("Ada Lovelace [1]."),
    ];
    let (run, trace, prompts) =
        run_crp(ScriptedLlm::new(script), &[("variant", "no-aggregation")]).await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert!(trace.nodes[1].knowledge.is_none());
    assert!(prompts[1].contains("[1] "), "{}", prompts[1]);

    // no-evaluation: no check, and the shortest and longest paths.
    let script = vec![
        says(&format!("Final: {WHO}\nNext: {WHERE}\n")),
        says("Final: In which city?\n"),
        says("Ada [1]."),
        says("London [1]."),
        says("A city [1]."),
        says("Ada Lovelace [1]."),
        says("She was born in London [1]."),
        says("In which city? London [1]."),
        says("Ada Lovelace, born in London [1]."),
    ];
    let (run, trace, _) = run_crp(
        ScriptedLlm::new(script),
        &[("variant", "no-evaluation"), ("merge-threshold", "0.99")],
    )
    .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert!(trace.nodes.iter().all(|n| n.check.is_none()));
    let paths: Vec<&[usize]> = trace.paths.iter().map(|p| p.nodes.as_slice()).collect();
    assert_eq!(paths, [&[0, 1][..], &[0, 2, 3][..]]);

    // no-iterative: one call per path, no step results.
    let mut script = vec![
        says(&format!("Next: {WHO}\n")),
        says(&format!("Final: {WHERE}\n")),
    ];
    script.extend(known("Ada [1]."));
    script.extend(known("London [2]."));
    script.push(says("London [2]."));
    let (run, trace, prompts) =
        run_crp(ScriptedLlm::new(script), &[("variant", "no-iterative")]).await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert!(trace.paths[0].results.is_empty());
    assert!(prompts.last().unwrap().contains("step 2"));
}

fn node(id: usize, sufficient: Option<bool>, perplexity: f64) -> ReasoningNode {
    ReasoningNode {
        id,
        text: format!("step {id}"),
        depth: 1,
        is_final: false,
        passages: Vec::new(),
        knowledge: None,
        check: sufficient.map(|sufficient| SufficiencyCheck {
            test: SufficiencyTest::Perplexity,
            reply: String::new(),
            perplexity: Some(perplexity),
            sufficient,
        }),
    }
}

/// 0 → 1 → 3, 0 → 2 → 3, 0 → 2 → 4.
fn diamond(sufficient: [bool; 4], perplexities: [f64; 4]) -> Graph {
    let mut graph = Graph::new("q");
    let parents: [&[usize]; 4] = [&[0], &[0], &[1, 2], &[2]];
    for (i, p) in parents.iter().enumerate() {
        let id = graph.add(
            format!("step {}", i + 1),
            false,
            &p.iter().copied().collect(),
        );
        graph.nodes[id] = node(id, Some(sufficient[i]), perplexities[i]);
    }
    graph
}

#[test]
fn sufficient_paths_are_chosen_most_confident_first() {
    let graph = diamond([true, true, true, true], [3.0, 1.5, 1.5, 1.2]);
    assert!(graph.is_acyclic());
    assert_eq!(graph.paths(), [vec![0, 1, 3], vec![0, 2, 3], vec![0, 2, 4]]);
    assert_eq!(
        select(&graph, CrpRagVariant::CrpRag, 2),
        Selection::Paths(vec![vec![0, 2, 4], vec![0, 2, 3]])
    );
    let graph = diamond([true, false, true, true], [3.0, 9.0, 1.5, 1.2]);
    assert_eq!(
        select(&graph, CrpRagVariant::CrpRag, 5),
        Selection::Paths(vec![vec![0, 1, 3]])
    );
    let graph = diamond([false, false, true, true], [9.0, 9.0, 1.5, 1.2]);
    assert_eq!(
        select(&graph, CrpRagVariant::CrpRag, 5),
        Selection::Refused(vec![1, 2])
    );
}

#[test]
fn paths_that_reach_a_final_step_come_before_more_confident_cut_off_ones() {
    let mut graph = diamond([true; 4], [1.0, 1.0, 3.0, 1.0]);
    graph.nodes[3].is_final = true;
    assert_eq!(
        select(&graph, CrpRagVariant::CrpRag, 3),
        Selection::Paths(vec![vec![0, 1, 3], vec![0, 2, 3], vec![0, 2, 4]])
    );
}

#[test]
fn a_step_joining_complementary_ones_reads_their_sufficient_knowledge() {
    let mut graph = diamond([true, true, true, true], [1.0; 4]);
    for (id, knowledge) in [
        (1, "Evolution was written by Diamond and Weissman."),
        (2, "The Family Man was written by Diamond and Weissman."),
        (3, "Both are theirs."),
    ] {
        graph.nodes[id].knowledge = Some(knowledge.into());
    }
    let along_one = joined_knowledge(&graph, 3, &[0, 1], &[]);
    assert!(along_one.contains("The Family Man") && along_one.contains("Both are theirs."));
    assert!(
        !along_one.contains("Evolution"),
        "the path's own step is already known"
    );
    graph.nodes[2].check.as_mut().unwrap().sufficient = false;
    let without = joined_knowledge(&graph, 3, &[0, 1], &[]);
    assert!(
        !without.contains("The Family Man"),
        "an insufficient step adds nothing"
    );
}

#[test]
fn a_back_edge_is_a_cycle() {
    let mut graph = diamond([true; 4], [1.0; 4]);
    assert!(graph.is_acyclic());
    graph.edges.push(ReasoningEdge { from: 3, to: 1 });
    assert!(!graph.is_acyclic());
    assert_eq!(graph.ancestors(4), [2]);
    assert_eq!(graph.nodes[SOURCE].text, "q");
}
