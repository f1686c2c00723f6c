//! `activerag` (ActiveRAG, ../shared/papers/activerag.md): three agents.
//! Self-inquiry reasons from the model's own knowledge while retrieval runs;
//! knowledge assimilation reads the passages under one of four learning
//! instructions; thought accommodation checks the first reasoning against
//! what was assimilated and answers.

mod prompts;
mod trace;

pub use trace::{ActiveRagAgents, ActiveRagTrace, ActiveRagVariant};

use minijinja::context;

use crate::citations::resolve;
use crate::context::{finished_text, partial_text};
use crate::shown::shown;
use crate::{
    Answer, Method, MethodContext, MethodDefaults, MethodError, MethodInfo, Params, Pick, Trace,
    RETRIEVER,
};
use folio_llm::prompts::{as_document_data, Prompt};
use folio_llm::response_format::{object_schema, one_line, text_schema};
use folio_llm::{FinishReason, GenerateOptions, ReplySchema};

pub struct ActiveRag;

/// The paper's temperature of 0.2 for every model, over the top 5
/// documents its main results use.
const PAPER: MethodDefaults = MethodDefaults {
    k: 5,
    temperature: Some(0.2),
    sampling: None,
};

const VARIANT: Pick<ActiveRagVariant> = Pick {
    name: "variant",
    help: "How the passages are read: association (connect with what the model knows), anchoring (what is new to it), reasoning (chains of facts) or reflection (corrections to trust over its memory).",
    default: ActiveRagVariant::Association,
};

const AGENTS: Pick<ActiveRagAgents> = Pick {
    name: "agents",
    help: "all (the method), or an ablation from the paper: no-assimilation (the last agent reads the passages themselves), no-accommodation (the answer is written from the notes, with no first attempt to correct).",
    default: ActiveRagAgents::All,
};

const SELF_INQUIRY: &str = "self-inquiry";
const ASSIMILATION: &str = "assimilation";
const ACCOMMODATION: &str = "accommodation";
const CONCLUSION: &str = "conclusion";
const ANSWER_LABEL: &str = "answer:";

#[async_trait::async_trait]
impl Method for ActiveRag {
    fn info(&self) -> MethodInfo {
        MethodInfo {
            id: "activerag",
            name: "ActiveRAG",
            summary: "Reasons from the model's own knowledge, has a second agent learn from the retrieved passages, and a third correct the reasoning with what was learnt.",
            retrieves: true,
            defaults: PAPER,
            options: vec![RETRIEVER.declare(), VARIANT.declare(), AGENTS.declare()],
        }
    }

