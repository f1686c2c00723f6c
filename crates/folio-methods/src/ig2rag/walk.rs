//! The gain walk as a retriever: rank chunks for a query by a walk of the
//! information-gain graph from its nearest chunks, and describe the walk
//! for a trace. iG²RAG answers from it in one call; any other method can
//! take its passages through the `retriever` option.

use std::collections::HashSet;

use super::trace::{GainWalkPart, GraphCoverage, GraphEdge, GraphNode, Ig2RagVariant, WalkLinks};
use crate::{MethodContext, MethodError, Passage};
use folio_core::choice::Choice;
use folio_llm::rubric::Rubric;
use folio_retrieve::ppr::PprParams;
use folio_retrieve::{Follow, GainWalk, Ranker, LINK_WEIGHT};
use folio_store::RubricStatus;

/// Nodes the trace shows past the chosen passages and the seeds.
const NEXT_NODES: usize = 5;

/// How the walk runs: iG²RAG's options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WalkSettings {
    pub h: usize,
    pub alpha: f64,
    pub rubric: Rubric,
    pub variant: Ig2RagVariant,
    pub links: WalkLinks,
}

impl WalkSettings {
    /// The paper's walk (iG²RAG §4.1): h = 5 seeds, restart 0.3, over the
    /// coarse graph. What another method's `retriever=ig2rag` runs.
    pub const PAPER: WalkSettings = WalkSettings {
        h: 5,
        alpha: 0.3,
        rubric: Rubric::Coarse,
        variant: Ig2RagVariant::Ig2rag,
        links: WalkLinks::Off,
    };
}

/// The `k` chunks the walk ranks highest for `query`, numbered from 1, and
/// how the walk got there.
pub async fn walk(
    ctx: &MethodContext<'_>,
    query: &str,
    k: usize,
    settings: WalkSettings,
) -> Result<(Vec<Passage>, GainWalkPart), MethodError> {
    let WalkSettings {
        h,
        alpha,
        rubric,
        variant,
        links,
    } = settings;
    let walk_params = PprParams {
        alpha,
        ..PprParams::default()
    };
    let follow = match variant {
        Ig2RagVariant::Ig2rag => Follow::Gain(walk_params),
        Ig2RagVariant::SimPpr => Follow::Similarity(walk_params),
        Ig2RagVariant::Greedy => Follow::StrongestEdge,
    };
    let retriever = Ranker::GainWalk(GainWalk {
        rubric,
        seeds: h,
        follow,
        links: links == WalkLinks::Follow,
    });
    let ranking = ctx.rank(query, k, &retriever).await?;
    let Some(walked) = ranking.walk else {
        return Err(MethodError::EmptyLibrary);
    };
    let ranked = ranking.ranked;
    let (seeds, graph, walk) = (walked.seeds, walked.graph, walked.stats);
    let status = ctx.graph_coverage(rubric).await?;
    let mut notes = coverage_notes(rubric, &status, links);
    if let Some(stats) = walk.filter(|s| !s.converged) {
        notes.push(format!(
            "The walk stopped after {} iterations before converging (last change {:.2e}).",
            stats.iterations, stats.last_change
        ));
    }
    let chosen: Vec<(i64, f64)> = ranked.iter().take(k).copied().collect();
    if chosen.len() < k {
        notes.push(format!(
            "The walk reached {} chunks, fewer than k = {k}.",
            chosen.len()
        ));
    }
    let passages = ctx.passages(query, &chosen).await?;

    let mut shown_ids: Vec<i64> = chosen.iter().map(|(id, _)| *id).collect();
    for id in seeds
        .iter()
        .map(|s| s.chunk_id)
        .chain(ranked.iter().skip(k).take(NEXT_NODES).map(|(id, _)| *id))
    {
        if !shown_ids.contains(&id) {
            shown_ids.push(id);
        }
    }
    let labels = ctx.chunk_labels(&shown_ids).await?;
    let score_of = |id: i64| {
        ranked
            .iter()
            .find(|(r, _)| *r == id)
            .map_or(0.0, |(_, s)| *s)
    };
    let nodes: Vec<GraphNode> = shown_ids
        .iter()
        .filter_map(|id| {
            labels.get(id).map(|label| GraphNode {
                chunk_id: *id,
                label: label.clone(),
                score: score_of(*id),
                seed: seeds.iter().any(|s| s.chunk_id == *id),
                passage: passages
                    .iter()
                    .find(|p| p.chunk_id == *id)
                    .map(|p| p.number),
            })
        })
        .collect();
    let in_view: HashSet<i64> = nodes.iter().map(|n| n.chunk_id).collect();
    let linked: HashSet<(i64, i64)> = graph.links_among(&in_view).into_iter().collect();
    let mut edges: Vec<GraphEdge> = graph
        .edges_among(&in_view)
        .into_iter()
        .map(|e| {
            let link = linked.contains(&(e.source, e.target));
            let (class, weight) = match variant {
                Ig2RagVariant::SimPpr => (None, e.similarity),
                _ => (Some(e.class), e.score),
            };
            GraphEdge {
                source: e.source,
                target: e.target,
                class,
                weight: weight + if link { LINK_WEIGHT } else { 0.0 },
                link,
            }
        })
        .collect();
    for (source, target) in linked {
        if !edges
            .iter()
            .any(|e| (e.source, e.target) == (source, target))
        {
            edges.push(GraphEdge {
                source,
                target,
                class: None,
                weight: LINK_WEIGHT,
                link: true,
            });
        }
    }
    // The same walk draws the same picture: the sets have no order of
    // their own.
    edges.sort_by_key(|e| (e.source, e.target));
    let part = GainWalkPart {
        query: query.to_string(),
        variant,
        rubric,
        h,
        alpha,
        k,
        links,
        coverage: GraphCoverage {
            chunks: status.scored + status.failed + status.pending,
            scored: status.scored,
            failed: status.failed,
            edges: status.edges,
        },
        seeds,
        walk,
        nodes,
        edges,
        notes,
    };
    Ok((passages, part))
}

fn coverage_notes(rubric: Rubric, status: &RubricStatus, links: WalkLinks) -> Vec<String> {
    let r = rubric.as_str();
    if status.scored == 0 {
        let so = match links {
            WalkLinks::Off => "the walk stays on the seeds",
            WalkLinks::Follow => "the walk follows only the notes' links from the seeds",
        };
        return vec![format!(
            "The {r} graph has not been built (`folio graph build --rubric {r}`), so {so}."
        )];
    }
    if status.pending > 0 {
        return vec![format!(
            "The {r} graph covers {} of {} chunks; {} are not scored yet.",
            status.scored + status.failed,
            status.scored + status.failed + status.pending,
            status.pending
        )];
    }
    Vec::new()
}
