//! Filling the outline's slots: one at a time with a sub-query each (the
//! method), all at once (`parallel`), or from one retrieval for the
//! question (`no-iter`). Each filled slot is one step in the trace.

use super::prompts;
use std::collections::HashSet;

use minijinja::context;

use super::page::Page;
use super::parse;
use super::{ask_until_usable, page_for_prompt, PagerStep, PagerTrace};
use crate::shown::{pool, shown};
use crate::{MethodContext, MethodError, Params, Passage, Trace};
use folio_llm::GenerateOptions;

const SUB_QUERY: &str = "sub-query";
const SUB_QUERIES: &str = "sub-queries";
const FILL: &str = "fill";
/// What a slot says when no usable text came back for it.
pub const UNFILLED: &str = "_No usable evidence was written for this section._";

pub async fn iteratively(
    ctx: &MethodContext<'_>,
    question: &str,
    params: &Params,
    trace: &mut PagerTrace,
) -> Result<(), MethodError> {
    while let Some(slot) = trace.page.first_empty() {
        let heading = trace.page.sections[slot].heading.clone();
        let completion = ctx
            .generate_with(
                SUB_QUERY,
                &prompts::SUB_QUERY,
                context!(question, heading, page => page_for_prompt(&trace.page)),
                &query_options(ctx, params, 1),
            )
            .await?;
        let query = parse::sub_query(&completion.text, &fallback_query(&heading, question));
        let sources = retrieve(ctx, &query.value, params, trace).await?;
        let request = Slot::new(slot, query.value, sources, query.repairs);
        let filled =
            fill_slot(ctx, question, params, &trace.page, &trace.passages, request).await?;
        record(ctx, trace, filled);
    }
    Ok(())
}

pub async fn in_parallel(
    ctx: &MethodContext<'_>,
    question: &str,
    params: &Params,
    trace: &mut PagerTrace,
) -> Result<(), MethodError> {
    let headings: Vec<String> = trace
        .page
        .sections
        .iter()
        .map(|s| s.heading.clone())
        .collect();
    let completion = ctx
        .generate_with(
            SUB_QUERIES,
            &prompts::SUB_QUERIES,
            context!(question, headings, page => page_for_prompt(&trace.page)),
            &query_options(ctx, params, headings.len()),
        )
        .await?;
    let fallbacks: Vec<String> = headings
        .iter()
        .map(|h| fallback_query(h, question))
        .collect();
    let queries = parse::sub_queries(&completion.text, &fallbacks);
    trace
        .outline_notes
        .extend(queries.repairs.iter().map(|r| format!("sub-queries: {r}")));
    let mut slots = Vec::with_capacity(queries.value.len());
    for (slot, query) in queries.value.into_iter().enumerate() {
        let sources = retrieve(ctx, &query, params, trace).await?;
        slots.push(Slot::new(slot, query, sources, Vec::new()));
    }
    // Every fill sees the first page: the slots are filled at once.
    let (page, passages) = (&trace.page, &trace.passages);
    let fills = futures::future::try_join_all(
        slots
            .into_iter()
            .map(|slot| fill_slot(ctx, question, params, page, passages, slot)),
    )
    .await?;
    for filled in fills {
        record(ctx, trace, filled);
    }
    Ok(())
}

pub async fn from_one_retrieval(
    ctx: &MethodContext<'_>,
    question: &str,
    params: &Params,
    trace: &mut PagerTrace,
) -> Result<(), MethodError> {
    let sources = retrieve(ctx, question, params, trace).await?;
    while let Some(slot) = trace.page.first_empty() {
        let request = Slot::new(slot, question.to_string(), sources.clone(), Vec::new());
        let filled =
            fill_slot(ctx, question, params, &trace.page, &trace.passages, request).await?;
        record(ctx, trace, filled);
    }
    Ok(())
}

/// One slot on its way to being filled: what it searched with and found,
/// then the text (`None` when no usable reply came back) and every note.
pub struct Slot {
    pub index: usize,
    pub sub_query: String,
    /// Numbers of the passages retrieved for this slot, best first.
    pub sources: Vec<usize>,
    pub text: Option<String>,
    pub notes: Vec<String>,
    pub sufficient: Option<bool>,
}

