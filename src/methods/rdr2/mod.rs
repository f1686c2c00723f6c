//! `rdr2` (RDR², ../shared/papers/rdr2.md): retrieve chunks, then route
//! through each retrieved document's structure tree, where a router
//! selects passages, unfolds headings or refuses, and answer from the
//! selected passages. The paper fine-tunes its router; Folio prompts the
//! configured model with few-shot examples instead (prompts/rdr2/route.j2).
//! The paper's ablations are variants: `no-structure`, `no-expand`.

pub mod parse;
mod read;
mod route;
mod subtree;
mod trace;
mod units;
mod view;

use std::sync::Mutex;

use futures::future::try_join_all;

pub use trace::{
    ActionKind, IgnoredAction, Rdr2Trace, Rdr2Variant, Route, RouteAction, RouteNode, RouteOutcome,
    RouteStep,
};

use super::{
    Answer, Count, Method, MethodContext, MethodError, MethodInfo, Params, Pick, Trace, RETRIEVER,
};

pub struct Rdr2;

const VARIANT: Pick<Rdr2Variant> = Pick {
    name: "variant",
    help: "full (the method), or an ablation from the paper: no-structure (each passage accepted or refused alone), no-expand (one routing turn, no headings opened).",
    default: Rdr2Variant::Full,
};
const EXPAND_ITER: Count = Count {
    name: "expand-iter",
    help: "Most routing turns that open headings, per document (0: select or refuse only).",
    default: 5,
    min: 0,
    max: Some(20),
};
const BUDGET_TOKENS: Count = Count {
    name: "budget-tokens",
    help: "Size of a document's tree as the router sees it, and of the passages the reader gets, in tokens.",
    // About the paper's routing turn (+0.8k input tokens).
    default: 1000,
    // Less cannot show a heading path and one passage.
    min: 100,
    max: None,
};
/// The characters a token stands for, near enough, in English prose.
const CHARS_PER_TOKEN: usize = 4;

#[async_trait::async_trait]
impl Method for Rdr2 {
    fn info(&self) -> MethodInfo {
        MethodInfo {
            id: "rdr2",
            name: "RDR²",
            summary: "Routes through each retrieved document's heading tree, selecting passages, opening headings or refusing, and answers from what it selected. The paper fine-tunes its router; here the configured model is prompted with examples instead.",
            retrieves: true,
            options: vec![
                RETRIEVER.declare(),
                VARIANT.declare(),
                EXPAND_ITER.declare(),
                BUDGET_TOKENS.declare(),
            ],
        }
    }

    async fn run(
        &self,
        ctx: &MethodContext<'_>,
        question: &str,
        params: &Params,
    ) -> Result<Answer, MethodError> {
        let variant = VARIANT.read(params)?;
        let expand_iter = EXPAND_ITER.read(params)?;
        let budget_tokens = BUDGET_TOKENS.read(params)?;
        let settings = route::Settings {
            structure: variant != Rdr2Variant::NoStructure,
            expand_iter: if variant == Rdr2Variant::Full {
                expand_iter
            } else {
                0
            },
            budget_chars: budget_tokens * CHARS_PER_TOKEN,
        };

        let retrieved = ctx.retrieve(question, params.k).await?;
        if retrieved.is_empty() {
            return Err(MethodError::EmptyLibrary);
        }
        let units = units::units(ctx, &retrieved, !settings.structure).await?;
        let trace = Mutex::new(Rdr2Trace {
            variant,
            k: params.k,
            expand_iter: settings.expand_iter,
            budget_tokens,
            retrieved,
            routes: units.iter().map(route::pending).collect(),
            passages: Vec::new(),
            unknown_citations: Vec::new(),
            refused: false,
            notes: Vec::new(),
        });
        let publish = |slot: usize, route: &Route| {
            if let Ok(mut t) = trace.lock() {
                t.routes[slot] = route.clone();
                ctx.checkpoint(&Trace::Rdr2(t.clone()));
            }
        };
        let routes = try_join_all(units.iter().enumerate().map(|(slot, unit)| async move {
            let route =
                route::route(ctx, question, params, unit, settings, |r| publish(slot, r)).await?;
            publish(slot, &route);
            Ok::<_, MethodError>(route)
        }))
        .await?;
        let mut trace = trace.into_inner().unwrap_or_else(|e| e.into_inner());
        trace.routes = routes;
        read::read(ctx, question, params, &units, settings.budget_chars, trace).await
    }
}

#[cfg(test)]
mod tests;
