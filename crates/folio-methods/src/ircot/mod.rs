//! `ircot` (IRCoT, Trivedi et al., ACL 2023): retrieve k passages for the
//! question, then alternate two steps: write the next sentence of a chain
//! of thought from the question, every passage collected so far and the
//! sentences before it; retrieve k more passages with that sentence as the
//! query. The loop ends when a sentence says "the answer is" or at the step
//! cap, and a reader answers from all the passages collected, which the
//! paper caps at 15. The standard iterative multi-hop baseline.

mod prompts;
#[cfg(test)]
mod tests;
mod trace;

use minijinja::context;

pub use trace::{IrcotStep, IrcotStop, IrcotTrace};

use super::context::note_if_cut_off;
use super::shown::{pool, shown};
use super::{
    Answer, Count, Method, MethodContext, MethodDefaults, MethodError, MethodInfo, Params, Passage,
    Trace, RETRIEVER,
};
use folio_llm::prompts::{as_document_data, Prompt};
use folio_llm::response_format::{object_schema, one_line, text_schema};
use folio_llm::{Completion, GenerateOptions, ReplySchema};

pub struct Ircot;

/// Greedy decoding, as the paper's; it picks k from {2, 4, 6, 8} per
/// dataset, and 4 is the middle of that range.
const PAPER: MethodDefaults = MethodDefaults {
    k: 4,
    temperature: Some(0.0),
    sampling: None,
};

const MAX_STEPS: Count = Count {
    name: "max-steps",
    help: "Most sentences of reasoning, each followed by a retrieval.",
    // The paper stops after eight.
    default: 8,
    min: 1,
    max: Some(20),
};
const MAX_PASSAGES: Count = Count {
    name: "max-passages",
    help: "Most passages collected over all retrievals; later finds are left out.",
    // The paper's cap.
    default: 15,
    min: 1,
    max: Some(50),
};

const REASON: &str = "reason";
const ANSWER: &str = "answer";
/// A sentence of reasoning: one line, this long at most.
const SENTENCE_CHARS: usize = 300;
const SENTENCE_TOKENS: u32 = 96;
/// Tokens a prompt keeps for its instructions, the question and the
/// reasoning, beside the passages and the reply.
const PROMPT_ROOM: u32 = 700;
/// The characters a token stands for at least, in prose and code.
const CHARS_PER_TOKEN: usize = 3;

