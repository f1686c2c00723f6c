//! Question answering methods. Every method has the same shape
//! (DESIGN.md, "Methods share one shape"): it gets a [`MethodContext`] with
//! retrieval, the language model and prompts, reports progress as typed
//! [`RunEvent`]s, and returns an [`Answer`] with citations and a typed
//! [`Trace`]. [`runner::ask`] wraps a method so every answer, failed ones
//! included, is stored as a run.

pub mod activerag;
mod citations;
mod context;
mod conversation;
pub mod crp_rag;
mod error;
mod events;
pub mod ig2rag;
mod injection;
mod key_parts;
mod llm_only;
mod options;
pub mod pager;
mod params;
pub mod rdr2;
mod retrievers;
pub mod runner;
mod shown;
#[cfg(test)]
pub(crate) mod testing;
mod trace;
mod vanilla_rag;
pub mod whole_document;

use serde::Serialize;

pub use activerag::{ActiveRagTrace, ActiveRagVariant};
pub use citations::{cited_numbers, Citation};
pub use context::{EventSink, MethodContext};
pub use error::MethodError;
pub use events::RunEvent;
pub use options::{Count, Number, OptionRange, Pick, RETRIEVER};
pub use params::{MethodOption, Params};
pub use retrievers::{RetrievalPart, RetrieverKind};
pub use trace::{Passage, Trace, VanillaRagTrace};

/// What a method produced. Failures are [`MethodError`]s; the runner keeps
/// the trace the method last checkpointed on the context.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answer {
    pub text: String,
    pub citations: Vec<Citation>,
    pub trace: Trace,
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct MethodInfo {
    pub id: &'static str,
    pub name: &'static str,
    pub summary: &'static str,
    /// Whether the method reads the library (llm-only does not).
    pub retrieves: bool,
    pub options: Vec<MethodOption>,
}

#[async_trait::async_trait]
pub trait Method: Send + Sync {
    fn info(&self) -> MethodInfo;
    async fn run(
        &self,
        ctx: &MethodContext<'_>,
        question: &str,
        params: &Params,
    ) -> Result<Answer, MethodError>;
}

static REGISTRY: &[&dyn Method] = &[
    &llm_only::LlmOnly,
    &vanilla_rag::VanillaRag,
    &pager::Pager,
    &activerag::ActiveRag,
    &rdr2::Rdr2,
    &ig2rag::Ig2Rag,
    &crp_rag::CrpRag,
    &whole_document::WholeDocument,
];

pub fn methods() -> &'static [&'static dyn Method] {
    REGISTRY
}

pub fn find(id: &str) -> Result<&'static dyn Method, MethodError> {
    REGISTRY
        .iter()
        .copied()
        .find(|m| m.info().id == id)
        .ok_or_else(|| MethodError::UnknownMethod {
            id: id.to_string(),
            known: REGISTRY
                .iter()
                .map(|m| m.info().id)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::runner::ResolvedSettings;
    use super::*;

    /// Every declaration is consistent with itself: its default passes its
    /// own check, and every method that retrieves through the context lets
    /// the request choose the retriever.
    #[test]
    fn every_declared_default_resolves() {
        let settings = ResolvedSettings {
            k: 5,
            temperature: 0.0,
            max_tokens: 64,
            seed: 42,
        };
        for method in methods() {
            let info = method.info();
            let params = Params::resolve(&info, settings, &BTreeMap::new())
                .unwrap_or_else(|e| panic!("{}: {e}", info.id));
            assert_eq!(params.options.len(), info.options.len(), "{}", info.id);
            // iG²RAG walks its own graph; whole-document reads one document whole.
            let ranks_its_own_way = ["ig2rag", "whole-document"].contains(&info.id);
            assert_eq!(
                params.declares(RETRIEVER.name),
                info.retrieves && !ranks_its_own_way,
                "{}",
                info.id
            );
        }
    }
}
