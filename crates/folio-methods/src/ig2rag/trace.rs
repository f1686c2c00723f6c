//! What an iG²RAG answer was built from: the seeds, the walk, the part of
//! the graph around the chosen passages, and the passages themselves.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::markdown::{inline, write_notes, write_passages};
use crate::{Citation, MethodTrace, Passage};
use folio_core::choice::Choice;
use folio_llm::rubric::{GainClass, Rubric};
pub use folio_retrieve::{Seed, WalkStats};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "kebab-case")]
pub enum Ig2RagVariant {
    /// Personalized PageRank over the information-gain graph.
    #[default]
    Ig2rag,
    /// The same walk over the same neighbour pairs weighted by similarity.
    SimPpr,
    /// From the seeds, repeatedly take the strongest gain edge out of what
    /// is already chosen.
    Greedy,
}

impl Choice for Ig2RagVariant {
    const ALL: &'static [Ig2RagVariant] = &[
        Ig2RagVariant::Ig2rag,
        Ig2RagVariant::SimPpr,
        Ig2RagVariant::Greedy,
    ];

    fn as_str(self) -> &'static str {
        match self {
            Ig2RagVariant::Ig2rag => "ig2rag",
            Ig2RagVariant::SimPpr => "sim-ppr",
            Ig2RagVariant::Greedy => "greedy",
        }
    }
}

/// Whether a gain walk also follows a notes vault's links, as edges of a
/// fixed weight beside the rubric's gain edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "kebab-case")]
pub enum WalkLinks {
    /// The paper's walk: gain edges only.
    #[default]
    Off,
    /// Links are edges too, so the walk goes where the notes point.
    Follow,
}

impl Choice for WalkLinks {
    const ALL: &'static [WalkLinks] = &[WalkLinks::Off, WalkLinks::Follow];

    fn as_str(self) -> &'static str {
        match self {
            WalkLinks::Off => "off",
            WalkLinks::Follow => "follow",
        }
    }
}

/// An iG²RAG answer: the walk that ranked the passages, and the passages.
/// As a retriever of another method, the walk alone is its
/// [`GainWalkPart`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct Ig2RagTrace {
    #[serde(flatten)]
    #[ts(flatten)]
    pub ranking: GainWalkPart,
    /// What the answer was written from, numbered as in the prompt.
    pub passages: Vec<Passage>,
    pub unknown_citations: Vec<usize>,
}

/// How a gain walk (iG²RAG §3.2) ranked chunks for one query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct GainWalkPart {
    pub query: String,
    pub variant: Ig2RagVariant,
    pub rubric: Rubric,
    pub h: usize,
    pub alpha: f64,
    pub k: usize,
    /// Whether links were edges too; traces older than the option had none.
    #[serde(default)]
    pub links: WalkLinks,
    /// How much of the library the graph covered when the question was asked.
    pub coverage: GraphCoverage,
    /// The top-h chunks by similarity, best first; `weight` is their share
    /// of the personalization vector.
    pub seeds: Vec<Seed>,
    /// The power iteration; absent for the greedy variant.
    pub walk: Option<WalkStats>,
    /// The best-ranked nodes, best first: every chosen passage, every seed,
    /// and the next few the walk reached.
    pub nodes: Vec<GraphNode>,
    /// The edges among `nodes`.
    pub edges: Vec<GraphEdge>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct GraphCoverage {
    /// Chunks with a vector: what the graph could cover.
    pub chunks: i64,
    pub scored: i64,
    pub failed: i64,
    pub edges: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct GraphNode {
    pub chunk_id: i64,
    /// File name and heading path, to tell nodes apart at a glance.
    pub label: String,
    /// PageRank mass for the walks; for greedy, the weight of the edge that
    /// brought the node in (a seed's similarity).
    pub score: f64,
    pub seed: bool,
    /// The passage number, when the node was given to the model.
    pub passage: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct GraphEdge {
    pub source: i64,
    pub target: i64,
    /// The gain class; none for the similarity graph of `sim-ppr` and for
    /// a link with no gain edge beside it.
    pub class: Option<GainClass>,
    pub weight: f64,
    /// A link of the notes joins the two (the weight then includes it).
    #[serde(default)]
    pub link: bool,
}

impl MethodTrace for Ig2RagTrace {
    fn passages(&self) -> Option<&[Passage]> {
        Some(&self.passages)
    }

    fn key_parts(&self) -> Vec<String> {
        Vec::new()
    }

    fn write_markdown(&self, out: &mut String, citations: &[Citation]) {
        out.push_str("iG²RAG ");
        write_walk(out, &self.ranking);
        write_passages(out, &self.passages, &self.unknown_citations, citations);
    }
}

/// A gain walk in an exported answer, after the words that introduce it:
/// how it ran, its nodes and its notes.
pub fn write_walk(out: &mut String, part: &GainWalkPart) {
    let how = match part.variant {
        Ig2RagVariant::Greedy => "followed the strongest gain edges".to_string(),
        v => format!(
            "walked the {} graph (Personalized PageRank, α = {})",
            if v == Ig2RagVariant::SimPpr {
                "similarity"
            } else {
                "information-gain"
            },
            part.alpha
        ),
    };
    let links = match part.links {
        WalkLinks::Follow => ", the notes' links taken as edges too",
        WalkLinks::Off => "",
    };
    let _ = writeln!(
        out,
        "({} variant, {} rubric) started from the {} passages most similar to *{}* and {how}{links}, keeping the top {}. The graph covered {} of {} chunks with {} edges.\n",
        part.variant.as_str(),
        part.rubric.as_str(),
        part.seeds.len(),
        inline(&part.query),
        part.k,
        part.coverage.scored,
        part.coverage.chunks,
        part.coverage.edges,
    );
    if let Some(walk) = &part.walk {
        let _ = writeln!(
            out,
            "The walk took {} iterations ({}) over {} nodes and {} edges.\n",
            walk.iterations,
            if walk.converged {
                "converged"
            } else {
                "did not converge"
            },
            walk.graph_nodes,
            walk.graph_edges
        );
    }
    out.push_str("| Node | Score | Seed | Passage |\n|---|---|---|---|\n");
    for node in &part.nodes {
        let _ = writeln!(
            out,
            "| {} | {:.4} | {} | {} |",
            inline(&node.label),
            node.score,
            if node.seed { "yes" } else { "" },
            node.passage.map(|n| format!("[{n}]")).unwrap_or_default()
        );
    }
    out.push('\n');
    write_notes(out, "Walk", &part.notes);
}
