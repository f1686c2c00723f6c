//! `rdr2` (RDR², ../shared/papers/rdr2.md): retrieve chunks, then route
//! through each retrieved document's structure tree, where a router
//! selects passages, unfolds headings or refuses, and answer from the
//! selected passages. The paper fine-tunes its router; Folio prompts the
//! configured model with few-shot examples instead (prompts/rdr2/route.j2).
//! The paper's ablations are variants: `no-structure`, `no-expand`.

pub mod parse;
mod prompts;
mod read;
mod route;
mod subtree;
mod trace;
mod units;
mod view;

use std::sync::Mutex;

use futures::future::try_join_all;

pub use trace::{
    write_routing, ActionKind, IgnoredAction, Rdr2Trace, Rdr2Variant, Route, RouteAction,
    RouteNode, RouteOutcome, RouteStep, RoutedPart,
};

use super::{
    Answer, Count, Method, MethodContext, MethodDefaults, MethodError, MethodInfo, Params, Passage,
    Pick, RetrieverKind, Trace,
};
use folio_core::choice::Choice;
use folio_llm::prompts::Prompt;
use folio_retrieve::{Ranker, SearchMode};

pub struct Rdr2;

/// Greedy decoding, as the paper's open readers. The paper routes through
/// the documents of the top 55 chunks; k stays at 5 because each document
/// costs routing calls of its own (docs/methods.md, deviations).
const PAPER: MethodDefaults = MethodDefaults {
    k: 5,
    temperature: Some(0.0),
    sampling: None,
};

/// Where the passages routed through come from. RDR² is itself one of
/// the retrievers other methods may pick, so it offers the searches and
/// the `links` retriever, not the walk or itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Routed {
    Hybrid,
    Dense,
    Bm25,
    /// A hybrid search and the sections its passages link to: a notes
    /// vault's links take the route into the notes they point to, whose
    /// trees are routed like the searched ones.
    Links,
}

impl Choice for Routed {
    const ALL: &'static [Routed] = &[Routed::Hybrid, Routed::Dense, Routed::Bm25, Routed::Links];

    fn as_str(self) -> &'static str {
        RetrieverKind::from(self).as_str()
    }
}

impl From<Routed> for RetrieverKind {
    fn from(routed: Routed) -> RetrieverKind {
        match routed {
            Routed::Hybrid => RetrieverKind::Hybrid,
            Routed::Dense => RetrieverKind::Dense,
            Routed::Bm25 => RetrieverKind::Bm25,
            Routed::Links => RetrieverKind::Links,
        }
    }
}

const SEARCH: Pick<Routed> = Pick {
    name: "retriever",
    help: "How the passages routed through are found: hybrid (dense + BM25), dense, bm25, or links (hybrid, then the notes its passages link to, routed too).",
    default: Routed::Hybrid,
};
const VARIANT: Pick<Rdr2Variant> = Pick {
    name: "variant",
    help: "full (the method), or an ablation from the paper: no-structure (each passage accepted or refused alone), no-expand (one routing turn, no headings opened), no-refuse (every turn selects or opens something).",
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
            defaults: PAPER,
            options: vec![
                SEARCH.declare(),
                VARIANT.declare(),
                EXPAND_ITER.declare(),
                BUDGET_TOKENS.declare(),
            ],
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
        let how = Routing {
            variant: VARIANT.read(params)?,
            expand_iter: EXPAND_ITER.read(params)?,
            budget_tokens: BUDGET_TOKENS.read(params)?,
        };
        let retrieved = ctx.retrieve(question, params).await?;
        if retrieved.is_empty() {
            return Err(MethodError::EmptyLibrary);
        }
        let (units, routing) = route_all(ctx, question, params, how, retrieved, |part| {
            ctx.checkpoint(&Trace::Rdr2(Rdr2Trace {
                routing: part.clone(),
                passages: Vec::new(),
                unknown_citations: Vec::new(),
                refused: false,
                retrieval: Vec::new(),
            }))
        })
        .await?;
        read::read(ctx, question, params, &units, routing).await
    }
}

