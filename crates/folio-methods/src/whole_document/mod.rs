//! `whole-document`: answers a question about one document from all of it,
//! not from the passages a search finds. Its structure tree is summarised
//! bottom-up (each heading's section from its own text and its
//! subsections' summaries, long text in pieces first: map-reduce), and the
//! answer reads the section summaries, citing each by number.
//!
//! Summaries do not depend on the question, so they are kept
//! (`section_summaries`, keyed by content: see `plan`): a second question
//! about the same document costs one model call, and an edit re-summarises
//! only what it changed. The document is the question's scope, which must
//! hold exactly one (`folio ask --document PATH`, or Library's "Ask about
//! this document"). Before any call the method counts the calls it needs
//! and refuses a document that needs more than `max-calls`.

mod plan;
mod prompts;
mod trace;

use std::collections::HashMap;

use minijinja::context;
use serde::Serialize;

pub use trace::{SectionSummary, WholeDocumentTrace};

use super::shown::shown;
use super::{
    Answer, Count, Method, MethodContext, MethodDefaults, MethodError, MethodInfo, Params, Passage,
    Trace,
};
use folio_llm::prompts::as_document_data;
use folio_llm::prompts::Prompt;
use folio_llm::Completion;
use folio_retrieve::DocumentParts;
use plan::{depth_that_fits, DocumentSection, Plan};

pub struct WholeDocument;

/// The method's id: `folio ask --document` picks it, and an evaluation,
/// which asks about a corpus rather than one document, refuses it.
pub const ID: &str = "whole-document";

const MAX_CALLS: Count = Count {
    name: "max-calls",
    help: "Most model calls one answer may take; a document that needs more (its summaries not yet kept) is refused before any call.",
    default: 200,
    min: 2,
    max: None,
};
/// Most tokens a summary may take: two to four sentences.
const SUMMARY_TOKENS: u32 = 160;
/// The share of the model's context the shown summaries may fill.
const SHOWN_SHARE: f64 = 0.5;
const CHARS_PER_TOKEN: f64 = 3.0;

#[async_trait::async_trait]
impl Method for WholeDocument {
    fn info(&self) -> MethodInfo {
        MethodInfo {
            id: ID,
            name: "Whole document",
            summary: "Answers about one document from summaries of all its sections, built bottom-up and kept for the next question.",
            retrieves: true,
            defaults: MethodDefaults::COMMON,
            options: vec![MAX_CALLS.declare()],
        }
    }

    fn prompts(&self) -> &'static [&'static Prompt] {
        prompts::ALL
    }

    async fn run(
        &self,
        ctx: &MethodContext<'_>,
        question: &str,
        params: &Params,
    ) -> Result<Answer, MethodError> {
        let (path, parts) = the_document(ctx).await?;
        let title = parts.tree.title().to_string();
        let writer = format!(
            "{}\n{}",
            ctx.model_name(),
            ctx.prompt_fingerprint(&prompts::SUMMARIZE)
        );
        let plan = Plan::of(&parts.tree, &writer);
        let keys: Vec<&str> = plan
            .sections
            .iter()
            .flat_map(|s| {
                std::iter::once(s.key.as_str()).chain(s.pieces.iter().map(|p| p.key.as_str()))
            })
            .collect();
        let mut kept = ctx.cached_summaries(&keys).await?;
        let estimated = plan.calls_needed(&|k| kept.contains_key(k)) + 1;
        let budget = MAX_CALLS.read(params)?;
        let mut trace = WholeDocumentTrace {
            path: path.clone(),
            title: title.clone(),
            sections: plan
                .reading_order()
                .into_iter()
                .map(|i| {
                    SectionSummary::planned(&plan.sections[i], kept.get(&plan.sections[i].key))
                })
                .collect(),
            estimated_calls: estimated,
            max_calls: budget,
            shown_depth: 0,
            passages: Vec::new(),
            unknown_citations: Vec::new(),
        };
        ctx.checkpoint(&Trace::WholeDocument(trace.clone()));
        if estimated > budget {
            return Err(MethodError::OverBudget {
                what: format!("answering about {title}"),
                calls: estimated,
                option: MAX_CALLS.name,
                budget,
            });
        }

        let summarizer = Summarizer {
            ctx,
            params,
            title: &title,
        };
        for section in &plan.sections {
            if kept.contains_key(&section.key) {
                continue;
            }
            let summary = summarizer.section(section, &plan, &mut kept).await?;
            ctx.keep_summary(&section.key, &summary).await?;
            if let Some(s) = trace.sections.iter_mut().find(|s| s.node == section.node) {
                s.summary = Some(summary.clone());
            }
            kept.insert(section.key.clone(), summary);
            ctx.checkpoint(&Trace::WholeDocument(trace.clone()));
        }

        let summary_of = |i: usize| kept.get(&plan.sections[i].key).map_or("", String::as_str);
        let budget_chars = (ctx.model_context() as f64 * SHOWN_SHARE * CHARS_PER_TOKEN) as usize;
        trace.shown_depth =
            depth_that_fits(&plan, &|i| summary_of(i).chars().count(), budget_chars);
        let read: Vec<usize> = plan
            .reading_order()
            .into_iter()
            .filter(|&i| plan.sections[i].depth <= trace.shown_depth)
            .collect();
        trace.passages = read
            .iter()
            .enumerate()
            .map(|(n, &i)| passage(n + 1, &path, &plan.sections[i], &parts, summary_of(i)))
            .collect();
        for s in &mut trace.sections {
            s.number = read
                .iter()
                .position(|&i| plan.sections[i].node == s.node)
                .map(|n| n + 1);
        }
        ctx.checkpoint(&Trace::WholeDocument(trace.clone()));
        let vars = context!(question, title => as_document_data(&title), sections => shown(&trace.passages));
        let answer = ctx
            .cited_answer("answer", &prompts::ANSWER, vars, params, &trace.passages)
            .await?;
        trace.unknown_citations = answer.unknown;
        Ok(Answer {
            text: answer.text,
            citations: answer.citations,
            trace: Trace::WholeDocument(trace),
            cut_off: answer.cut_off,
        })
    }
}

