//! `ig2rag` (iG²RAG, §3.2): seed a Personalized PageRank walk with the h
//! chunks most similar to the question, walk the information-gain graph
//! (built offline by `folio graph build`), and answer from the k chunks
//! the walk ranks highest in one model call. `sim-ppr` walks the same pairs
//! weighted by similarity and `greedy` follows the strongest gain edges:
//! the paper's ablations. Without a built graph the walk stays on the
//! seeds, which the trace says.

#[cfg(test)]
mod tests;
mod trace;

use std::collections::HashSet;

pub use trace::{GraphCoverage, GraphEdge, GraphNode, Ig2RagTrace, Ig2RagVariant, Seed, WalkStats};

use super::{
    Answer, Count, Method, MethodContext, MethodError, MethodInfo, Number, OptionRange, Params,
    Pick, Trace,
};
use crate::choice::Choice;
use crate::graph::Rubric;
use crate::retrieve::ppr::PprParams;
use crate::retrieve::{Follow, GainWalk, Retriever};

pub struct Ig2Rag;

/// Nodes the trace shows past the chosen passages and the seeds.
const NEXT_NODES: usize = 5;

const H: Count = Count {
    name: "h",
    help: "Seeds: the h chunks most similar to the question start the walk.",
    default: 5,
    min: 1,
    max: Some(100),
};
const ALPHA: Number = Number {
    name: "alpha",
    help: "The walk's restart probability; higher stays nearer the seeds.",
    default: 0.3,
    range: OptionRange {
        min: 0.0,
        min_exclusive: true,
        max: Some(1.0),
    },
};
const RUBRIC: Pick<Rubric> = Pick {
    name: "rubric",
    help: "Which built graph to walk: the rubric it was scored with.",
    default: Rubric::Coarse,
};
const VARIANT: Pick<Ig2RagVariant> = Pick {
    name: "variant",
    help: "ig2rag walks the gain graph; sim-ppr walks the same pairs by similarity; greedy follows the strongest gain edges.",
    default: Ig2RagVariant::Ig2rag,
};

#[async_trait::async_trait]
impl Method for Ig2Rag {
    fn info(&self) -> MethodInfo {
        MethodInfo {
            id: "ig2rag",
            name: "iG²RAG",
            summary: "Walks the information-gain graph (folio graph build) from the passages most similar to the question and answers from the k it ranks highest, in one model call.",
            retrieves: true,
            options: vec![
                H.declare(),
                ALPHA.declare(),
                RUBRIC.declare(),
                VARIANT.declare(),
            ],
        }
    }

    async fn run(
        &self,
        ctx: &MethodContext<'_>,
        question: &str,
        params: &Params,
    ) -> Result<Answer, MethodError> {
        let h = H.read(params)?;
        let alpha = ALPHA.read(params)?;
        let rubric = RUBRIC.read(params)?;
        let variant = VARIANT.read(params)?;
        let k = params.k;

        let walk_params = PprParams {
            alpha,
            ..PprParams::default()
        };
        let follow = match variant {
            Ig2RagVariant::Ig2rag => Follow::Gain(walk_params),
            Ig2RagVariant::SimPpr => Follow::Similarity(walk_params),
            Ig2RagVariant::Greedy => Follow::StrongestEdge,
        };
        let retriever = Retriever::GainWalk(GainWalk {
            rubric,
            seeds: h,
            follow,
        });
        let ranking = ctx.rank(question, k, &retriever).await?;
        let Some(walked) = ranking.walk else {
            return Err(MethodError::EmptyLibrary);
        };
        let ranked = ranking.ranked;
        let (seeds, graph, walk) = (walked.seeds, walked.graph, walked.stats);
        let status = ctx.graph_coverage(rubric).await?;
        let mut notes = coverage_notes(rubric, &status);
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
        let passages = ctx.passages(question, &chosen).await?;

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
        let edges = graph
            .edges_among(&in_view)
            .into_iter()
            .map(|e| match variant {
                Ig2RagVariant::SimPpr => GraphEdge {
                    source: e.source,
                    target: e.target,
                    class: None,
                    weight: e.similarity,
                },
                _ => GraphEdge {
                    source: e.source,
                    target: e.target,
                    class: Some(e.class),
                    weight: e.score,
                },
            })
            .collect();

        let mut trace = Ig2RagTrace {
            query: question.to_string(),
            variant,
            rubric,
            h,
            alpha,
            k,
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
            passages,
            unknown_citations: Vec::new(),
            notes,
        };
        ctx.checkpoint(&Trace::Ig2rag(trace.clone()));
        let answer = ctx
            .answer_from_passages(question, &trace.passages, params)
            .await?;
        trace.unknown_citations = answer.unknown;
        Ok(Answer {
            text: answer.text,
            citations: answer.citations,
            trace: Trace::Ig2rag(trace),
        })
    }
}

fn coverage_notes(rubric: Rubric, status: &crate::graph::RubricStatus) -> Vec<String> {
    let r = rubric.as_str();
    if status.scored == 0 {
        return vec![format!(
            "The {r} graph has not been built (`folio graph build --rubric {r}`), so the walk stays on the seeds."
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
