//! `vanilla-rag`: retrieve the top k chunks (hybrid search by default), show
//! them to the model as numbered documents, and map the `[n]` markers in its
//! answer back to files, heading paths and spans.

use super::{
    Answer, Method, MethodContext, MethodDefaults, MethodError, MethodInfo, Params, Trace,
    VanillaRagTrace, RETRIEVER,
};

pub struct VanillaRag;

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
        let answer = ctx
            .answer_from_passages(question, &trace.passages, params)
            .await?;
        trace.unknown_citations = answer.unknown;
        Ok(Answer {
            text: answer.text,
            citations: answer.citations,
            trace: Trace::VanillaRag(trace),
            cut_off: answer.cut_off,
        })
    }
}
