//! Question answering methods. Every method has the same shape
//! (DESIGN.md, "Methods share one shape"): it gets a [`MethodContext`] with
//! retrieval, the language model and prompts, reports progress as typed
//! [`RunEvent`]s, and returns an [`Answer`] with citations and a typed
//! [`Trace`]. [`runner::ask`] wraps a method so every answer, failed ones
//! included, is stored as a run.

pub mod activerag;
pub mod attribution;
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
mod markers;
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
mod words;

use serde::Serialize;

use crate::llm::Sampling;
use crate::store::CutOff;

pub use activerag::{ActiveRagTrace, ActiveRagVariant};
pub use citations::{cited_numbers, Citation, CitedBy};
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
    /// Set when the answer reached `max_tokens` before it finished.
    pub cut_off: Option<CutOff>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct MethodInfo {
    pub id: &'static str,
    pub name: &'static str,
    pub summary: &'static str,
    /// Whether the method reads the library (llm-only does not).
    pub retrieves: bool,
    /// The k and sampling its paper runs it with.
    pub defaults: MethodDefaults,
    pub options: Vec<MethodOption>,
}

/// The settings a method runs with when a request names none: its paper's
/// (docs/methods.md says where each comes from). A request's own `k` or
/// temperature replaces them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct MethodDefaults {
    /// Passages per retrieval.
    pub k: usize,
    /// `None`: no temperature of its own; the configured one applies.
    pub temperature: Option<f32>,
    /// `None`: the backend's usual truncation of a sampled draw.
    pub sampling: Option<Sampling>,
}

/// `k 10, temperature 0` or `k 5, temperature 0.7, top-p 0.8, top-k 20`,
/// for `folio methods` and help text.
impl std::fmt::Display for MethodDefaults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "k {}, ", self.k)?;
        match self.temperature {
            Some(t) => write!(f, "temperature {t}")?,
            None => write!(f, "the configured temperature")?,
        }
        if let Some(s) = self.sampling {
            write!(f, ", top-p {}, top-k {}", s.top_p, s.top_k)?;
        }
        Ok(())
    }
}

impl MethodDefaults {
    /// For a method without a paper's settings: the common k and the
    /// configured temperature.
    pub const COMMON: MethodDefaults = MethodDefaults {
        k: runner::DEFAULT_K,
        temperature: None,
        sampling: None,
    };
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
            k: None,
            temperature: None,
            configured_temperature: 0.2,
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