    fn prompts(&self) -> &'static [&'static Prompt] {
        prompts::ALL
    }

    async fn run(
        &self,
        ctx: &MethodContext<'_>,
        question: &str,
        params: &Params,
    ) -> Result<Answer, MethodError> {
        let variant = VARIANT.read(params)?;
        let agents = AGENTS.read(params)?;
        let mut notes = Vec::new();
        let inquire = async {
            if agents == ActiveRagAgents::NoAccommodation {
                return Ok(String::new());
            }
            let thought = ctx
                .generate(
                    SELF_INQUIRY,
                    &prompts::SELF_INQUIRY,
                    context!(question),
                    params,
                )
                .await?;
            partial_text(SELF_INQUIRY, thought, &mut notes)
        };
        let (self_inquiry, passages) = tokio::join!(inquire, ctx.retrieve(question, params));
        let (self_inquiry, passages) = (self_inquiry?, passages?);
        if passages.is_empty() {
            return Err(MethodError::EmptyLibrary);
        }
        let mut trace = ActiveRagTrace {
            variant,
            agents,
            k: params.k,
            passages,
            self_inquiry,
            assimilation: String::new(),
            accommodation: String::new(),
            answer_line_missing: false,
            unknown_citations: Vec::new(),
            notes,
            retrieval: Vec::new(),
        };
        ctx.checkpoint(&Trace::ActiveRag(trace.clone()));

        if agents != ActiveRagAgents::NoAssimilation {
            let completion = ctx
                .generate(
                    ASSIMILATION,
                    &prompts::ASSIMILATE,
                    context!(question, variant, passages => shown(&trace.passages)),
                    params,
                )
                .await?;
            trace.assimilation = partial_text(ASSIMILATION, completion, &mut trace.notes)?;
            ctx.checkpoint(&Trace::ActiveRag(trace.clone()));
        }

        let options = GenerateOptions {
            grammar: Some(answer_line_grammar(params.max_tokens)),
            schema: Some(answer_line_schema(params.max_tokens)),
            ..ctx.options(params)
        };
        let completion = ctx
            .generate_with(
                ACCOMMODATION,
                &prompts::ACCOMMODATE,
                context!(
                    question,
                    variant,
                    thought => as_document_data(&trace.self_inquiry),
                    knowledge => as_document_data(&trace.assimilation),
                    passages => (agents == ActiveRagAgents::NoAssimilation)
                        .then(|| shown(&trace.passages)),
                ),
                &options,
            )
            .await?;
        trace.accommodation = if completion.finish == FinishReason::Length {
            conclude(ctx, question, &completion.text, params, &mut trace.notes).await?
        } else {
            finished_text(ACCOMMODATION, completion, params.max_tokens)?
        };
        let answer = final_answer(&trace.accommodation);
        trace.answer_line_missing = answer.is_none();
        let text = answer.unwrap_or_else(|| trace.accommodation.clone());
        // The short answer rarely repeats the markers; the reasoning above it
        // holds them, and it is what the answer rests on.
        let (citations, unknown) = resolve(&trace.accommodation, &trace.passages);
        trace.unknown_citations = unknown;
        Ok(Answer {
            text,
            citations,
            trace: Trace::ActiveRag(trace),
            cut_off: None,
        })
    }
}

/// Characters a token stands for at the least, in SmolLM2's replies (code,
/// numbers and markup cut into short tokens), to size the reasoning so the
/// answer line always fits.
const CHARS_PER_TOKEN: u32 = 2;
/// Tokens kept for the answer line after the reasoning.
const ANSWER_LINE_TOKENS: u32 = 80;
/// The longest answer line the grammar admits, in characters.
const ANSWER_LINE_CHARS: u32 = 200;

/// A llama.cpp grammar for the accommodation: reasoning short enough to
/// leave room within `max_tokens`, then one "Answer:" line, then the end.
/// Without it a small model often stops without the line, or reasons until
/// `max_tokens` cuts it off before the answer.
fn answer_line_grammar(max_tokens: u32) -> String {
    let reasoning = max_tokens.saturating_sub(ANSWER_LINE_TOKENS).max(20) * CHARS_PER_TOKEN;
    format!(
        "root ::= ([^\\n] | \"\\n\"){{0,{reasoning}}} \"\\nAnswer: \" [^\\n]{{1,{ANSWER_LINE_CHARS}}}\n"
    )
}

/// [`answer_line_grammar`]'s reply as a JSON schema for a server: the
/// reasoning, then the answer line.
fn answer_line_schema(max_tokens: u32) -> ReplySchema {
    let reasoning =
        (max_tokens.saturating_sub(ANSWER_LINE_TOKENS).max(20) * CHARS_PER_TOKEN) as usize;
    ReplySchema {
        schema: object_schema(&[
            ("reasoning", text_schema(0, reasoning)),
            ("answer", text_schema(1, ANSWER_LINE_CHARS as usize)),
        ]),
        to_text: |reply| {
            Some(format!(
                "{}\nAnswer: {}",
                reply["reasoning"].as_str()?.trim(),
                one_line(reply["answer"].as_str()?)
            ))
        },
    }
}

/// Room for the conclusion's answer line: a token writes at least one
/// character of it (all but byte-split text), and the label takes a few.
const CONCLUSION_TOKENS: u32 = ANSWER_LINE_CHARS + 16;

