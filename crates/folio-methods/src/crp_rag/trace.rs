//! What a CRP-RAG answer was built from: the reasoning graph (steps, edges,
//! merges), each step's knowledge and sufficiency check, the paths the
//! answer was reasoned along, and the passages behind it all.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::markdown::{block, ids, inline, option_name, write_notes, write_passages};
use crate::{brief, Citation, MethodTrace, Passage, RetrievalPart};
use folio_core::choice::Choice;

/// The method, or one of the paper's ablations (its section 5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "kebab-case")]
pub enum CrpRagVariant {
    #[default]
    CrpRag,
    /// Each step's knowledge is its retrieved passages as they are, not a
    /// summary the model wrote.
    NoAggregation,
    /// No sufficiency check: the shortest and the longest path are reasoned
    /// along, whatever their knowledge.
    NoEvaluation,
    /// Each path is answered in one call from all its steps at once.
    NoIterative,
}

impl Choice for CrpRagVariant {
    const ALL: &'static [CrpRagVariant] = &[
        CrpRagVariant::CrpRag,
        CrpRagVariant::NoAggregation,
        CrpRagVariant::NoEvaluation,
        CrpRagVariant::NoIterative,
    ];

    fn as_str(self) -> &'static str {
        match self {
            CrpRagVariant::CrpRag => "crp-rag",
            CrpRagVariant::NoAggregation => "no-aggregation",
            CrpRagVariant::NoEvaluation => "no-evaluation",
            CrpRagVariant::NoIterative => "no-iterative",
        }
    }
}

/// The limits the graph was grown under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct GraphBudget {
    /// Rounds of step generation (the longest path has this many steps).
    pub depth: usize,
    /// Steps in the graph, the question not counted.
    pub nodes: usize,
    /// Next steps asked for per open step and round.
    pub branching: usize,
    /// Paths reasoned along at most.
    pub paths: usize,
}

/// Why the graph stopped growing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "kebab-case")]
pub enum GraphStop {
    /// Every open step led to a final one.
    AllFinal,
    /// The open steps' replies held no usable step.
    NoNewSteps,
    DepthBudget,
    NodeBudget,
}

/// Where the sufficiency check's perplexity threshold came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ThresholdSource {
    /// The request named it (`--perplexity-threshold`).
    Given,
    /// Measured for the model by `folio models calibrate`, with the share
    /// of its probe set the threshold sorted right, and of each probe left
    /// out of the fit.
    Calibrated {
        accuracy: f64,
        held_out_accuracy: f64,
    },
    /// The model was never calibrated: SmolLM2-135M's value stood in.
    /// (Runs from before calibration read as this: they used that value.)
    #[default]
    Uncalibrated,
    /// The backend gives no log-probabilities, so every check was the
    /// model's own yes/no assessment and no threshold applied.
    NotUsed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct CrpRagTrace {
    pub variant: CrpRagVariant,
    pub k: usize,
    pub budget: GraphBudget,
    /// Two new steps whose embeddings are at least this similar are merged.
    pub merge_threshold: f64,
    /// A step whose check answer has a lower perplexity is sufficient.
    pub perplexity_threshold: f64,
    /// Where that threshold came from.
    #[serde(default)]
    pub threshold_source: ThresholdSource,
    /// Node 0 is the question itself, the graph's only source; the others
    /// are reasoning steps in the order they were made.
    pub nodes: Vec<ReasoningNode>,
    pub edges: Vec<ReasoningEdge>,
    pub merges: Vec<NodeMerge>,
    pub stop: Option<GraphStop>,
    /// The paths the answer was reasoned along, in the order they were
    /// chosen.
    pub paths: Vec<ReasoningPath>,
    /// No path had sufficient knowledge at every step, so the method
    /// declined to answer and said which steps lacked it.
    pub refused: bool,
    /// Every passage any step retrieved, each once, numbered as the
    /// prompts showed them.
    pub passages: Vec<Passage>,
    pub unknown_citations: Vec<usize>,
    /// How the retriever found the passages, when it is more than a search.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<RetrievalPart>>", optional)]
    pub retrieval: Vec<RetrievalPart>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct ReasoningNode {
    pub id: usize,
    /// A sub-question or an explanation (the question, for node 0).
    pub text: String,
    /// The round that made it; 0 for the question.
    pub depth: usize,
    /// The model marked it as the last step before the answer.
    pub is_final: bool,
    /// Numbers of the passages retrieved for it, into the trace's passages.
    pub passages: Vec<usize>,
    /// What the model drew from those passages for this step; `None` for
    /// the question and under `no-aggregation`, where the passages
    /// themselves are the knowledge.
    pub knowledge: Option<String>,
    /// `None` for the question and under `no-evaluation`.
    pub check: Option<SufficiencyCheck>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "kebab-case")]
