//! `crp-rag` (CRP-RAG, ../shared/papers/crp-rag.md): the model first grows
//! a reasoning graph for the question, retrieval and a knowledge summary
//! follow for every step, each step's knowledge is checked for sufficiency
//! by the perplexity of the model's answer to it, and the answer is
//! reasoned along the paths whose every step is sufficient, or refused
//! when there is none. The paper's ablations are variants.

mod answer;
pub mod calibrate;
mod construct;
mod graph;
mod knowledge;
mod prompts;
pub mod steps;
mod sufficiency;
mod trace;

pub use trace::{
    CrpRagTrace, CrpRagVariant, GraphBudget, GraphStop, NodeMerge, ReasoningEdge, ReasoningNode,
    ReasoningPath, SufficiencyCheck, SufficiencyTest, ThresholdSource,
};

use self::answer::{refusal, select, PathReasoner, Selection};
use self::construct::{Grown, Growth};
use self::graph::Graph;
use self::knowledge::Gathering;
use super::citations::resolve;
use super::{
    Answer, Count, Method, MethodContext, MethodDefaults, MethodError, MethodInfo, Number,
    OptionRange, Params, Pick, Trace, RETRIEVER,
};
use folio_llm::prompts::Prompt;

pub struct CrpRag;

/// The paper's top five documents per query and temperature 0.1 for every
/// call but the graph's growth, which samples (`sample-temperature`).
const PAPER: MethodDefaults = MethodDefaults {
    k: 5,
    temperature: Some(0.1),
    sampling: None,
};

const VARIANT: Pick<CrpRagVariant> = Pick {
    name: "variant",
    help: "crp-rag (the method), or an ablation from the paper: no-aggregation (passages as they are, no summary), no-evaluation (no sufficiency check; the shortest and longest paths), no-iterative (each path answered in one call).",
    default: CrpRagVariant::CrpRag,
};
const DEPTH: Count = Count {
    name: "depth",
    help: "Most rounds of step generation; growth stops sooner once every end is final.",
    // The paper grows until every end is final; two- and three-hop
    // questions end within three rounds, and the fourth is room to spare.
    default: 4,
    min: 1,
    max: Some(6),
};
const NODES: Count = Count {
    name: "nodes",
    help: "Most steps in the graph, the question not counted.",
    default: 8,
    min: 1,
    max: Some(30),
};
const BRANCHING: Count = Count {
    name: "branching",
    help: "Next steps asked for after each open step.",
    default: 2,
    min: 1,
    max: Some(5),
};
const PATHS: Count = Count {
    name: "paths",
    help: "Most paths the answer is reasoned along.",
    default: 2,
    min: 1,
    max: Some(10),
};
const MERGE_THRESHOLD: Number = Number {
    name: "merge-threshold",
    help: "New steps at least this similar (cosine) are merged into one.",
    // Rewordings of one step ("Who wrote …?", "Which person wrote …?") score
    // above this with all-MiniLM-L6-v2; on HotpotQA it merged a pair of
    // steps in 12 of 50 questions.
    default: 0.85,
    range: OptionRange {
        min: 0.0,
        min_exclusive: false,
        max: Some(1.0),
    },
};
const PERPLEXITY_THRESHOLD: Number = Number {
    name: "perplexity-threshold",
    help: "A step whose check answer has a lower perplexity has sufficient knowledge; 0 takes the value `folio models calibrate` measured for the model.",
    default: 0.0,
    range: OptionRange {
        min: 0.0,
        min_exclusive: false,
        max: None,
    },
};
/// The threshold of a model never calibrated: SmolLM2-135M's greedy check
/// answers had perplexities of 1.07–1.61 (median 1.24) on the steps of
/// eight HotpotQA questions, and 1.5 marked the least certain.
const UNCALIBRATED_THRESHOLD: f64 = 1.5;

const SAMPLE_TEMPERATURE: Number = Number {
    name: "sample-temperature",
    help: "Temperature for proposing steps; sampling makes the alternatives differ.",
    default: 0.7,
    range: OptionRange {
        min: 0.0,
        min_exclusive: false,
        max: Some(2.0),
    },
};

/// The threshold the run uses and where it came from, with a note for the
/// trace when that is not a measurement of this model.
fn threshold(ctx: &MethodContext<'_>, given: f64) -> (f64, ThresholdSource, Option<String>) {
    if !ctx.llm_capabilities().logprobs {
        let note = "the backend gives no log-probabilities: each step's sufficiency is the model's own yes/no assessment, and no threshold applies";
        return (given, ThresholdSource::NotUsed, Some(note.into()));
    }
    if given > 0.0 {
        return (given, ThresholdSource::Given, None);
    }
    match ctx.calibration() {
        Ok(Some(c)) => (
            c.threshold,
            ThresholdSource::Calibrated {
                accuracy: c.accuracy,
                held_out_accuracy: c.held_out_accuracy,
            },
            None,
        ),
        Ok(None) => (
            UNCALIBRATED_THRESHOLD,
            ThresholdSource::Uncalibrated,
            Some(format!(
                "the model has no calibrated sufficiency threshold, so SmolLM2-135M's {UNCALIBRATED_THRESHOLD} stood in; `folio models calibrate` measures this model's"
            )),
        ),
        Err(why) => (
            UNCALIBRATED_THRESHOLD,
            ThresholdSource::Uncalibrated,
            Some(format!(
                "{why}; SmolLM2-135M's {UNCALIBRATED_THRESHOLD} stood in for this model's threshold"
            )),
        ),
    }
}