/// The one document of the question's scope, with its path.
async fn the_document(ctx: &MethodContext<'_>) -> Result<(String, DocumentParts), MethodError> {
    let documents = ctx.scoped_documents();
    let count = documents.map(|d| d.len());
    let only = match documents.map(|d| d.ids()) {
        Some([id]) => *id,
        _ => return Err(MethodError::NeedsOneDocument { documents: count }),
    };
    ctx.document_by_id(only)
        .await?
        .ok_or(MethodError::NeedsOneDocument { documents: Some(0) })
}

/// Writes the summaries a plan lacks.
struct Summarizer<'a> {
    ctx: &'a MethodContext<'a>,
    params: &'a Params,
    title: &'a str,
}

#[derive(Serialize)]
struct Part<'a> {
    heading: String,
    summary: &'a str,
}

impl Summarizer<'_> {
    /// A section's summary from its own text (or its pieces' summaries,
    /// written first and kept) and its subsections' summaries.
    async fn section(
        &self,
        section: &DocumentSection,
        plan: &Plan,
        kept: &mut HashMap<String, String>,
    ) -> Result<String, MethodError> {
        let mut parts: Vec<(String, String)> = section
            .children
            .iter()
            .map(|&c| {
                let child = &plan.sections[c];
                (
                    child.heading_path.clone(),
                    kept.get(&child.key).cloned().unwrap_or_default(),
                )
            })
            .collect();
        let text = if section.is_split() {
            let of = section.pieces.len();
            for (i, piece) in section.pieces.iter().enumerate() {
                let summary = match kept.get(&piece.key) {
                    Some(s) => s.clone(),
                    None => {
                        let heading = format!("{} (part {} of {of})", section.heading_path, i + 1);
                        let s = self
                            .summarize("summarize-part", &heading, &piece.text, &[])
                            .await?;
                        self.ctx.keep_summary(&piece.key, &s).await?;
                        kept.insert(piece.key.clone(), s.clone());
                        s
                    }
                };
                parts.push((
                    format!("{} (part {} of {of})", section.heading_path, i + 1),
                    summary,
                ));
            }
            String::new()
        } else {
            section
                .pieces
                .first()
                .map(|p| p.text.clone())
                .unwrap_or_default()
        };
        self.summarize("summarize", &section.heading_path, &text, &parts)
            .await
    }

    async fn summarize(
        &self,
        step: &'static str,
        heading: &str,
        text: &str,
        parts: &[(String, String)],
    ) -> Result<String, MethodError> {
        let parts: Vec<Part<'_>> = parts
            .iter()
            .map(|(heading, summary)| Part {
                heading: as_document_data(heading).replace('"', "'"),
                summary,
            })
            .collect();
        let vars = context!(
            title => as_document_data(self.title),
            heading => as_document_data(heading).replace('"', "'"),
            text => as_document_data(text),
            parts,
        );
        let mut options = self.ctx.options(self.params);
        options.max_tokens = options.max_tokens.min(SUMMARY_TOKENS);
        let completion: Completion = self
            .ctx
            .generate_with(step, &prompts::SUMMARIZE, vars, &options)
            .await?;
        // A summary cut off at its length is still a summary; an empty one
        // says the section holds nothing worth repeating.
        Ok(completion.text.trim().to_string())
    }
}

/// A shown section summary as a numbered passage, pointing at the
/// section's first chunk so a citation opens the document there.
fn passage(
    number: usize,
    path: &str,
    section: &DocumentSection,
    parts: &DocumentParts,
    text: &str,
) -> Passage {
    let chunk_id = parts
        .chunks
        .iter()
        .find(|c| {
            serde_json::from_str::<Vec<usize>>(&c.node_ordinals)
                .is_ok_and(|nodes| nodes.iter().any(|n| section.nodes.binary_search(n).is_ok()))
        })
        .or(parts.chunks.first())
        .map_or(0, |c| c.id);
    Passage {
        number,
        chunk_id,
        path: path.to_string(),
        heading_path: section.heading_path.clone(),
        span_start: section.span.start as i64,
        span_end: section.span.end as i64,
        page: section.span.page.map(i64::from),
        score: 0.0,
        text: text.to_string(),
        ocr: None,
        suspected_instructions: None,
        rows: None,
    }
}

#[cfg(test)]
mod tests;
