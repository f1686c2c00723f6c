//! `vanilla-rag`: retrieve the top k chunks (hybrid search by default), show
//! them to the model as numbered documents, and map the `[n]` markers in its
//! answer back to files, heading paths and spans.

use minijinja::context;
use serde::Serialize;
use serde_json::Value;

use super::citations::resolve;
use super::context::finished_text;
use super::{
    Answer, Method, MethodContext, MethodError, MethodInfo, MethodOption, Params, Trace,
    VanillaRagTrace,
};
use crate::llm::prompts::{as_document_data, PromptId};
use crate::retrieve::SearchMode;

pub struct VanillaRag;

const STEP: &str = "answer";

/// A passage as the prompt template sees it.
#[derive(Serialize)]
struct PromptPassage {
    number: usize,
    source: String,
    text: String,
}

#[async_trait::async_trait]
impl Method for VanillaRag {
    fn info(&self) -> MethodInfo {
        MethodInfo {
            id: "vanilla-rag",
            name: "Vanilla RAG",
            summary: "Retrieves the k best passages and answers from them, citing each by number.",
            retrieves: true,
            options: vec![MethodOption {
                name: "mode",
                help: "How passages are found: hybrid (dense + BM25), dense or bm25.",
                default: Value::from("hybrid"),
                choices: vec!["hybrid", "dense", "bm25"],
            }],
        }
    }

    async fn run(
        &self,
        ctx: &MethodContext<'_>,
        question: &str,
        params: &Params,
    ) -> Result<Answer, MethodError> {
        let mode: SearchMode = params.option("mode")?;
        let passages = ctx.retrieve(question, params.k, mode).await?;
        if passages.is_empty() {
            return Err(MethodError::EmptyLibrary);
        }
        let mut trace = VanillaRagTrace {
            query: question.to_string(),
            mode,
            k: params.k,
            passages,
            unknown_citations: Vec::new(),
        };
        ctx.checkpoint(&Trace::VanillaRag(trace.clone()));
        let shown: Vec<PromptPassage> = trace
            .passages
            .iter()
            .map(|p| PromptPassage {
                number: p.number,
                source: as_document_data(&source_label(&p.path, &p.heading_path)).replace('"', "'"),
                text: as_document_data(&p.text),
            })
            .collect();
        let completion = ctx
            .generate(
                STEP,
                PromptId::VanillaRagAnswer,
                context!(question, passages => shown),
                params,
            )
            .await?;
        let text = finished_text(STEP, completion, params.max_tokens)?;
        let (citations, unknown) = resolve(&text, &trace.passages);
        trace.unknown_citations = unknown;
        Ok(Answer {
            text,
            citations,
            trace: Trace::VanillaRag(trace),
        })
    }
}

/// The file name and heading path: enough for the model to tell passages
/// apart without exposing the person's directory layout in every prompt.
fn source_label(path: &str, heading_path: &str) -> String {
    let name = std::path::Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if heading_path.is_empty() {
        name.into_owned()
    } else {
        format!("{name} › {heading_path}")
    }
}
