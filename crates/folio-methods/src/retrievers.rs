//! The retrievers a method can reason over (issue: any reasoner over any
//! retriever). Searches rank chunks in the retrieval layer; the gain walk
//! and RDR²'s routing are retrievers too, built from iG²RAG's and RDR²'s
//! first halves, and so is following a notes vault's links (`links.rs`);
//! they leave a [`RetrievalPart`] that the trace shows
//! beside the reasoner's own steps. A method names none of them: it calls
//! [`MethodContext::retrieve`](super::MethodContext::retrieve), and the
//! run's `retriever` option picks.

use serde::{Deserialize, Serialize};

use super::ig2rag::{self, GainWalkPart, WalkSettings};
use super::links::{self, LinksPart};
use super::rdr2::{self, RoutedPart};
use super::trace::brief;
use super::{MethodContext, MethodError, Params, Passage};
use folio_core::choice::Choice;
use folio_retrieve::SearchMode;

/// Where a method's passages come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "kebab-case")]
pub enum RetrieverKind {
    Hybrid,
    Dense,
    Bm25,
    /// iG²RAG's walk of the information-gain graph, at the paper's settings.
    Ig2rag,
    /// RDR²'s routing through the searched documents' heading trees.
    Rdr2,
    /// A hybrid search, then the sections its passages link to.
    Links,
}

impl Choice for RetrieverKind {
    const ALL: &'static [RetrieverKind] = &[
        RetrieverKind::Hybrid,
        RetrieverKind::Dense,
        RetrieverKind::Bm25,
        RetrieverKind::Ig2rag,
        RetrieverKind::Rdr2,
        RetrieverKind::Links,
    ];

    fn as_str(self) -> &'static str {
        match self {
            RetrieverKind::Hybrid => "hybrid",
            RetrieverKind::Dense => "dense",
            RetrieverKind::Bm25 => "bm25",
            RetrieverKind::Ig2rag => "ig2rag",
            RetrieverKind::Rdr2 => "rdr2",
            RetrieverKind::Links => "links",
        }
    }
}

impl RetrieverKind {
    /// The search this is, if it is one.
    pub fn search(self) -> Option<SearchMode> {
        match self {
            RetrieverKind::Hybrid => Some(SearchMode::Hybrid),
            RetrieverKind::Dense => Some(SearchMode::Dense),
            RetrieverKind::Bm25 => Some(SearchMode::Bm25),
            RetrieverKind::Ig2rag | RetrieverKind::Rdr2 | RetrieverKind::Links => None,
        }
    }
}

impl From<SearchMode> for RetrieverKind {
    fn from(mode: SearchMode) -> Self {
        match mode {
            SearchMode::Hybrid => RetrieverKind::Hybrid,
            SearchMode::Dense => RetrieverKind::Dense,
            SearchMode::Bm25 => RetrieverKind::Bm25,
        }
    }
}

/// How a retriever that is more than a search found one query's passages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(tag = "retriever", rename_all = "kebab-case")]
pub enum RetrievalPart {
    Ig2rag(GainWalkPart),
    Rdr2(RoutedPart),
    Links(LinksPart),
}

impl RetrievalPart {
    /// One line on how the retriever found a query's passages, for a
    /// trace's key parts.
    pub fn key_part(&self) -> String {
        match self {
            RetrievalPart::Ig2rag(walk) => format!(
                "gain walk for {}: {} seeds, {} nodes",
                brief(&walk.query),
                walk.seeds.len(),
                walk.nodes.len()
            ),
            RetrievalPart::Rdr2(routing) => {
                let selected: usize = routing.routes.iter().map(|r| r.selected.len()).sum();
                format!(
                    "RDR² routing for {}: {} documents, {selected} passages selected",
                    brief(&routing.query),
                    routing.routes.len()
                )
            }
            RetrievalPart::Links(part) => format!(
                "links for {}: {} passages searched, {} reached by a link",
                brief(&part.query),
                part.searched,
                part.followed.len()
            ),
        }
    }

    /// How the retriever found the passages, in an exported answer.
    pub fn write_markdown(&self, out: &mut String) {
        match self {
            RetrievalPart::Ig2rag(walk) => {
                out.push_str("**Retrieved by the gain walk** ");
                ig2rag::write_walk(out, walk);
            }
            RetrievalPart::Rdr2(routing) => {
                out.push_str("**Retrieved by RDR²'s routing**: ");
                rdr2::write_routing(out, routing);
            }
            RetrievalPart::Links(part) => {
                out.push_str("**Retrieved by following links**: ");
                links::write_links(out, part);
            }
        }
    }
}

/// The passages `kind` finds for `query`, numbered from 1, and how it found
/// them when it is more than a search.
pub(super) async fn gather(
    ctx: &MethodContext<'_>,
    kind: RetrieverKind,
    query: &str,
    params: &Params,
) -> Result<(Vec<Passage>, Option<RetrievalPart>), MethodError> {
    match kind {
        RetrieverKind::Hybrid => Ok((ctx.search(query, params.k, SearchMode::Hybrid).await?, None)),
        RetrieverKind::Dense => Ok((ctx.search(query, params.k, SearchMode::Dense).await?, None)),
        RetrieverKind::Bm25 => Ok((ctx.search(query, params.k, SearchMode::Bm25).await?, None)),
        RetrieverKind::Ig2rag => {
            let (passages, part) = ig2rag::walk(ctx, query, params.k, WalkSettings::PAPER).await?;
            Ok((passages, Some(RetrievalPart::Ig2rag(part))))
        }
        RetrieverKind::Rdr2 => {
            let (passages, part) = rdr2::routed(ctx, query, params).await?;
            Ok((passages, Some(RetrievalPart::Rdr2(part))))
        }
        RetrieverKind::Links => {
            let (passages, part) = links::linked(ctx, query, params).await?;
            Ok((passages, Some(RetrievalPart::Links(part))))
        }
    }
}