#[async_trait::async_trait]
impl Method for CrpRag {
    fn info(&self) -> MethodInfo {
        MethodInfo {
            id: "crp-rag",
            name: "CRP-RAG",
            summary: "Grows a graph of reasoning steps for the question, gathers and checks knowledge for every step, and answers along the paths whose steps all have enough knowledge, or says which steps lack it.",
            retrieves: true,
            defaults: PAPER,
            options: vec![
                RETRIEVER.declare(),
                VARIANT.declare(),
                DEPTH.declare(),
                NODES.declare(),
                BRANCHING.declare(),
                PATHS.declare(),
                MERGE_THRESHOLD.declare(),
                PERPLEXITY_THRESHOLD.declare(),
                SAMPLE_TEMPERATURE.declare(),
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
        let variant = VARIANT.read(params)?;
        let budget = GraphBudget {
            depth: DEPTH.read(params)?,
            nodes: NODES.read(params)?,
            branching: BRANCHING.read(params)?,
            paths: PATHS.read(params)?,
        };
        let merge_threshold = MERGE_THRESHOLD.read(params)?;
        let (perplexity_threshold, threshold_source, threshold_note) =
            threshold(ctx, PERPLEXITY_THRESHOLD.read(params)?);
        let temperature = SAMPLE_TEMPERATURE.read(params)? as f32;
        let mut trace = CrpRagTrace {
            variant,
            k: params.k,
            budget,
            merge_threshold,
            perplexity_threshold,
            threshold_source,
            nodes: Vec::new(),
            edges: Vec::new(),
            merges: Vec::new(),
            stop: None,
            paths: Vec::new(),
            refused: false,
            passages: Vec::new(),
            unknown_citations: Vec::new(),
            notes: Vec::new(),
            retrieval: Vec::new(),
        };
        let mut graph = Graph::new(question);
        let mut grown = Grown::default();
        let growth = Growth {
            question,
            budget,
            merge_threshold,
            temperature,
        };
        let show = |trace: &mut CrpRagTrace, graph: &Graph| {
            trace.nodes = graph.nodes.clone();
            trace.edges = graph.edges.clone();
            ctx.checkpoint(&Trace::CrpRag(trace.clone()));
        };
        growth
            .grow(ctx, params, &mut graph, &mut grown, |graph, grown| {
                let mut partial = trace.clone();
                partial.merges = grown.merges.clone();
                show(&mut partial, graph);
            })
            .await?;
        trace.merges = grown.merges;
        trace.stop = grown.stop;
        trace.notes = threshold_note.into_iter().chain(grown.notes).collect();
        show(&mut trace, &graph);

        let gathering = Gathering {
            question,
            variant,
            perplexity_threshold,
        };
        gathering
            .gather(
                ctx,
                params,
                &mut graph,
                &mut trace.passages,
                &mut trace.notes,
            )
            .await?;
        show(&mut trace, &graph);

        let paths = match select(&graph, variant, budget.paths) {
            Selection::Paths(paths) => paths,
            Selection::Refused(insufficient) => {
                trace.refused = true;
                return Ok(Answer {
                    text: refusal(&graph, &insufficient, perplexity_threshold),
                    citations: Vec::new(),
                    trace: Trace::CrpRag(trace),
                    cut_off: None,
                });
            }
        };
        let short = paths
            .iter()
            .filter(|p| p.len() > 1 && !graph.nodes[p[p.len() - 1]].is_final)
            .count();
        if short > 0 {
            trace.notes.push(format!(
                "{short} of the {} paths reasoned along end before a final step",
                paths.len()
            ));
        }
        let reasoner = PathReasoner { question, variant };
        let reasoned = reasoner
            .reason(
                ctx,
                params,
                &graph,
                &trace.passages,
                paths,
                &mut trace.notes,
            )
            .await?;
        trace.paths = reasoned.iter().map(|(p, _)| p.clone()).collect();
        ctx.checkpoint(&Trace::CrpRag(trace.clone()));
        let answered = reasoner.conclude(ctx, params, &reasoned).await?;
        let (citations, unknown) = resolve(&answered.cited_in, &trace.passages);
        trace.unknown_citations = unknown;
        Ok(Answer {
            text: answered.text,
            citations,
            trace: Trace::CrpRag(trace),
            cut_off: answered.cut_off,
        })
    }
}

#[cfg(test)]
mod tests;
