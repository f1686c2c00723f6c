//! How an answer was built. Each method's trace type lives in its folder
//! and says, through [`MethodTrace`], what every reader of a trace needs:
//! the passages shown, how retrieval found them, the trace in a few lines
//! (`folio eval diff`) and its section of an exported answer. [`Trace`],
//! one variant per method, is made by the registry in `methods/mod.rs`
//! and stored as JSON with the run.

use serde::{Deserialize, Serialize};

use super::{Citation, RetrievalPart, Trace};
use folio_documents::loaders::ocr::OcrMark;
use folio_documents::table::TableRows;

/// Longest a step, outline heading or agent note is shown in a trace's
/// key parts before it is cut.
const SHOWN_CHARS: usize = 160;

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
    /// The table rows it holds, when it is (a piece of) one table: its
    /// text is then the header's lines, a blank line, and the rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rows: Option<TableRows>,
}

#[cfg(any(test, feature = "testing"))]
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
            rows: None,
        }
    }
}

/// What a method's trace tells about its run, whatever the method.
pub trait MethodTrace {
    /// The passages the method showed the model, numbered as the prompt
    /// numbered them; `None` for a method that retrieves nothing.
    fn passages(&self) -> Option<&[Passage]>;

    /// Where the run's retriever records how it found the passages, for a
    /// method that reasons over any retriever (`--retriever`); `None` for
    /// one that keeps its own retrieval in its trace or retrieves nothing.
    fn retrieval_mut(&mut self) -> Option<&mut Vec<RetrievalPart>> {
        None
    }

    /// What [`MethodTrace::retrieval_mut`] recorded.
    fn retrieval(&self) -> &[RetrievalPart] {
        &[]
    }

    /// The method's own lines of the trace in a few lines: what a reader
    /// comparing two answers needs to see why they differ (the outline,
    /// the route, the reasoning steps). The retrieval's and passages'
    /// lines are added around them.
    fn key_parts(&self) -> Vec<String>;

    /// Whether the method refused to answer from what it read.
    fn refused(&self) -> bool {
        false
    }

    /// What an exported answer shows right under the answer, before its
    /// sources: the body the answer was read from (PAGER's page).
    fn write_body(&self, _out: &mut String) {}

    /// The method's part of "How this answer was built" in an exported
    /// answer, after how the retriever found the passages.
    fn write_markdown(&self, out: &mut String, citations: &[Citation]);
}

/// The two [`MethodTrace`] methods of a trace whose method reasons over
/// any retriever: the run's retriever's parts are kept in its `retrieval`
/// field.
macro_rules! over_any_retriever {
    () => {
        fn retrieval_mut(&mut self) -> Option<&mut Vec<$crate::RetrievalPart>> {
            Some(&mut self.retrieval)
        }

        fn retrieval(&self) -> &[$crate::RetrievalPart] {
            &self.retrieval
        }
    };
}
pub(crate) use over_any_retriever;

impl Trace {
    /// Records how the run's retriever found the passages, on the traces of
    /// the methods that reason over any retriever.
    pub fn attach_retrieval(&mut self, parts: &[RetrievalPart]) {
        if let Some(slot) = self.method_trace_mut().retrieval_mut() {
            *slot = parts.to_vec();
        }
    }

    /// How the retriever found the passages, when it is more than a search
    /// and the method reasons over any retriever.
    pub fn retrieval(&self) -> &[RetrievalPart] {
        self.method_trace().retrieval()
    }

    /// The passages the method showed the model (see [`MethodTrace::passages`]).
    pub fn passages(&self) -> Option<&[Passage]> {
        self.method_trace().passages()
    }

    /// The trace in a few lines, as `folio eval diff` prints it: how the
    /// retriever found the passages, the method's own parts, the passages
    /// read, and a refusal.
    pub fn key_parts(&self) -> Vec<String> {
        let trace = self.method_trace();
        let mut parts: Vec<String> = trace
            .retrieval()
            .iter()
            .map(RetrievalPart::key_part)
            .collect();
        parts.extend(trace.key_parts());
        if let Some(passages) = trace.passages() {
            parts.push(format!("passages: {}", passage_list(passages)));
        }
        if trace.refused() {
            parts.push("refused to answer".into());
        }
        parts
    }

    /// The body shown under the answer (see [`MethodTrace::write_body`]).
    pub fn write_body(&self, out: &mut String) {
        self.method_trace().write_body(out);
    }

    /// "How this answer was built", less its heading: how the retriever
    /// found the passages, then the method's own section.
    pub fn write_markdown(&self, out: &mut String, citations: &[Citation]) {
        for part in self.retrieval() {
            part.write_markdown(out);
        }
        self.method_trace().write_markdown(out, citations);
    }
}

/// Each passage's headings (its file name where it has none), once, in
/// order: a corpus of generated file names is told apart by its titles.
fn passage_list(passages: &[Passage]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for p in passages {
        let name = match p.heading_path.trim() {
            "" => p.path.rsplit('/').next().unwrap_or(&p.path),
            headings => headings,
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// `text` on one line, cut after [`SHOWN_CHARS`] characters: a step,
/// heading or note as a trace's key parts show it.
pub fn brief(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LlmOnlyTrace;

    #[test]
    fn long_text_is_cut_on_a_character_boundary_and_spaces_folded() {
        assert_eq!(brief("a  b\nc"), "a b c");
        let long = "é".repeat(SHOWN_CHARS + 5);
        let shown = brief(&long);
        assert_eq!(shown.chars().count(), SHOWN_CHARS + 1);
        assert!(shown.ends_with('…'));
    }

    #[test]
    fn passages_are_named_by_heading_or_file_once() {
        let passage = |path: &str, heading: &str| Passage {
            heading_path: heading.into(),
            ..Passage::for_test(1, 1, path, "")
        };
        let list = passage_list(&[
            passage("/c/a.md", ""),
            passage("/c/b.md", "Rc"),
            passage("/c/a.md", ""),
        ]);
        assert_eq!(list, "a.md, Rc");
        assert_eq!(passage_list(&[]), "none");
        assert_eq!(
            Trace::LlmOnly(LlmOnlyTrace {}).key_parts(),
            ["answered from the model's own knowledge"]
        );
    }
}