/// The accommodation for a reply cut off at `max_tokens` before its answer
/// line. The grammar bounds the reasoning in characters, and a small model
/// can spend a token a character (a list of years) or repeat itself until
/// the budget runs out. One more call reads the reasoning as written and
/// states where it leads, held to the answer line alone with room for all
/// of it, so the question still gets an answer and the trace says how.
async fn conclude(
    ctx: &MethodContext<'_>,
    question: &str,
    cut: &str,
    params: &Params,
    notes: &mut Vec<String>,
) -> Result<String, MethodError> {
    notes.push(format!(
        "the {ACCOMMODATION} reply reached max_tokens before its answer line; \
         the answer line was asked for from what it had written"
    ));
    let reasoning = without_unfinished_answer_line(cut);
    let options = GenerateOptions {
        max_tokens: CONCLUSION_TOKENS,
        grammar: Some(format!(
            "root ::= \"Answer: \" [^\\n]{{1,{ANSWER_LINE_CHARS}}}\n"
        )),
        schema: Some(ReplySchema {
            schema: object_schema(&[("answer", text_schema(1, ANSWER_LINE_CHARS as usize))]),
            to_text: |reply| Some(format!("Answer: {}", one_line(reply["answer"].as_str()?))),
        }),
        ..ctx.options(params)
    };
    let completion = ctx
        .generate_with(
            CONCLUSION,
            &prompts::CONCLUDE,
            context!(question, reasoning => as_document_data(reasoning)),
            &options,
        )
        .await?;
    let line = finished_text(CONCLUSION, completion, CONCLUSION_TOKENS)?;
    Ok(format!("{reasoning}\n{line}"))
}

/// `reply` without a last "Answer:" line, which a cut leaves unfinished.
fn without_unfinished_answer_line(reply: &str) -> &str {
    let reply = reply.trim();
    match reply.rsplit_once('\n') {
        Some((before, last)) if after_label(last).is_some() => before.trim_end(),
        _ => reply,
    }
}

/// The text after the last line that starts with "Answer:", if any.
pub fn final_answer(reply: &str) -> Option<String> {
    let line = reply.lines().rev().find_map(after_label)?;
    (!line.is_empty()).then(|| line.to_string())
}

