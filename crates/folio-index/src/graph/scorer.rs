//! One batched scoring call per baseline chunk (iG²RAG eq. 3): the model
//! grades each of the chunk's neighbours under the rubric, as one JSON
//! object. A reply that cannot be read is asked for once more, with the
//! reason; a second bad reply fails the node. Nothing is ever guessed.

use std::time::Duration;

use minijinja::context;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use folio_llm::prompts::{PromptError, Prompts};
use folio_llm::rubric::{Grade, Rubric};
use folio_llm::{GenerateOptions, Llm, LlmError};
use folio_store::StoredChunk;

/// Longest passage text put in a scoring prompt, so a baseline and its
/// neighbours fit the context however the library was chunked.
const PASSAGE_CHARS: usize = 1500;
/// A grade is a few tokens; this leaves room for the object around them.
const TOKENS_PER_GRADE: u32 = 12;

#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error(transparent)]
    Prompt(#[from] PromptError),
}

/// What scoring one node gave and cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// One grade per neighbour, in order, or why the replies were unusable.
    pub grades: Result<Vec<Grade>, String>,
    pub calls: u32,
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub completion_tokens: u64,
}

#[derive(Serialize)]
struct ShownChunk<'a> {
    label: String,
    heading: &'a str,
    text: String,
}

pub struct Scorer<'a> {
    pub llm: &'a dyn Llm,
    pub prompts: &'a Prompts,
    pub rubric: Rubric,
    pub timeout: Duration,
    pub cancel: &'a CancellationToken,
    /// Keep each prompt in the model's cache so the next one decodes only
    /// what follows their shared prefix (the instructions).
    pub reuse_prefix: bool,
}

impl Scorer<'_> {
    pub async fn score(
        &self,
        baseline: &StoredChunk,
        neighbours: &[StoredChunk],
    ) -> Result<Scored, ScoreError> {
        let labels: Vec<String> = (1..=neighbours.len()).map(|i| format!("P{i}")).collect();
        let passages: Vec<ShownChunk> = neighbours
            .iter()
            .zip(&labels)
            .map(|(c, label)| shown(c, label.clone()))
            .collect();
        let options = GenerateOptions {
            max_tokens: TOKENS_PER_GRADE * labels.len() as u32 + 8,
            temperature: 0.0,
            timeout: self.timeout,
            grammar: Some(self.rubric.grammar(&labels)),
            schema: Some(self.rubric.schema(&labels)),
            cache_prefix: self.reuse_prefix,
            background: true,
            ..GenerateOptions::default()
        };
        let mut scored = Scored {
            grades: Err(String::new()),
            calls: 0,
            prompt_tokens: 0,
            cached_tokens: 0,
            completion_tokens: 0,
        };
        let mut retry: Option<String> = None;
        for _ in 0..2 {
            let messages = self.prompts.messages(
                self.rubric.prompt(),
                context!(
                    baseline => shown(baseline, String::new()),
                    passages => &passages,
                    labels => &labels,
                    retry => &retry,
                ),
            )?;
            let completion = folio_llm::reply(&*self.llm, &messages, &options, self.cancel).await?;
            scored.calls += 1;
            scored.prompt_tokens += u64::from(completion.usage.prompt_tokens);
            scored.cached_tokens += u64::from(completion.usage.cached_tokens);
            scored.completion_tokens += u64::from(completion.usage.completion_tokens);
            match parse_grades(&completion.text, &labels, self.rubric) {
                Ok(grades) => {
                    scored.grades = Ok(grades);
                    return Ok(scored);
                }
                Err(reason) => {
                    scored.grades = Err(reason.clone());
                    retry = Some(reason);
                }
            }
        }
        Ok(scored)
    }
}

fn shown(chunk: &StoredChunk, label: String) -> ShownChunk<'_> {
    let text = match chunk.text.char_indices().nth(PASSAGE_CHARS) {
        Some((cut, _)) => format!("{} […]", &chunk.text[..cut]),
        None => chunk.text.clone(),
    };
    ShownChunk {
        label,
        heading: &chunk.heading_path,
        text,
    }
}

/// Reads the JSON object in a reply: every label must have a grade the
/// rubric accepts. Text around the object (a code fence, a preamble) is
/// tolerated; keys that name no passage are ignored.
pub fn parse_grades(reply: &str, labels: &[String], rubric: Rubric) -> Result<Vec<Grade>, String> {
    let (Some(start), Some(end)) = (reply.find('{'), reply.rfind('}')) else {
        return Err("the reply holds no JSON object".to_string());
    };
    if end < start {
        return Err("the reply holds no JSON object".to_string());
    }
    let object: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&reply[start..=end])
            .map_err(|e| format!("the reply is not valid JSON ({e})"))?;
    labels
        .iter()
        .map(|label| {
            let value = object
                .get(label)
                .ok_or_else(|| format!("it gives no grade for {label}"))?;
            rubric
                .grade(value)
                .map_err(|e| format!("the grade for {label} is unusable: {e}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::GainClass;

    fn labels(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("P{i}")).collect()
    }

    #[test]
    fn a_well_formed_reply_grades_every_passage_in_order() {
        let g = parse_grades(
            "```json\n{\"P1\": \"minor\", \"P2\": \"novel\"}\n```",
            &labels(2),
            Rubric::Coarse,
        )
        .unwrap();
        assert_eq!(
            g.iter().map(|g| g.class).collect::<Vec<_>>(),
            [GainClass::Minor, GainClass::Novel]
        );
    }

    #[test]
    fn malformed_replies_say_what_is_wrong() {
        let l = labels(2);
        let reason = |reply: &str| parse_grades(reply, &l, Rubric::Coarse).unwrap_err();
        assert!(reason("P1 is minor, P2 is novel").contains("no JSON object"));
        assert!(reason("} oops {").contains("no JSON object"));
        assert!(reason("{\"P1\": \"minor\",}").contains("not valid JSON"));
        assert!(reason("{\"P1\": \"minor\"}").contains("no grade for P2"));
        assert!(reason("{\"P1\": \"minor\", \"P2\": \"huge\"}").contains("P2 is unusable"));
        assert!(reason("[1, 2]").contains("no JSON object"));
    }

    #[test]
    fn unknown_keys_do_not_become_edges() {
        let g = parse_grades(
            "{\"P1\": 1, \"P9\": 1, \"P2\": 0}",
            &labels(2),
            Rubric::Binary,
        )
        .unwrap();
        assert_eq!(g.len(), 2);
    }
}
