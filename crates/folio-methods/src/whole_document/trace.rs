//! What a whole-document answer shows of how it was built: every section
//! with its summary (kept from an earlier answer, or written now), the
//! calls it was expected to take, and which summaries the answer read.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::plan::DocumentSection;
use crate::markdown::{inline, write_passages};
use crate::{Citation, MethodTrace, Passage};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct WholeDocumentTrace {
    pub path: String,
    pub title: String,
    /// Every section in reading order, the document itself first.
    pub sections: Vec<SectionSummary>,
    /// Model calls this answer was expected to take, counted before the
    /// first: one per summary not kept yet, and the answer.
    pub estimated_calls: usize,
    pub max_calls: usize,
    /// The deepest heading level whose summaries the answer read (0: the
    /// document's summary alone); deeper ones did not fit the context.
    pub shown_depth: u32,
    /// The summaries the answer read, numbered as it cites them.
    pub passages: Vec<Passage>,
    /// Citation markers in the answer that name no section.
    pub unknown_citations: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct SectionSummary {
    /// The heading's node in the document's structure tree.
    pub node: usize,
    pub depth: u32,
    pub heading_path: String,
    pub span_start: i64,
    pub span_end: i64,
    pub page: Option<i64>,
    /// Pieces its own text was cut into (1 when it fit one call).
    pub pieces: usize,
    /// `None` until written (a run stopped midway).
    pub summary: Option<String>,
    /// Kept from an earlier answer rather than written for this one.
    pub kept: bool,
    /// Its number in the answer's sources, when the answer read it.
    pub number: Option<usize>,
}

impl SectionSummary {
    pub(super) fn planned(section: &DocumentSection, kept: Option<&String>) -> SectionSummary {
        SectionSummary {
            node: section.node,
            depth: section.depth,
            heading_path: section.heading_path.clone(),
            span_start: section.span.start as i64,
            span_end: section.span.end as i64,
            page: section.span.page.map(i64::from),
            pieces: section.pieces.len().max(1),
            summary: kept.cloned(),
            kept: kept.is_some(),
            number: None,
        }
    }
}

impl MethodTrace for WholeDocumentTrace {
    fn passages(&self) -> Option<&[Passage]> {
        Some(&self.passages)
    }

    fn key_parts(&self) -> Vec<String> {
        vec![format!(
            "read all of {} ({} sections, headings down to level {})",
            self.title,
            self.sections.len(),
            self.shown_depth
        )]
    }

    fn write_markdown(&self, out: &mut String, citations: &[Citation]) {
        let kept = self.sections.iter().filter(|s| s.kept).count();
        let _ = writeln!(
            out,
            "The whole of *{}* was read: each of its {} sections summarised from its own text and the summaries of the sections under it ({kept} summaries kept from earlier answers; {} model calls expected, at most {}). The answer read the summaries down to heading level {}, numbered below.\n",
            inline(&self.title),
            self.sections.len(),
            self.estimated_calls,
            self.max_calls,
            self.shown_depth,
        );
        write_passages(out, &self.passages, &self.unknown_citations, citations);
    }
}
