//! How a PAGER answer was built: the outline, then one step per filled slot
//! with the page as it stood afterwards.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::page::Page;
use crate::markdown::{block, inline, option_name, write_notes, write_passages};
use crate::{brief, Citation, MethodTrace, Passage, RetrievalPart};
use folio_core::choice::Choice;

/// The paper's method and its ablations (PAGER, section 5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "kebab-case")]
pub enum PagerVariant {
    /// One slot at a time: sub-query from the current page, retrieve, fill.
    Iterative,
    /// Sub-queries for every slot in one call, then all fills at once.
    Parallel,
    /// One retrieval for the question; every slot is filled from it.
    NoIter,
    /// No outline: retrieve and summarise until the summaries suffice.
    NoOutline,
}

impl Choice for PagerVariant {
    const ALL: &'static [PagerVariant] = &[
        PagerVariant::Iterative,
        PagerVariant::Parallel,
        PagerVariant::NoIter,
        PagerVariant::NoOutline,
    ];

    fn as_str(self) -> &'static str {
        match self {
            PagerVariant::Iterative => "iterative",
            PagerVariant::Parallel => "parallel",
            PagerVariant::NoIter => "no-iter",
            PagerVariant::NoOutline => "no-outline",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct PagerTrace {
    pub variant: PagerVariant,
    pub slots_max: usize,
    pub k: usize,
    /// The model's reasoning before it wrote the outline.
    pub reasoning: String,
    /// The outline as first parsed, every slot empty.
    pub outline: Page,
    /// What the outline needed to be usable (repairs, a retry).
    pub outline_notes: Vec<String>,
    pub steps: Vec<PagerStep>,
    /// The page now: finished once every step is done.
    pub page: Page,
    /// Every passage retrieved, numbered once each; steps refer to them.
    pub passages: Vec<Passage>,
    pub unknown_citations: Vec<usize>,
    /// How the retriever found the passages, when it is more than a search.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<RetrievalPart>>", optional)]
    pub retrieval: Vec<RetrievalPart>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct PagerStep {
    /// The slot this step filled, counted from 0.
    pub slot: usize,
    pub heading: String,
    pub sub_query: String,
    /// Numbers of the passages retrieved for this step, best first.
    pub sources: Vec<usize>,
    pub text: String,
    /// Repairs and retries, in words; empty when the reply was usable as it was.
    pub notes: Vec<String>,
    /// No usable text came back, even after a retry.
    pub failed: bool,
    /// Jaccard overlap of this step's passages with all earlier steps'
    /// (the paper's retrieval-diversity measure); `None` for the first step.
    pub overlap: Option<f64>,
    /// The summariser's verdict (`no-outline` only).
    pub sufficient: Option<bool>,
    /// The page in markdown right after this step.
    pub page_after: String,
}

impl MethodTrace for PagerTrace {
    fn passages(&self) -> Option<&[Passage]> {
        Some(&self.passages)
    }

    crate::over_any_retriever!();

    fn key_parts(&self) -> Vec<String> {
        let headings: Vec<String> = self
            .outline
            .sections
            .iter()
            .map(|s| brief(&s.heading))
            .collect();
        vec![format!("outline: {}", headings.join(" / "))]
    }

    /// The page is what the answer was read from: it is the body.
    fn write_body(&self, out: &mut String) {
        let _ = writeln!(out, "## {}\n", inline(&self.page.title));
        for section in &self.page.sections {
            let _ = writeln!(out, "### {}\n", inline(&section.heading));
            let body = section.body.as_deref().unwrap_or("(not filled)");
            let _ = writeln!(out, "{}\n", block(body));
        }
    }

    fn write_markdown(&self, out: &mut String, citations: &[Citation]) {
        let _ = writeln!(
            out,
            "PAGER ({} variant) planned the page above, then filled its {} section(s) one step at a time, retrieving {} passages for each.\n",
            option_name(self.variant),
            self.page.sections.len(),
            self.k,
        );
        if !self.reasoning.is_empty() {
            let _ = writeln!(out, "**Planning:** {}\n", block(&self.reasoning));
        }
        write_notes(out, "Outline", &self.outline_notes);
        for step in &self.steps {
            let sources: Vec<String> = step.sources.iter().map(|n| format!("[{n}]")).collect();
            let overlap = step
                .overlap
                .map(|o| format!("; overlap with earlier steps {o:.2}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "- **{}** searched *{}* → {}{overlap}{}",
                inline(&step.heading),
                inline(&step.sub_query),
                sources.join(" "),
                if step.failed {
                    " — no usable text"
                } else {
                    ""
                }
            );
            for note in &step.notes {
                let _ = writeln!(out, "  - {}", inline(note));
            }
        }
        out.push('\n');
        write_passages(out, &self.passages, &self.unknown_citations, citations);
    }
}
