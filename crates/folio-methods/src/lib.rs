//! Question answering methods. Every method has the same shape
//! (docs/architecture.md, "Where to add … a method"): it gets a [`MethodContext`] with
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
pub mod ircot;
pub mod links;
mod llm_only;
pub mod markdown;
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

use serde::{Deserialize, Serialize};

use folio_llm::prompts::Prompt;
use folio_llm::Sampling;
use folio_store::CutOff;

pub use activerag::{ActiveRagTrace, ActiveRagVariant};
pub use citations::{cited_numbers, place_in_document, Citation, CitedBy};
pub use context::{EventSink, MethodContext};
pub use error::MethodError;
pub use events::{RunEvent, ANSWER_STEP};
pub use llm_only::LlmOnlyTrace;
pub use options::{Count, Number, OptionRange, Pick, RETRIEVER};
pub use params::{MethodOption, Params};
pub use retrievers::{RetrievalPart, RetrieverKind};
pub(crate) use trace::over_any_retriever;
pub use trace::{brief, MethodTrace, Passage};
pub use vanilla_rag::VanillaRagTrace;

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

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ts_rs::TS, schemars::JsonSchema)]
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
    /// The prompts of the method's steps, loaded and checked with the others.
    fn prompts(&self) -> &'static [&'static Prompt];
    async fn run(
        &self,
        ctx: &MethodContext<'_>,
        question: &str,
        params: &Params,
    ) -> Result<Answer, MethodError>;
}

/// Makes the registry from one line per method: its trace's variant of
/// [`Trace`] (stored as `{"method": "<id>", ...}`, the id the method's
/// `info` gives), the trace type, and the method.
macro_rules! registry {
    ($($(#[$doc:meta])* $variant:ident($trace:ty) = $id:literal => $method:expr;)*) => {
        /// How an answer was built, one variant per method, stored as JSON
        /// with the run and rendered by the app and by markdown export.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
        #[ts(export)]
        #[serde(tag = "method")]
        pub enum Trace {
            $($(#[$doc])* #[serde(rename = $id)] $variant($trace),)*
        }

        impl Trace {
            /// What the method's trace tells about its run.
            pub fn method_trace(&self) -> &dyn MethodTrace {
                match self {
                    $(Trace::$variant(t) => t,)*
                }
            }

            fn method_trace_mut(&mut self) -> &mut dyn MethodTrace {
                match self {
                    $(Trace::$variant(t) => t,)*
                }
            }
        }

        static REGISTRY: &[&dyn Method] = &[$(&$method),*];

        /// Each line's trace tag, in order, to check against its method's id.
        #[cfg(test)]
        const TRACE_TAGS: &[&str] = &[$($id),*];
    };
}

registry! {
    /// The model answered from its own weights; there is nothing to retrieve.
    LlmOnly(llm_only::LlmOnlyTrace) = "llm-only" => llm_only::LlmOnly;
    VanillaRag(VanillaRagTrace) = "vanilla-rag" => vanilla_rag::VanillaRag;
    Pager(pager::PagerTrace) = "pager" => pager::Pager;
    ActiveRag(ActiveRagTrace) = "activerag" => activerag::ActiveRag;
    Rdr2(rdr2::Rdr2Trace) = "rdr2" => rdr2::Rdr2;
    Ig2rag(ig2rag::Ig2RagTrace) = "ig2rag" => ig2rag::Ig2Rag;
    CrpRag(crp_rag::CrpRagTrace) = "crp-rag" => crp_rag::CrpRag;
    WholeDocument(whole_document::WholeDocumentTrace) = "whole-document" => whole_document::WholeDocument;
    Ircot(ircot::IrcotTrace) = "ircot" => ircot::Ircot;
}

pub fn methods() -> &'static [&'static dyn Method] {
    REGISTRY
}

/// Every prompt a method's run may send: each method's steps, the rewrite
/// that makes a thread's follow-up a standalone question, and the request
/// that follows an answer of citation markers alone.
pub fn prompts() -> impl Iterator<Item = &'static Prompt> {
    REGISTRY
        .iter()
        .flat_map(|m| m.prompts().iter().copied())
        .chain([&conversation::REWRITE, &context::RESTATE])
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

    #[test]
    fn each_trace_is_tagged_with_its_methods_id() {
        let ids: Vec<&str> = methods().iter().map(|m| m.info().id).collect();
        assert_eq!(ids, TRACE_TAGS);
    }

    #[test]
    fn a_stored_trace_reads_back_as_it_was_written() {
        for stored in [
            serde_json::json!({"method": "llm-only"}),
            serde_json::json!({
                "method": "vanilla-rag",
                "query": "q",
                "mode": "hybrid",
                "k": 5,
                "passages": [],
                "unknown_citations": [],
            }),
        ] {
            let trace: Trace = serde_json::from_value(stored.clone()).unwrap();
            assert_eq!(serde_json::to_value(&trace).unwrap(), stored);
        }
    }

    #[test]
    fn every_method_declares_prompts_that_load() {
        for method in methods() {
            assert!(!method.prompts().is_empty(), "{}", method.info().id);
        }
        let all: Vec<&Prompt> = prompts().collect();
        folio_llm::prompts::Prompts::load(None, &all).unwrap();
    }

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