#[async_trait::async_trait]
impl Method for Ircot {
    fn info(&self) -> MethodInfo {
        MethodInfo {
            id: "ircot",
            name: "IRCoT",
            summary: "Reasons one sentence at a time, retrieving k more passages with each sentence as the query, until a sentence gives the answer or the step cap; then answers from every passage collected.",
            retrieves: true,
            defaults: PAPER,
            options: vec![RETRIEVER.declare(), MAX_STEPS.declare(), MAX_PASSAGES.declare()],
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
        let first = ctx.retrieve(question, params).await?;
        if first.is_empty() {
            return Err(MethodError::EmptyLibrary);
        }
        let mut trace = IrcotTrace {
            k: params.k,
            max_steps: MAX_STEPS.read(params)?,
            max_passages: MAX_PASSAGES.read(params)?,
            first: Vec::new(),
            steps: Vec::new(),
            stop: IrcotStop::StepCap,
            passages: Vec::new(),
            unknown_citations: Vec::new(),
            notes: Vec::new(),
            retrieval: Vec::new(),
        };
        let mut collection = Collection::new(ctx.model_context(), params.max_tokens);
        trace.first = collection.add(&mut trace.passages, first, trace.max_passages);
        collection.note_left_out("the question", &mut trace.notes);
        ctx.checkpoint(&Trace::Ircot(trace.clone()));

        while trace.steps.len() < trace.max_steps {
            let vars = context!(
                question,
                passages => shown(&trace.passages),
                thoughts => trace.steps.iter().map(|s| as_document_data(&s.sentence)).collect::<Vec<_>>(),
            );
            let reply = ctx
                .generate_with(
                    REASON,
                    &prompts::REASON,
                    vars,
                    &sentence_options(ctx, params),
                )
                .await?;
            note_if_cut_off(REASON, &reply, &mut trace.notes);
            let Some(sentence) = next_sentence(&reply) else {
                trace.stop = IrcotStop::NoSentence;
                break;
            };
            if gives_the_answer(&sentence) {
                trace.steps.push(IrcotStep {
                    sentence,
                    found: Vec::new(),
                    new: 0,
                });
                trace.stop = IrcotStop::Answered;
                break;
            }
            let found = ctx.retrieve(&sentence, params).await?;
            let before = trace.passages.len();
            let found = collection.add(&mut trace.passages, found, trace.max_passages);
            collection.note_left_out(&format!("step {}", trace.steps.len() + 1), &mut trace.notes);
            trace.steps.push(IrcotStep {
                sentence,
                found,
                new: trace.passages.len() - before,
            });
            ctx.checkpoint(&Trace::Ircot(trace.clone()));
        }
        ctx.checkpoint(&Trace::Ircot(trace.clone()));

        let reasoning: Vec<&str> = trace.steps.iter().map(|s| s.sentence.as_str()).collect();
        let vars = context!(
            question,
            passages => shown(&trace.passages),
            reasoning => as_document_data(&reasoning.join("\n")),
        );
        let answer = ctx
            .cited_answer(ANSWER, &prompts::ANSWER, vars, params, &trace.passages)
            .await?;
        trace.unknown_citations = answer.unknown;
        Ok(Answer {
            text: answer.text,
            citations: answer.citations,
            trace: Trace::Ircot(trace),
            cut_off: answer.cut_off,
        })
    }
}

/// The run's settings for a reasoning step: one line of at most
/// [`SENTENCE_CHARS`], on backends that take a grammar or a schema.
fn sentence_options(ctx: &MethodContext<'_>, params: &Params) -> GenerateOptions {
    GenerateOptions {
        max_tokens: SENTENCE_TOKENS.min(params.max_tokens),
        grammar: Some(format!("root ::= [^\\n]{{1,{SENTENCE_CHARS}}}\n")),
        schema: Some(ReplySchema {
            schema: object_schema(&[("sentence", text_schema(1, SENTENCE_CHARS))]),
            to_text: |reply| reply["sentence"].as_str().map(one_line),
        }),
        ..ctx.options(params)
    }
}

/// The reply's first sentence; a line that gives the answer is kept whole,
/// since the answer may hold full stops of its own.
fn next_sentence(reply: &Completion) -> Option<String> {
    let line = reply.text.lines().map(str::trim).find(|l| !l.is_empty())?;
    if gives_the_answer(line) {
        return Some(line.to_string());
    }
    let end = line
        .char_indices()
        .find(|&(i, c)| {
            matches!(c, '.' | '?' | '!')
                && line[i + c.len_utf8()..]
                    .chars()
                    .next()
                    .is_none_or(char::is_whitespace)
        })
        .map_or(line.len(), |(i, c)| i + c.len_utf8());
    Some(line[..end].trim().to_string())
}

/// The paper's end of the chain: a sentence that says "the answer is".
fn gives_the_answer(sentence: &str) -> bool {
    sentence.to_lowercase().contains("answer is")
}

/// The passages collected so far, bounded by the passage cap and by the
/// share of the model's context they may fill.
struct Collection {
    budget_chars: usize,
    used_chars: usize,
    left_out: usize,
}

impl Collection {
    fn new(context_tokens: u32, max_tokens: u32) -> Collection {
        let room = context_tokens.saturating_sub(max_tokens.max(SENTENCE_TOKENS) + PROMPT_ROOM);
        Collection {
            budget_chars: room as usize * CHARS_PER_TOKEN,
            used_chars: 0,
            left_out: 0,
        }
    }

    /// Adds `found` to `passages` as [`pool`] does (every chunk has one
    /// number however often it is found) and returns the numbers in rank
    /// order. A new passage past `max` or past the budget is left out (the
    /// first one in is always kept, so the reader has something to read).
    fn add(&mut self, passages: &mut Vec<Passage>, found: Vec<Passage>, max: usize) -> Vec<usize> {
        let mut collected = passages.len();
        let admitted: Vec<Passage> = found
            .into_iter()
            .filter(|p| {
                if passages.iter().any(|q| q.chunk_id == p.chunk_id) {
                    return true;
                }
                let fits = self.used_chars + p.text.len() <= self.budget_chars;
                if collected >= max || (!fits && collected > 0) {
                    self.left_out += 1;
                    return false;
                }
                self.used_chars += p.text.len();
                collected += 1;
                true
            })
            .collect();
        pool(passages, admitted)
    }

    /// Says in `notes` how many passages the last retrieval found that did
    /// not fit, if any.
    fn note_left_out(&mut self, retrieval: &str, notes: &mut Vec<String>) {
        if self.left_out > 0 {
            notes.push(format!(
                "{} passage(s) {retrieval} retrieved were left out: the collection was full",
                self.left_out
            ));
            self.left_out = 0;
        }
    }
}
