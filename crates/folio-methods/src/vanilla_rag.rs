//! `vanilla-rag`: retrieve the top k chunks (hybrid search by default), show
//! them to the model as numbered documents, and map the `[n]` markers in its
//! answer back to files, heading paths and spans.

use std::fmt::Write as _;

use minijinja::context;
use serde::{Deserialize, Serialize};

use super::context::CitedAnswer;
use super::markdown::write_passages;
use super::shown::shown;
use super::{
    Answer, Citation, Method, MethodContext, MethodDefaults, MethodError, MethodInfo, MethodTrace,
    Params, Passage, RetrievalPart, RetrieverKind, Trace, ANSWER_STEP, RETRIEVER,
};
use folio_core::choice::Choice;
use folio_llm::prompts::Prompt;

/// The one answer call of a method that retrieves and then answers
/// (vanilla-rag, ig2rag): the numbered passages under the question.
pub(super) static ANSWER: Prompt =
    folio_llm::prompt!("vanilla-rag/answer.j2", ["question", "passages"]).writing_the_answer();
static PROMPTS: &[&Prompt] = &[&ANSWER];

pub struct VanillaRag;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct VanillaRagTrace {
    pub query: String,
    pub mode: RetrieverKind,
    pub k: usize,
    pub passages: Vec<Passage>,
    /// Citation markers in the answer that name no passage; they are left
    /// out of the citations.
    pub unknown_citations: Vec<usize>,
    /// How the retriever found the passages, when it is more than a search.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<RetrievalPart>>", optional)]
    pub retrieval: Vec<RetrievalPart>,
}

impl MethodTrace for VanillaRagTrace {
    fn passages(&self) -> Option<&[Passage]> {
        Some(&self.passages)
    }

    crate::over_any_retriever!();

    fn key_parts(&self) -> Vec<String> {
        Vec::new()
    }

    fn write_markdown(&self, out: &mut String, citations: &[Citation]) {
        let _ = writeln!(
            out,
            "{} passages were retrieved with {} search for the question and shown to the model as numbered documents.\n",
            self.passages.len(),
            self.mode.as_str(),
        );
        write_passages(out, &self.passages, &self.unknown_citations, citations);
    }
}

#[async_trait::async_trait]
impl Method for VanillaRag {
    fn info(&self) -> MethodInfo {
        MethodInfo {
            id: "vanilla-rag",
            name: "Vanilla RAG",
            summary: "Retrieves the k best passages and answers from them, citing each by number.",
            retrieves: true,
            defaults: MethodDefaults::COMMON,
            options: vec![RETRIEVER.declare()],
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
        let passages = ctx.retrieve(question, params).await?;
        if passages.is_empty() {
            return Err(MethodError::EmptyLibrary);
        }
        let mut trace = VanillaRagTrace {
            query: question.to_string(),
            mode: RETRIEVER.read(params)?,
            k: params.k,
            passages,
            unknown_citations: Vec::new(),
            retrieval: Vec::new(),
        };
        ctx.checkpoint(&Trace::VanillaRag(trace.clone()));
        let answer = answer_from_passages(ctx, question, &trace.passages, params).await?;
        trace.unknown_citations = answer.unknown;
        Ok(Answer {
            text: answer.text,
            citations: answer.citations,
            trace: Trace::VanillaRag(trace),
            cut_off: answer.cut_off,
        })
    }
}

/// The numbered passages under the question, answered with [`ANSWER`].
pub(super) async fn answer_from_passages(
    ctx: &MethodContext<'_>,
    question: &str,
    passages: &[Passage],
    params: &Params,
) -> Result<CitedAnswer, MethodError> {
    let vars = context!(question, passages => shown(passages));
    ctx.cited_answer(ANSWER_STEP, &ANSWER, vars, params, passages)
        .await
}
