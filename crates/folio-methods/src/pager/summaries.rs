//! The `no-outline` ablation: no page plan. Retrieve, summarise what the
//! passages say about the question, and repeat with a new sub-query until
//! the model judges the summaries sufficient or the budget runs out. The
//! summaries become the page's sections, so trace, app and export treat
//! them like slots.

use super::prompts;
use minijinja::context;

use super::fill::{fallback_query, query_options, record, retrieve, Slot};
use super::page::Section;
use super::{ask_until_usable, page_for_prompt, parse, PagerTrace};
use crate::shown::shown;
use crate::{MethodContext, MethodError, Params};

const SUB_QUERY: &str = "sub-query";
const SUMMARY: &str = "summary";

pub async fn summarise(
    ctx: &MethodContext<'_>,
    question: &str,
    params: &Params,
    trace: &mut PagerTrace,
) -> Result<(), MethodError> {
    for index in 0..trace.slots_max {
        // The first search is the question itself; later ones ask for what
        // the summaries still lack.
        let (sub_query, notes) = if index == 0 {
            (question.to_string(), Vec::new())
        } else {
            let completion = ctx
                .generate_with(
                    SUB_QUERY,
                    &prompts::SUB_QUERY,
                    context!(question, heading => (), page => page_for_prompt(&trace.page)),
                    &query_options(ctx, params, 1),
                )
                .await?;
            let query = parse::sub_query(&completion.text, &fallback_query("More", question));
            (query.value, query.repairs)
        };
        let sources = retrieve(ctx, &sub_query, params, trace).await?;
        let mut slot = Slot::new(index, sub_query.clone(), sources, notes);
        let passages = shown(slot.sources.iter().map(|n| &trace.passages[n - 1]));
        let summaries = page_for_prompt(&trace.page);
        let summary = ask_until_usable(
            ctx,
            SUMMARY,
            &prompts::SUMMARY,
            |retry| context!(question, sub_query, passages, retry, summaries),
            &ctx.options(params),
            parse::summary,
            &mut slot.notes,
        )
        .await?;
        let sufficient = summary.as_ref().is_some_and(|(_, enough)| *enough);
        slot.sufficient = Some(sufficient);
        slot.text = summary.map(|(text, _)| text);
        trace.page.sections.push(Section {
            heading: sub_query,
            body: None,
        });
        record(ctx, trace, slot);
        if sufficient {
            break;
        }
    }
    Ok(())
}