impl Slot {
    pub fn new(index: usize, sub_query: String, sources: Vec<usize>, notes: Vec<String>) -> Slot {
        Slot {
            index,
            sub_query,
            sources,
            text: None,
            notes,
            sufficient: None,
        }
    }
}

/// Asks the model to write `slot` of `page` from the slot's passages.
async fn fill_slot(
    ctx: &MethodContext<'_>,
    question: &str,
    params: &Params,
    page: &Page,
    pool: &[Passage],
    mut slot: Slot,
) -> Result<Slot, MethodError> {
    let heading = &page.sections[slot.index].heading;
    // The paper's last section may state the answer the page builds up to.
    let last = slot.index + 1 == page.sections.len();
    let passages = shown(slot.sources.iter().map(|n| &pool[n - 1]));
    let sub_query = slot.sub_query.as_str();
    slot.text = ask_until_usable(
        ctx,
        FILL,
        &prompts::FILL,
        |retry| {
            context!(question, sub_query, heading, passages, last, retry, page => page_for_prompt(page))
        },
        &ctx.options(params),
        |reply| parse::fill(reply, page, slot.index),
        &mut slot.notes,
    )
    .await?;
    Ok(slot)
}

/// The run's settings with the reply held to `lines` queries.
pub fn query_options(ctx: &MethodContext<'_>, params: &Params, lines: usize) -> GenerateOptions {
    GenerateOptions {
        grammar: Some(parse::sub_queries_grammar(lines)),
        schema: Some(parse::sub_queries_schema(lines)),
        ..ctx.options(params)
    }
}

/// Retrieves for `query` into the trace's passage pool; returns the numbers
/// of what was found.
pub async fn retrieve(
    ctx: &MethodContext<'_>,
    query: &str,
    params: &Params,
    trace: &mut PagerTrace,
) -> Result<Vec<usize>, MethodError> {
    let found = ctx.retrieve(query, params).await?;
    if found.is_empty() && trace.passages.is_empty() {
        return Err(MethodError::EmptyLibrary);
    }
    Ok(pool(&mut trace.passages, found))
}

/// Writes a filled slot into the page and its step into the trace, then
/// checkpoints, which also shows the page so far to whoever is watching.
pub fn record(ctx: &MethodContext<'_>, trace: &mut PagerTrace, slot: Slot) {
    let failed = slot.text.is_none();
    let text = slot.text.unwrap_or_else(|| UNFILLED.to_string());
    trace.page.sections[slot.index].body = Some(text.clone());
    let earlier: HashSet<usize> = trace
        .steps
        .iter()
        .flat_map(|s| s.sources.iter().copied())
        .collect();
    let overlap = (!trace.steps.is_empty()).then(|| jaccard(&slot.sources, &earlier));
    trace.steps.push(PagerStep {
        slot: slot.index,
        heading: trace.page.sections[slot.index].heading.clone(),
        sub_query: slot.sub_query,
        sources: slot.sources,
        text,
        notes: slot.notes,
        failed,
        overlap,
        sufficient: slot.sufficient,
        page_after: trace.page.markdown(),
    });
    ctx.checkpoint(&Trace::Pager(trace.clone()));
}

fn jaccard(these: &[usize], earlier: &HashSet<usize>) -> f64 {
    let these: HashSet<usize> = these.iter().copied().collect();
    let union = these.union(earlier).count();
    if union == 0 {
        0.0
    } else {
        these.intersection(earlier).count() as f64 / union as f64
    }
}

/// What a slot searches with when the model wrote no usable sub-query.
pub fn fallback_query(heading: &str, question: &str) -> String {
    format!("{heading}: {question}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jaccard_measures_overlap_with_everything_before() {
        let earlier = [1, 2, 3].into_iter().collect();
        assert_eq!(jaccard(&[3, 4], &earlier), 0.25);
        assert_eq!(jaccard(&[1, 2, 3], &earlier), 1.0);
        assert_eq!(jaccard(&[], &Default::default()), 0.0);
    }
}
