//! `pager` (PAGER, ../shared/papers/pager.md): the model first outlines a
//! page for the question, one empty slot per section; then each slot in
//! turn gets a sub-query written from the page so far, its own retrieval,
//! and a short evidence paragraph; the answer is read off the finished page.
//! The paper's ablations are variants: `parallel`, `no-iter`, `no-outline`.

mod fill;
mod page;
pub mod parse;
mod prompts;
mod summaries;
mod trace;

use minijinja::{context, Value as Vars};

pub use page::{Page, Section};
pub use trace::{PagerStep, PagerTrace, PagerVariant};

use self::parse::{Repaired, ReplyError};
use super::context::note_if_cut_off;
use super::{
    Answer, Count, Method, MethodContext, MethodDefaults, MethodError, MethodInfo, Params, Pick,
    Trace, RETRIEVER,
};
use folio_llm::prompts::{as_document_data, Prompt};
use folio_llm::{GenerateOptions, Sampling};

pub struct Pager;

/// The paper's sampling for every call (its A.2: temperature 0.7, top-p
/// 0.8, top-k 20) and its top-5 documents per retrieval.
const PAPER: MethodDefaults = MethodDefaults {
    k: 5,
    temperature: Some(0.7),
    sampling: Some(Sampling {
        top_p: 0.8,
        top_k: 20,
    }),
};

const OUTLINE: &str = "outline";
const ANSWER: &str = crate::ANSWER_STEP;
const VARIANT: Pick<PagerVariant> = Pick {
    name: "variant",
    help: "iterative (the method), or an ablation from the paper: parallel (all sub-queries at once), no-iter (one retrieval for the question), no-outline (summaries instead of a page).",
    default: PagerVariant::Iterative,
};
const SLOTS_MAX: Count = Count {
    name: "slots-max",
    help: "Most sections the page may have (no-outline: most summaries).",
    // The paper's pages mostly have three to five slots.
    default: 5,
    min: 1,
    max: Some(12),
};

#[async_trait::async_trait]
impl Method for Pager {
    fn info(&self) -> MethodInfo {
        MethodInfo {
            id: "pager",
            name: "PAGER",
            summary: "Outlines a page for the question, fills one section at a time with evidence retrieved for it, and answers from the page.",
            retrieves: true,
            defaults: PAPER,
            options: vec![RETRIEVER.declare(), VARIANT.declare(), SLOTS_MAX.declare()],
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
        let slots_max = SLOTS_MAX.read(params)?;
        let mut trace = PagerTrace {
            variant,
            slots_max,
            k: params.k,
            reasoning: String::new(),
            outline: Page::new(question.trim(), Vec::new()),
            outline_notes: Vec::new(),
            steps: Vec::new(),
            page: Page::new(question.trim(), Vec::new()),
            passages: Vec::new(),
            unknown_citations: Vec::new(),
            retrieval: Vec::new(),
        };
        if variant == PagerVariant::NoOutline {
            summaries::summarise(ctx, question, params, &mut trace).await?;
        } else {
            outline(ctx, question, params, &mut trace).await?;
            match variant {
                PagerVariant::Iterative => {
                    fill::iteratively(ctx, question, params, &mut trace).await?
                }
                PagerVariant::Parallel => {
                    fill::in_parallel(ctx, question, params, &mut trace).await?
                }
                PagerVariant::NoIter => {
                    fill::from_one_retrieval(ctx, question, params, &mut trace).await?
                }
                PagerVariant::NoOutline => unreachable!("handled above"),
            }
        }
        answer(ctx, question, params, trace).await
    }
}

async fn outline(
    ctx: &MethodContext<'_>,
    question: &str,
    params: &Params,
    trace: &mut PagerTrace,
) -> Result<(), MethodError> {
    let slots_max = trace.slots_max;
    let size = parse::OutlineSize::within(params.max_tokens);
    let parsed = ask_until_usable(
        ctx,
        OUTLINE,
        &prompts::OUTLINE,
        |retry| context!(question, retry),
        &GenerateOptions {
            grammar: Some(parse::outline_grammar(size)),
            schema: Some(parse::outline_schema(size)),
            ..ctx.options(params)
        },
        |reply| parse::outline(reply, question, slots_max, size.heading),
        &mut trace.outline_notes,
    )
    .await?;
    let (reasoning, page) = parsed.unwrap_or_else(|| {
        trace.outline_notes.push(
            "no usable outline in two replies; the question became the page's only section".into(),
        );
        (
            String::new(),
            Page::new(question.trim(), vec![question.trim().to_string()]),
        )
    });
    trace.reasoning = reasoning;
    trace.outline = page.clone();
    trace.page = page;
    ctx.checkpoint(&Trace::Pager(trace.clone()));
    Ok(())
}

async fn answer(
    ctx: &MethodContext<'_>,
    question: &str,
    params: &Params,
    mut trace: PagerTrace,
) -> Result<Answer, MethodError> {
    let vars = context!(question, page => page_for_prompt(&trace.page));
    let answer = ctx
        .cited_answer(ANSWER, &prompts::ANSWER, vars, params, &trace.passages)
        .await?;
    trace.unknown_citations = answer.unknown;
    Ok(Answer {
        text: answer.text,
        citations: answer.citations,
        trace: Trace::Pager(trace),
        cut_off: answer.cut_off,
    })
}

/// The page as a prompt shows it: written by the model from documents, so
/// it is data, and cannot close the delimiter it is placed in.
fn page_for_prompt(page: &Page) -> String {
    as_document_data(&page.markdown())
}

/// Asks for `step`, and once more (with `retry` set, so the prompt can be
/// firmer) when the reply cannot be used. Every repair, cut-off and
/// rejected reply lands in `notes`; `None` means both replies were unusable.
async fn ask_until_usable<T>(
    ctx: &MethodContext<'_>,
    step: &'static str,
    prompt: &'static Prompt,
    vars: impl Fn(bool) -> Vars,
    options: &GenerateOptions,
    parse: impl Fn(&str) -> Result<Repaired<T>, ReplyError>,
    notes: &mut Vec<String>,
) -> Result<Option<T>, MethodError> {
    for retry in [false, true] {
        let completion = ctx
            .generate_with(step, prompt, vars(retry), options)
            .await?;
        note_if_cut_off(step, &completion, notes);
        match parse(&completion.text) {
            Ok(parsed) => {
                notes.extend(parsed.repairs);
                return Ok(Some(parsed.value));
            }
            Err(e) => notes.push(format!(
                "rejected the {step} reply: {e}{}",
                if retry { "" } else { "; asked again" }
            )),
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
