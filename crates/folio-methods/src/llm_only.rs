//! `llm-only`: the model answers from its own weights, with no documents.
//! The baseline that shows what retrieval adds.

use minijinja::context;
use serde::{Deserialize, Serialize};

use super::context::{answer_text, Written};
use super::{
    Answer, Citation, Method, MethodContext, MethodDefaults, MethodError, MethodInfo, MethodTrace,
    Params, Passage, Trace,
};
use folio_llm::prompts::Prompt;

pub struct LlmOnly;

/// llm-only reads nothing, so its trace holds nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct LlmOnlyTrace {}

impl MethodTrace for LlmOnlyTrace {
    fn passages(&self) -> Option<&[Passage]> {
        None
    }

    fn key_parts(&self) -> Vec<String> {
        vec!["answered from the model's own knowledge".into()]
    }

    fn write_markdown(&self, out: &mut String, _citations: &[Citation]) {
        out.push_str("The model answered from what it already knows; no documents were read.\n\n");
    }
}

const STEP: &str = super::ANSWER_STEP;

static ANSWER: Prompt = folio_llm::prompt!("llm-only/answer.j2", ["question"]).writing_the_answer();
static PROMPTS: &[&Prompt] = &[&ANSWER];

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

    fn prompts(&self) -> &'static [&'static Prompt] {
        PROMPTS
    }

    async fn run(
        &self,
        ctx: &MethodContext<'_>,
        question: &str,
        params: &Params,
    ) -> Result<Answer, MethodError> {
        ctx.checkpoint(&Trace::LlmOnly(LlmOnlyTrace {}));
        let completion = ctx
            .generate(STEP, &ANSWER, context!(question), params)
            .await?;
        let Written { text, cut_off } = answer_text(STEP, completion, params.max_tokens)?;
        Ok(Answer {
            text,
            citations: Vec::new(),
            trace: Trace::LlmOnly(LlmOnlyTrace {}),
            cut_off,
        })
    }
}