/// What follows `line`'s "Answer:" label, if it starts with one (after any
/// markdown emphasis or heading marks).
fn after_label(line: &str) -> Option<&str> {
    let bare = line.trim().trim_start_matches(['*', '#', ' ']);
    bare.get(..ANSWER_LABEL.len())
        .filter(|p| p.eq_ignore_ascii_case(ANSWER_LABEL))
        .map(|_| bare[ANSWER_LABEL.len()..].trim().trim_matches('*').trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use folio_llm::FinishReason;

    #[test]
    fn a_schema_accommodation_reads_as_reasoning_then_the_answer_line() {
        let held = answer_line_schema(200);
        assert_eq!(held.schema["properties"]["reasoning"]["maxLength"], 240);
        let text = (held.to_text)(&serde_json::json!({
            "reasoning": "Ownership moves the value.",
            "answer": "It is\nmoved."
        }))
        .unwrap();
        assert_eq!(final_answer(&text).as_deref(), Some("It is moved."));
    }
    use crate::runner::AskRequest;
    use crate::testing::{
        ask_with, library_with, reply, says, ScriptedLlm, ADA_NOTES, ADA_QUESTION,
    };
    use folio_store::RunStatus;

    const THOUGHT: &str = "I think it was Ada Lovelace, born in Paris.\nAnswer: Paris";

    async fn run_activerag(
        variant: &str,
        thought: folio_llm::Result<folio_llm::Completion>,
        accommodation: &str,
    ) -> (folio_store::RunRecord, ActiveRagTrace, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let library = library_with(dir.path(), ADA_NOTES).await;
        let llm = ScriptedLlm::new(vec![
            thought,
            says("Ada Lovelace was born in London [1]."),
            says(accommodation),
        ]);
        let mut request = AskRequest::new(ADA_QUESTION, "activerag");
        request.options.insert("variant".into(), variant.into());
        let (run, _) = ask_with(&library, &llm, &request).await;
        let trace = match serde_json::from_value(run.trace.clone().unwrap()).unwrap() {
            Trace::ActiveRag(t) => t,
            other => panic!("not an ActiveRAG trace: {other:?}"),
        };
        (run, trace, llm.prompts())
    }

    #[tokio::test]
    async fn three_agents_in_order_and_the_answer_line_is_the_answer() {
        let (run, trace, prompts) = run_activerag(
            "reflection",
            says(THOUGHT),
            "Paris was wrong; the notes say London [1].\nAnswer: London",
        )
        .await;
        assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
        assert_eq!(run.llm_calls, 3);
        assert_eq!(run.answer.as_deref(), Some("London"));
        assert_eq!(trace.variant, ActiveRagVariant::Reflection);
        assert!(trace.self_inquiry.contains("Paris"));
        assert!(trace.assimilation.contains("London [1]"));
        assert!(!trace.answer_line_missing);
        assert!(
            !prompts[0].contains("<document"),
            "self-inquiry sees no sources"
        );
        assert!(
            prompts[1].contains("fact-checker") && prompts[1].contains("<document number=\"1\"")
        );
        assert!(prompts[2].contains("born in Paris") && prompts[2].contains("London [1]"));
        let cited = trace.passages.iter().find(|p| p.number == 1).unwrap();
        assert_eq!(run.citations[0]["path"], cited.path.as_str());
    }

    #[tokio::test]
    async fn without_an_answer_line_the_whole_reply_answers() {
        let (run, trace, prompts) =
            run_activerag("association", says(THOUGHT), "It was London [1].").await;
        assert_eq!(run.answer.as_deref(), Some("It was London [1]."));
        assert!(trace.answer_line_missing);
        assert!(!prompts[1].contains("fact-checker"));
    }

    #[tokio::test]
    async fn a_cut_off_chain_of_thought_is_kept_and_noted() {
        let cut = reply("I think it was Ada Lovelace, born in", FinishReason::Length);
        let (run, trace, prompts) = run_activerag("anchoring", cut, "Answer: London").await;
        assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
        assert_eq!(trace.self_inquiry, "I think it was Ada Lovelace, born in");
        assert!(prompts[2].contains("born in"));
        assert_eq!(
            trace.notes,
            ["the self-inquiry reply reached max_tokens; what it had written was used"]
        );
    }

    #[tokio::test]
    async fn a_cut_off_accommodation_is_concluded_by_one_more_call() {
        let dir = tempfile::tempdir().unwrap();
        let library = library_with(dir.path(), ADA_NOTES).await;
        let llm = ScriptedLlm::new(vec![
            says(THOUGHT),
            says("Ada Lovelace was born in London [1]."),
            reply(
                "Paris was wrong [1]: 1815, 1815, 1815, 1815\nAnswer: Lon",
                FinishReason::Length,
            ),
            says("Answer: London"),
        ]);
        let (run, _) = ask_with(&library, &llm, &AskRequest::new(ADA_QUESTION, "activerag")).await;
        assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
        assert_eq!(run.llm_calls, 4);
        assert_eq!(run.answer.as_deref(), Some("London"));
        let prompts = llm.prompts();
        assert!(
            prompts[3].contains("1815, 1815\n</document>"),
            "the conclusion reads the reasoning without the cut answer line: {}",
            prompts[3]
        );
        let Trace::ActiveRag(trace) = serde_json::from_value(run.trace.unwrap()).unwrap() else {
            panic!("not an ActiveRAG trace")
        };
        assert_eq!(
            trace.accommodation,
            "Paris was wrong [1]: 1815, 1815, 1815, 1815\nAnswer: London"
        );
        assert!(!trace.answer_line_missing);
        assert!(trace.notes[0].contains("reached max_tokens before its answer line"));
        assert_eq!(run.citations.as_array().unwrap().len(), 1);
    }

    /// An ablation's run: the agents it keeps, in order, with these replies.
    async fn ablated(
        agents: &str,
        replies: &[&str],
    ) -> (folio_store::RunRecord, ActiveRagTrace, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let library = library_with(dir.path(), ADA_NOTES).await;
        let llm = ScriptedLlm::new(replies.iter().map(|r| says(r)).collect());
        let mut request = AskRequest::new(ADA_QUESTION, "activerag");
        request.options.insert("agents".into(), agents.into());
        let (run, _) = ask_with(&library, &llm, &request).await;
        assert_eq!(llm.unused(), 0, "the script had replies left");
        let trace = match serde_json::from_value(run.trace.clone().unwrap()).unwrap() {
            Trace::ActiveRag(t) => t,
            other => panic!("not an ActiveRAG trace: {other:?}"),
        };
        (run, trace, llm.prompts())
    }

    #[tokio::test]
    async fn without_assimilation_the_last_agent_reads_the_passages() {
        let (run, trace, prompts) = ablated(
            "no-assimilation",
            &[THOUGHT, "Paris was wrong: London [1].\nAnswer: London"],
        )
        .await;
        assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
        assert_eq!(run.llm_calls, 2, "self-inquiry and accommodation");
        assert_eq!(run.answer.as_deref(), Some("London"));
        assert_eq!(trace.agents, ActiveRagAgents::NoAssimilation);
        assert!(trace.assimilation.is_empty());
        assert!(
            prompts[1].contains("born in Paris"),
            "the first attempt is corrected"
        );
        assert!(
            prompts[1].contains("<document number=\"1\"")
                && !prompts[1].contains("notes from passages"),
            "{}",
            prompts[1]
        );
        assert_eq!(run.citations.as_array().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn without_accommodation_the_answer_comes_from_the_notes_alone() {
        let (run, trace, prompts) = ablated(
            "no-accommodation",
            &[
                "Ada Lovelace was born in London [1].",
                "The notes say London [1].\nAnswer: London",
            ],
        )
        .await;
        assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
        assert_eq!(
            run.llm_calls, 2,
            "assimilation and the answer; no self-inquiry"
        );
        assert_eq!(run.answer.as_deref(), Some("London"));
        assert_eq!(trace.agents, ActiveRagAgents::NoAccommodation);
        assert!(trace.self_inquiry.is_empty());
        assert!(
            prompts[0].contains("<document number=\"1\""),
            "assimilation reads the passages"
        );
        assert!(
            prompts[1].contains("born in London [1]") && !prompts[1].contains("first attempt"),
            "{}",
            prompts[1]
        );
    }

    #[test]
    fn the_grammar_leaves_room_for_the_answer_line() {
        assert_eq!(
            answer_line_grammar(256),
            "root ::= ([^\\n] | \"\\n\"){0,352} \"\\nAnswer: \" [^\\n]{1,200}\n"
        );
        assert!(answer_line_grammar(16).contains("{0,40}"));
    }

    #[test]
    fn the_answer_is_the_last_answer_line() {
        assert_eq!(
            final_answer("Step 1.\nAnswer: draft\nMore.\n**Answer:** Paris [2]"),
            Some("Paris [2]".into())
        );
        assert_eq!(
            final_answer("answer: lower case"),
            Some("lower case".into())
        );
        assert_eq!(final_answer("No label here."), None);
        assert_eq!(final_answer("Answer:   "), None);
        assert_eq!(
            without_unfinished_answer_line("Why.\n**Answer:** Par"),
            "Why."
        );
        assert_eq!(without_unfinished_answer_line("Why.\nAnswer:"), "Why.");
        assert_eq!(
            without_unfinished_answer_line("Why.\nBecause"),
            "Why.\nBecause"
        );
    }
}
