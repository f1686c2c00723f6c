//! `ig2rag` (iG²RAG, §3.2): seed a Personalized PageRank walk with the h
//! chunks most similar to the question, walk the information-gain graph
//! (built offline by `folio graph build`), and answer from the k chunks
//! the walk ranks highest in one model call. `sim-ppr` walks the same pairs
//! weighted by similarity and `greedy` follows the strongest gain edges:
//! the paper's ablations. Without a built graph the walk stays on the
//! seeds, which the trace says. With `links=follow` a notes vault's links
//! are edges too, beside the gain graph's.

#[cfg(test)]
mod tests;
mod trace;
mod walk;

pub use trace::{
    write_walk, GainWalkPart, GraphCoverage, GraphEdge, GraphNode, Ig2RagTrace, Ig2RagVariant,
    Seed, WalkLinks, WalkStats,
};
pub use walk::{walk, WalkSettings};

use super::vanilla_rag::{answer_from_passages, ANSWER};
use super::{
    Answer, Count, Method, MethodContext, MethodDefaults, MethodError, MethodInfo, Number,
    OptionRange, Params, Pick, Trace,
};
use folio_llm::prompts::Prompt;
use folio_llm::rubric::Rubric;

/// The walk's passages are answered as vanilla-rag answers its own.
static PROMPTS: &[&Prompt] = &[&ANSWER];

pub struct Ig2Rag;

/// The paper passes the walk's top 10 to the reader (its Recall@10) and
/// decodes at temperature 0.
const PAPER: MethodDefaults = MethodDefaults {
    k: 10,
    temperature: Some(0.0),
    sampling: None,
};

const H: Count = Count {
    name: "h",
    help: "Seeds: the h chunks most similar to the question start the walk.",
    default: WalkSettings::PAPER.h,
    min: 1,
    max: Some(100),
};
const ALPHA: Number = Number {
    name: "alpha",
    help: "The walk's restart probability; higher stays nearer the seeds.",
    default: WalkSettings::PAPER.alpha,
    range: OptionRange {
        min: 0.0,
        min_exclusive: true,
        max: Some(1.0),
    },
};
const RUBRIC: Pick<Rubric> = Pick {
    name: "rubric",
    help: "Which built graph to walk: the rubric it was scored with.",
    default: WalkSettings::PAPER.rubric,
};
const VARIANT: Pick<Ig2RagVariant> = Pick {
    name: "variant",
    help: "ig2rag walks the gain graph; sim-ppr walks the same pairs by similarity; greedy follows the strongest gain edges.",
    default: WalkSettings::PAPER.variant,
};
const LINKS: Pick<WalkLinks> = Pick {
    name: "links",
    help: "follow: a notes vault's links are edges too, beside the gain graph's, so the walk also goes where the notes point (and reaches past the seeds before a graph is built).",
    default: WalkSettings::PAPER.links,
};

#[async_trait::async_trait]
impl Method for Ig2Rag {
    fn info(&self) -> MethodInfo {
        MethodInfo {
            id: "ig2rag",
            name: "iG²RAG",
            summary: "Walks the information-gain graph (folio graph build) from the passages most similar to the question and answers from the k it ranks highest, in one model call.",
            retrieves: true,
            defaults: PAPER,
            options: vec![
                H.declare(),
                ALPHA.declare(),
                RUBRIC.declare(),
                VARIANT.declare(),
                LINKS.declare(),
            ],
        }
    }

    fn prompts(&self) -> &'static [&'static Prompt] {
        PROMPTS
    }

    async fn run(
        &self,
        ctx: &MethodContext<'_>,
        question: &str,
        params: &Params,
    ) -> Result<Answer, MethodError> {
        let settings = WalkSettings {
            h: H.read(params)?,
            alpha: ALPHA.read(params)?,
            rubric: RUBRIC.read(params)?,
            variant: VARIANT.read(params)?,
            links: LINKS.read(params)?,
        };
        let (passages, ranking) = walk(ctx, question, params.k, settings).await?;
        let mut trace = Ig2RagTrace {
            ranking,
            passages,
            unknown_citations: Vec::new(),
        };
        ctx.checkpoint(&Trace::Ig2rag(trace.clone()));
        let answer = answer_from_passages(ctx, question, &trace.passages, params).await?;
        trace.unknown_citations = answer.unknown;
        Ok(Answer {
            text: answer.text,
            citations: answer.citations,
            trace: Trace::Ig2rag(trace),
            cut_off: answer.cut_off,
        })
    }
}