/// How RDR² routes: the variant and its limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Routing {
    pub variant: Rdr2Variant,
    pub expand_iter: usize,
    pub budget_tokens: usize,
}

impl Routing {
    /// The method's defaults: what another method's `retriever=rdr2` runs.
    pub const DEFAULT: Routing = Routing {
        variant: Rdr2Variant::Full,
        expand_iter: EXPAND_ITER.default,
        budget_tokens: BUDGET_TOKENS.default,
    };

    fn settings(self) -> route::Settings {
        route::Settings {
            structure: self.variant != Rdr2Variant::NoStructure,
            expand_iter: match self.variant {
                Rdr2Variant::Full | Rdr2Variant::NoRefuse => self.expand_iter,
                Rdr2Variant::NoStructure | Rdr2Variant::NoExpand => 0,
            },
            refuse: self.variant != Rdr2Variant::NoRefuse,
            budget_chars: self.budget_tokens * CHARS_PER_TOKEN,
        }
    }
}

/// Routes through the documents of `retrieved`, all at once, reporting the
/// routes so far after every step.
async fn route_all(
    ctx: &MethodContext<'_>,
    question: &str,
    params: &Params,
    how: Routing,
    retrieved: Vec<Passage>,
    on_step: impl Fn(&RoutedPart) + Sync,
) -> Result<(Vec<units::Unit>, RoutedPart), MethodError> {
    let settings = how.settings();
    let units = units::units(ctx, &retrieved, !settings.structure).await?;
    let part = Mutex::new(RoutedPart {
        query: question.to_string(),
        variant: how.variant,
        k: params.k,
        expand_iter: settings.expand_iter,
        budget_tokens: how.budget_tokens,
        retrieved,
        routes: units.iter().map(route::pending).collect(),
        notes: Vec::new(),
    });
    let publish = |slot: usize, route: &Route| {
        if let Ok(mut p) = part.lock() {
            p.routes[slot] = route.clone();
            on_step(&p);
        }
    };
    let routes = try_join_all(units.iter().enumerate().map(|(slot, unit)| async move {
        let route =
            route::route(ctx, question, params, unit, settings, |r| publish(slot, r)).await?;
        publish(slot, &route);
        Ok::<_, MethodError>(route)
    }))
    .await?;
    let mut part = part.into_inner().unwrap_or_else(|e| e.into_inner());
    part.routes = routes;
    Ok((units, part))
}

/// RDR²'s routing as a retriever: the top `k` by hybrid search, routed
/// with the method's defaults; the passages the routes select, numbered
/// from 1, within the routing budget. When every route refuses, the
/// searched passages are passed on instead, with a note: a retriever that
/// returns nothing would leave the method using it nothing to reason on.
pub async fn routed(
    ctx: &MethodContext<'_>,
    query: &str,
    params: &Params,
) -> Result<(Vec<Passage>, RoutedPart), MethodError> {
    let searched = ctx
        .rank(query, params.k, &Ranker::Search(SearchMode::Hybrid))
        .await?;
    let retrieved = ctx.passages(query, &searched.ranked).await?;
    if retrieved.is_empty() {
        return Err(MethodError::EmptyLibrary);
    }
    let how = Routing::DEFAULT;
    let (units, mut part) = route_all(ctx, query, params, how, retrieved, |_| {}).await?;
    let (mut passages, left_out) =
        read::reader_passages(&units, &part, how.settings().budget_chars);
    read::note_left_out(&mut part, left_out);
    if passages.is_empty() {
        part.notes.push(
            "the router refused every document, so the searched passages were passed on".into(),
        );
        passages = part.retrieved.clone();
    }
    Ok((passages, part))
}

#[cfg(test)]
mod tests;
