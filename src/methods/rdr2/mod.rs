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
use serde_json::Value;

pub use trace::{
    ActionKind, IgnoredAction, Rdr2Trace, Rdr2Variant, Route, RouteAction, RouteNode, RouteOutcome,
    RouteStep,
};

use super::{Answer, Method, MethodContext, MethodError, MethodInfo, MethodOption, Params, Trace};
use crate::retrieve::SearchMode;

pub struct Rdr2;

const DEFAULT_EXPAND_ITER: u64 = 5;
const EXPAND_ITER_LIMIT: usize = 20;
/// About the paper's routing turn (+0.8k input tokens).
const DEFAULT_BUDGET_TOKENS: u64 = 1000;
/// Less than this cannot show a heading path and one passage.
const MIN_BUDGET_TOKENS: usize = 100;
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
                MethodOption {
                    name: "variant",
                    help: "full (the method), or an ablation from the paper: no-structure (each passage accepted or refused alone), no-expand (one routing turn, no headings opened).",
                    default: Value::from("full"),
                    choices: vec!["full", "no-structure", "no-expand"],
                },
                MethodOption {
                    name: "expand-iter",
                    help: "Most routing turns that open headings, per document (0: select or refuse only).",
                    default: Value::from(DEFAULT_EXPAND_ITER),
                    choices: vec![],
                },
                MethodOption {
                    name: "budget-tokens",
                    help: "Size of a document's tree as the router sees it, and of the passages the reader gets, in tokens.",
                    default: Value::from(DEFAULT_BUDGET_TOKENS),
                    choices: vec![],
                },
            ],
        }
    }

    async fn run(
        &self,
        ctx: &MethodContext<'_>,
        question: &str,
        params: &Params,
    ) -> Result<Answer, MethodError> {
        let variant: Rdr2Variant = params.option("variant")?;
        let expand_iter = params.count_within("expand-iter", 0, EXPAND_ITER_LIMIT)?;
        let budget_tokens = params.count_within("budget-tokens", MIN_BUDGET_TOKENS, usize::MAX)?;
        let settings = route::Settings {
            structure: variant != Rdr2Variant::NoStructure,
            expand_iter: if variant == Rdr2Variant::Full {
                expand_iter
            } else {
                0
            },
            budget_chars: budget_tokens * CHARS_PER_TOKEN,
        };

        let retrieved = ctx.retrieve(question, params.k, SearchMode::Hybrid).await?;
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
