//! `llm-only`: the model answers from its own weights, with no documents.
//! The baseline that shows what retrieval adds.

use minijinja::context;

use super::context::{answer_text, Written};
use super::{
    Answer, Method, MethodContext, MethodDefaults, MethodError, MethodInfo, Params, Trace,
};
use crate::llm::prompts::PromptId;

pub struct LlmOnly;

const STEP: &str = "answer";

#[async_trait::async_trait]
impl Method for LlmOnly {
    fn info(&self) -> MethodInfo {
        MethodInfo {
            id: "llm-only",
            name: "LLM only",
            summary: "The model answers from what it already knows; no documents are read.",
            retrieves: false,
            defaults: MethodDefaults::COMMON,
            options: Vec::new(),
        }
    }

    async fn run(
        &self,
        ctx: &MethodContext<'_>,
        question: &str,
        params: &Params,
    ) -> Result<Answer, MethodError> {
        ctx.checkpoint(&Trace::LlmOnly);
        let completion = ctx
            .generate(STEP, PromptId::LlmOnlyAnswer, context!(question), params)
            .await?;
        let Written { text, cut_off } = answer_text(STEP, completion, params.max_tokens)?;
        Ok(Answer {
            text,
            citations: Vec::new(),
            trace: Trace::LlmOnly,
            cut_off,
        })
    }
}
