//! IRCoT's control flow with a scripted model over a real library: each
//! sentence retrieves, a sentence that gives the answer ends the loop, the
//! step cap ends it otherwise, the passage cap bounds what is collected,
//! and the reader answers from every passage with citations.

use super::*;
use crate::runner::AskRequest;
use crate::testing::{ask_with, library_with, reply, says, ScriptedLlm, ADA_NOTES, ADA_QUESTION};
use folio_llm::FinishReason;
use folio_store::{RunRecord, RunStatus};

async fn run_ircot(llm: &ScriptedLlm, options: &[(&str, &str)]) -> (RunRecord, IrcotTrace) {
    let dir = tempfile::tempdir().unwrap();
    let library = library_with(dir.path(), ADA_NOTES).await;
    let mut request = AskRequest::new(ADA_QUESTION, "ircot");
    request.k = Some(1);
    request.max_tokens = Some(64);
    for (name, value) in options {
        request.options.insert(name.to_string(), value.to_string());
    }
    let (run, _) = ask_with(&library, llm, &request).await;
    assert_eq!(llm.unused(), 0, "the script has replies left over");
    let trace = match serde_json::from_value(run.trace.clone().unwrap()).unwrap() {
        Trace::Ircot(t) => t,
        other => panic!("not an IRCoT trace: {other:?}"),
    };
    (run, trace)
}

#[tokio::test]
async fn each_sentence_retrieves_until_one_gives_the_answer() {
    let llm = ScriptedLlm::new(vec![
        says("Ada Lovelace wrote the first algorithm for the Analytical Engine. She was English."),
        says("Ada Lovelace was born in London.\nMore text the step ignores."),
        says("So the answer is: London."),
        says("She was born in London [1]."),
    ]);
    let (run, trace) = run_ircot(&llm, &[]).await;
    assert_eq!(run.status, RunStatus::Done);
    assert_eq!(run.answer.as_deref(), Some("She was born in London [1]."));
    let sentences: Vec<&str> = trace.steps.iter().map(|s| s.sentence.as_str()).collect();
    assert_eq!(
        sentences,
        [
            "Ada Lovelace wrote the first algorithm for the Analytical Engine.",
            "Ada Lovelace was born in London.",
            "So the answer is: London.",
        ]
    );
    assert_eq!(trace.stop, IrcotStop::Answered);
    assert_eq!(trace.first.len(), 1);
    assert!(
        trace.steps[2].found.is_empty(),
        "the answer retrieves nothing"
    );
    let prompts = llm.prompts();
    // Each reasoning step sees the sentences before it, and the passages
    // the earlier sentences found.
    assert!(!prompts[0].contains("Reasoning so far"));
    assert!(prompts[1].contains("first algorithm for the Analytical Engine."));
    assert!(prompts[2].contains("Ada Lovelace was born in London."));
    assert!(prompts[3].contains("Question: "));
    for p in &trace.passages {
        assert!(prompts[3].contains(&format!("number=\"{}\"", p.number)));
    }
    assert_eq!(run.citations.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn the_step_cap_ends_the_reasoning_and_the_reader_still_answers() {
    let llm = ScriptedLlm::new(vec![
        says("Ada Lovelace wrote the first algorithm."),
        says("Babbage designed the Analytical Engine."),
        says("London is in England [1]."),
    ]);
    let (run, trace) = run_ircot(&llm, &[("max-steps", "2")]).await;
    assert_eq!(run.status, RunStatus::Done);
    assert_eq!(trace.steps.len(), 2);
    assert_eq!(trace.stop, IrcotStop::StepCap);
}

#[tokio::test]
async fn the_passage_cap_leaves_later_finds_out_and_says_so() {
    let llm = ScriptedLlm::new(vec![
        says("Charles Babbage designed the Analytical Engine in 1837."),
        says("London lies on the River Thames."),
        says("It is London [1]."),
    ]);
    let (_, trace) = run_ircot(&llm, &[("max-steps", "2"), ("max-passages", "1")]).await;
    assert_eq!(trace.passages.len(), 1);
    assert!(
        trace.notes.iter().any(|n| n.contains("left out")),
        "{:?}",
        trace.notes
    );
    assert!(trace.steps.iter().all(|s| s.new == 0));
}

#[tokio::test]
async fn an_empty_sentence_ends_the_reasoning() {
    let llm = ScriptedLlm::new(vec![
        reply("\n  \n", FinishReason::Stop),
        says("London [1]."),
    ]);
    let (run, trace) = run_ircot(&llm, &[]).await;
    assert_eq!(run.status, RunStatus::Done);
    assert!(trace.steps.is_empty());
    assert_eq!(trace.stop, IrcotStop::NoSentence);
}

#[test]
fn a_sentence_ends_at_its_full_stop_unless_it_gives_the_answer() {
    let said = |text: &str| next_sentence(&says(text).unwrap());
    assert_eq!(
        said("Rust 1.5 is old. Next."),
        Some("Rust 1.5 is old.".into())
    );
    assert_eq!(said("No stop at all"), Some("No stop at all".into()));
    assert_eq!(
        said("So the answer is: St. Ives. Done."),
        Some("So the answer is: St. Ives. Done.".into())
    );
    assert_eq!(said(""), None);
    assert!(gives_the_answer("Thus, the Answer is 4."));
}
