//! How an answer was built, one variant per method, stored as JSON with the
//! run and rendered by the app and by markdown export.

use serde::{Deserialize, Serialize};

use super::crp_rag::CrpRagTrace;
use super::ig2rag::Ig2RagTrace;
use super::pager::PagerTrace;
use super::rdr2::Rdr2Trace;
use super::whole_document::WholeDocumentTrace;
use super::ActiveRagTrace;
use super::{RetrievalPart, RetrieverKind};
use crate::ingest::loaders::ocr::OcrMark;

/// A retrieved chunk as it was shown to the model, numbered as in the prompt.
/// The text is kept so a run still explains itself after the file changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct Passage {
    pub number: usize,
    pub chunk_id: i64,
    pub path: String,
    pub heading_path: String,
    pub span_start: i64,
    pub span_end: i64,
    pub page: Option<i64>,
    pub score: f64,
    pub text: String,
    /// Set when OCR read the passage's page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub ocr: Option<OcrMark>,
    /// Words in the text that read as instructions to the model (see
    /// `injection`). The passage was still shown as data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub suspected_instructions: Option<String>,
}

#[cfg(test)]
impl Passage {
    /// A passage for unit tests: `number` in the prompt, chunk `chunk_id`,
    /// of the file at `path`, reading `text`.
    pub fn for_test(number: usize, chunk_id: i64, path: &str, text: &str) -> Passage {
        Passage {
            number,
            chunk_id,
            path: path.into(),
            heading_path: String::new(),
            span_start: 0,
            span_end: 1,
            page: None,
            score: 1.0,
            text: text.into(),
            ocr: None,
            suspected_instructions: None,
        }
    }
}

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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(tag = "method", rename_all = "kebab-case")]
pub enum Trace {
    /// The model answered from its own weights; there is nothing to retrieve.
    LlmOnly,
    VanillaRag(VanillaRagTrace),
    Pager(PagerTrace),
    #[serde(rename = "activerag")]
    ActiveRag(ActiveRagTrace),
    Rdr2(Rdr2Trace),
    Ig2rag(Ig2RagTrace),
    CrpRag(CrpRagTrace),
    WholeDocument(WholeDocumentTrace),
}

impl Trace {
    /// Records how the run's retriever found the passages, on the traces of
    /// the methods that reason over any retriever. iG²RAG and RDR² keep
    /// their own retrieval in their traces; the others retrieve nothing.
    pub fn attach_retrieval(&mut self, parts: &[RetrievalPart]) {
        let slot = match self {
            Trace::VanillaRag(t) => &mut t.retrieval,
            Trace::Pager(t) => &mut t.retrieval,
            Trace::ActiveRag(t) => &mut t.retrieval,
            Trace::CrpRag(t) => &mut t.retrieval,
            Trace::LlmOnly | Trace::Rdr2(_) | Trace::Ig2rag(_) | Trace::WholeDocument(_) => return,
        };
        *slot = parts.to_vec();
    }

    /// How the retriever found the passages, when it is more than a search
    /// and the method reasons over any retriever.
    pub fn retrieval(&self) -> &[RetrievalPart] {
        match self {
            Trace::VanillaRag(t) => &t.retrieval,
            Trace::Pager(t) => &t.retrieval,
            Trace::ActiveRag(t) => &t.retrieval,
            Trace::CrpRag(t) => &t.retrieval,
            Trace::LlmOnly | Trace::Rdr2(_) | Trace::Ig2rag(_) | Trace::WholeDocument(_) => &[],
        }
    }
}