pub enum SufficiencyTest {
    /// The perplexity of the model's answer to the step, from the
    /// log-probabilities of its tokens.
    Perplexity,
    /// The backend gave no log-probabilities, so the model was asked
    /// whether the knowledge suffices.
    SelfAssessment,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct SufficiencyCheck {
    pub test: SufficiencyTest,
    /// The model's answer to the step from its knowledge (perplexity), or
    /// its verdict (self-assessment).
    pub reply: String,
    pub perplexity: Option<f64>,
    pub sufficient: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct ReasoningEdge {
    pub from: usize,
    pub to: usize,
}

/// Similar new steps of one round that became one node, which took over
/// every edge into them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct NodeMerge {
    pub node: usize,
    /// The steps as the model first wrote them.
    pub texts: Vec<String>,
    /// The lowest similarity between the first step and another.
    pub similarity: f64,
    /// The texts were the same, so no model call was needed to merge them.
    pub identical: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct ReasoningPath {
    /// Node ids from the question to a sink.
    pub nodes: Vec<usize>,
    /// What each step (after the question) concluded, in order; empty
    /// under `no-iterative`.
    pub results: Vec<String>,
    pub answer: String,
}

impl MethodTrace for CrpRagTrace {
    fn passages(&self) -> Option<&[Passage]> {
        Some(&self.passages)
    }

    crate::over_any_retriever!();

    fn key_parts(&self) -> Vec<String> {
        let mut parts: Vec<String> = self
            .nodes
            .iter()
            .skip(1)
            .map(|node| {
                let check = match &node.check {
                    Some(c) if c.sufficient => "sufficient",
                    Some(_) => "insufficient",
                    None => "not checked",
                };
                format!("step {}: {} ({check})", node.id, brief(&node.text))
            })
            .collect();
        parts.push(format!("paths: {}", self.paths.len()));
        parts
    }

    fn refused(&self) -> bool {
        self.refused
    }

    fn write_markdown(&self, out: &mut String, citations: &[Citation]) {
        let _ = writeln!(
            out,
            "CRP-RAG ({} variant) grew a reasoning graph of {} steps from the question (at most {} rounds, {} steps), retrieved {} passages for each step and reasoned along {} path(s).\n",
            option_name(self.variant),
            self.nodes.len().saturating_sub(1),
            self.budget.depth,
            self.budget.nodes,
            self.k,
            self.paths.len(),
        );
        out.push_str("| Step | After | Text | Passages | Check |\n|---|---|---|---|---|\n");
        for node in &self.nodes {
            let after: Vec<usize> = self
                .edges
                .iter()
                .filter(|e| e.to == node.id)
                .map(|e| e.from)
                .collect();
            let passages: Vec<String> = node.passages.iter().map(|n| format!("[{n}]")).collect();
            let _ = writeln!(
                out,
                "| {}{} | {} | {} | {} | {} |",
                node.id,
                if node.is_final { " (final)" } else { "" },
                if node.id == 0 {
                    "question".into()
                } else {
                    ids(&after)
                },
                inline(&node.text),
                passages.join(" "),
                check_summary(node),
            );
        }
        out.push('\n');
        for merge in &self.merges {
            let texts: Vec<String> = merge.texts.iter().map(|t| inline(t)).collect();
            let _ = writeln!(
                out,
                "- Step {} merges {} similar steps (similarity ≥ {:.2}): {}",
                merge.node,
                merge.texts.len(),
                merge.similarity,
                texts.join(" · ")
            );
        }
        if !self.merges.is_empty() {
            out.push('\n');
        }
        for node in self.nodes.iter().filter(|n| n.knowledge.is_some()) {
            let knowledge = node.knowledge.as_deref().unwrap_or_default();
            let _ = writeln!(
                out,
                "### Knowledge for step {}\n\n{}\n",
                node.id,
                block(knowledge)
            );
        }
        for path in &self.paths {
            let _ = writeln!(out, "### Path {}\n", path_label(&path.nodes));
            for (step, result) in path.nodes.iter().skip(1).zip(&path.results) {
                let _ = writeln!(out, "- Step {step}: {}", inline(result));
            }
            let _ = writeln!(out, "\n**Path answer:** {}\n", block(&path.answer));
        }
        write_notes(out, "Reasoning", &self.notes);
        write_passages(out, &self.passages, &self.unknown_citations, citations);
    }
}

fn check_summary(node: &ReasoningNode) -> String {
    let Some(check) = &node.check else {
        return String::new();
    };
    let verdict = if check.sufficient {
        "sufficient"
    } else {
        "insufficient"
    };
    match (check.test, check.perplexity) {
        (SufficiencyTest::Perplexity, Some(p)) => format!("{verdict}, perplexity {p:.2}"),
        _ => format!("{verdict} (self-assessed)"),
    }
}

fn path_label(nodes: &[usize]) -> String {
    nodes
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(" → ")
}
