//! How an IRCoT answer was built: the reasoning, one sentence per step,
//! each with the passages its sentence retrieved, and why the loop ended.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::markdown::{inline, write_notes, write_passages};
use crate::{brief, Citation, MethodTrace, Passage, RetrievalPart};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct IrcotTrace {
    /// Passages per retrieval.
    pub k: usize,
    pub max_steps: usize,
    pub max_passages: usize,
    /// The passages the question itself retrieved, by number.
    pub first: Vec<usize>,
    pub steps: Vec<IrcotStep>,
    pub stop: IrcotStop,
    /// Every passage collected, numbered once each in the order found; the
    /// answer was written from all of them.
    pub passages: Vec<Passage>,
    pub unknown_citations: Vec<usize>,
    /// Repairs, cut-offs and passages left out past the budget, in words.
    pub notes: Vec<String>,
    /// How the retriever found the passages, when it is more than a search.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<RetrievalPart>>", optional)]
    pub retrieval: Vec<RetrievalPart>,
}

/// One turn of the loop: a sentence of reasoning, then a retrieval for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct IrcotStep {
    pub sentence: String,
    /// The passages the sentence retrieved, by number, best first (none
    /// when the sentence gave the answer).
    pub found: Vec<usize>,
    /// How many of them were new to the collection.
    pub new: usize,
}

/// Why the reasoning stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "kebab-case")]
pub enum IrcotStop {
    /// A sentence said "the answer is".
    Answered,
    /// The loop reached its step cap.
    StepCap,
    /// The model wrote no usable sentence.
    NoSentence,
}

impl IrcotStop {
    fn explained(self) -> &'static str {
        match self {
            IrcotStop::Answered => "a sentence gave the answer",
            IrcotStop::StepCap => "it reached its step cap",
            IrcotStop::NoSentence => "the model wrote no usable sentence",
        }
    }
}

impl MethodTrace for IrcotTrace {
    fn passages(&self) -> Option<&[Passage]> {
        Some(&self.passages)
    }

    crate::over_any_retriever!();

    fn key_parts(&self) -> Vec<String> {
        self.steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                format!(
                    "step {}: {} (+{} passages)",
                    i + 1,
                    brief(&s.sentence),
                    s.new
                )
            })
            .chain([format!("stopped: {}", self.stop.explained())])
            .collect()
    }

    fn write_markdown(&self, out: &mut String, citations: &[Citation]) {
        let _ = writeln!(
            out,
            "IRCoT retrieved {} passages for the question, then reasoned one sentence at a time, retrieving {} more for each sentence (at most {} steps, {} passages). It stopped after {} step(s): {}.\n",
            self.first.len(),
            self.k,
            self.max_steps,
            self.max_passages,
            self.steps.len(),
            self.stop.explained(),
        );
        for (i, step) in self.steps.iter().enumerate() {
            let found: Vec<String> = step.found.iter().map(|n| format!("[{n}]")).collect();
            let _ = writeln!(
                out,
                "{}. {}{}",
                i + 1,
                inline(&step.sentence),
                if found.is_empty() {
                    String::new()
                } else {
                    format!(" → {} ({} new)", found.join(" "), step.new)
                }
            );
        }
        if !self.steps.is_empty() {
            out.push('\n');
        }
        write_notes(out, "Reasoning", &self.notes);
        write_passages(out, &self.passages, &self.unknown_citations, citations);
    }
}
