//! How an ActiveRAG answer was built: each agent's reply, in order.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::markdown::{block, option_name, write_notes, write_passages};
use crate::{brief, Citation, MethodTrace, Passage, RetrievalPart};
use folio_core::choice::Choice;

/// The learning behaviour the assimilation and accommodation agents mimic
/// (the paper's section 3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "lowercase")]
pub enum ActiveRagVariant {
    Anchoring,
    Association,
    Reasoning,
    Reflection,
}

impl Choice for ActiveRagVariant {
    const ALL: &'static [ActiveRagVariant] = &[
        ActiveRagVariant::Association,
        ActiveRagVariant::Anchoring,
        ActiveRagVariant::Reasoning,
        ActiveRagVariant::Reflection,
    ];

    fn as_str(self) -> &'static str {
        match self {
            ActiveRagVariant::Association => "association",
            ActiveRagVariant::Anchoring => "anchoring",
            ActiveRagVariant::Reasoning => "reasoning",
            ActiveRagVariant::Reflection => "reflection",
        }
    }
}

/// Which agents run: all of them, or one of the paper's ablations
/// (ActiveRAG §5.2, Table 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "kebab-case")]
pub enum ActiveRagAgents {
    #[default]
    All,
    /// No knowledge assimilation: the accommodation reads the passages
    /// themselves instead of notes taken from them.
    NoAssimilation,
    /// No thought accommodation: the answer is written from the notes
    /// alone, with no first attempt to correct (so none is made).
    NoAccommodation,
}

impl Choice for ActiveRagAgents {
    const ALL: &'static [ActiveRagAgents] = &[
        ActiveRagAgents::All,
        ActiveRagAgents::NoAssimilation,
        ActiveRagAgents::NoAccommodation,
    ];

    fn as_str(self) -> &'static str {
        match self {
            ActiveRagAgents::All => "all",
            ActiveRagAgents::NoAssimilation => "no-assimilation",
            ActiveRagAgents::NoAccommodation => "no-accommodation",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct ActiveRagTrace {
    pub variant: ActiveRagVariant,
    /// Absent in runs from before the ablations: all agents ran.
    #[serde(default)]
    pub agents: ActiveRagAgents,
    pub k: usize,
    pub passages: Vec<Passage>,
    /// Self-inquiry: the model's chain of thought without sources (empty
    /// for `no-accommodation`, which has no use for it).
    pub self_inquiry: String,
    /// Knowledge assimilation: what it took from the passages (empty for
    /// `no-assimilation`).
    pub assimilation: String,
    /// Thought accommodation: the corrected reasoning, ending in the
    /// answer; for `no-accommodation`, the reasoning from the notes alone.
    pub accommodation: String,
    /// Set when the accommodation had no "Answer:" line, so the whole
    /// reply became the answer.
    pub answer_line_missing: bool,
    pub unknown_citations: Vec<usize>,
    /// How the retriever found the passages, when it is more than a search.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<RetrievalPart>>", optional)]
    pub retrieval: Vec<RetrievalPart>,
    /// Agents' replies cut off at max_tokens, kept as they were.
    pub notes: Vec<String>,
}

impl MethodTrace for ActiveRagTrace {
    fn passages(&self) -> Option<&[Passage]> {
        Some(&self.passages)
    }

    crate::over_any_retriever!();

    fn key_parts(&self) -> Vec<String> {
        vec![
            format!("self-inquiry: {}", brief(&self.self_inquiry)),
            format!("assimilation: {}", brief(&self.assimilation)),
        ]
    }

    fn write_markdown(&self, out: &mut String, citations: &[Citation]) {
        let _ = writeln!(
            out,
            "ActiveRAG ({} instructions): three agents, in order.\n",
            option_name(self.variant)
        );
        for (title, text) in [
            ("Self-inquiry (no sources)", &self.self_inquiry),
            ("Knowledge assimilation", &self.assimilation),
            ("Thought accommodation", &self.accommodation),
        ] {
            let _ = writeln!(out, "### {title}\n\n{}\n", block(text));
        }
        if self.answer_line_missing {
            out.push_str(
                "The accommodation had no \"Answer:\" line, so all of it is the answer.\n\n",
            );
        }
        write_notes(out, "Agents", &self.notes);
        write_passages(out, &self.passages, &self.unknown_citations, citations);
    }
}
