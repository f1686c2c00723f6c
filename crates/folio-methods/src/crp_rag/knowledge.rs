//! Knowledge retrieval and aggregation (section 3.3) and the sufficiency
//! check (section 3.4, eqs. 9–10), for every step of the graph at once.

use super::prompts;
use futures::future::try_join_all;
use minijinja::context;

use super::graph::Graph;
use super::sufficiency::{check_options, perplexity};
use super::trace::{CrpRagVariant, SufficiencyCheck, SufficiencyTest};
use crate::context::partial_text;
use crate::shown::shown;
use crate::{MethodContext, MethodError, Params, Passage};
use folio_llm::prompts::as_document_data;
use folio_llm::verdict::{verdict, verdict_schema, VERDICT_GRAMMAR};
use folio_llm::GenerateOptions;

const KNOWLEDGE: &str = "knowledge";
const CHECK: &str = "sufficiency check";
const ASSESS: &str = "self-assessment";

pub struct Gathering<'a> {
    pub question: &'a str,
    pub variant: CrpRagVariant,
    pub perplexity_threshold: f64,
}

/// What one step's knowledge and check came to.
struct StepKnowledge {
    summary: Option<String>,
    check: Option<SufficiencyCheck>,
    notes: Vec<String>,
}

impl Gathering<'_> {
    /// Retrieves for every step, numbering passages across the whole graph
    /// (a chunk two steps found keeps one number), then has each step's
    /// knowledge written and checked, all steps concurrently.
    pub async fn gather(
        &self,
        ctx: &MethodContext<'_>,
        params: &Params,
        graph: &mut Graph,
        passages: &mut Vec<Passage>,
        notes: &mut Vec<String>,
    ) -> Result<(), MethodError> {
        let found = try_join_all(graph.steps().map(|s| ctx.retrieve(&s.text, params))).await?;
        for (node, hits) in graph.nodes.iter_mut().skip(1).zip(found) {
            node.passages = hits.into_iter().map(|p| number_of(passages, p)).collect();
        }
        if passages.is_empty() {
            return Err(MethodError::EmptyLibrary);
        }
        let shown_passages: &[Passage] = passages;
        let results = try_join_all(
            graph
                .steps()
                .map(|s| self.step_knowledge(ctx, params, &s.text, &s.passages, shown_passages)),
        )
        .await?;
        for (node, result) in graph.nodes.iter_mut().skip(1).zip(results) {
            node.knowledge = result.summary;
            node.check = result.check;
            notes.extend(
                result
                    .notes
                    .into_iter()
                    .map(|n| format!("step {}: {n}", node.id)),
            );
        }
        Ok(())
    }

    async fn step_knowledge(
        &self,
        ctx: &MethodContext<'_>,
        params: &Params,
        step: &str,
        numbers: &[usize],
        passages: &[Passage],
    ) -> Result<StepKnowledge, MethodError> {
        let mine: Vec<&Passage> = numbers.iter().map(|&n| &passages[n - 1]).collect();
        let mut notes = Vec::new();
        let summary = if self.variant == CrpRagVariant::NoAggregation {
            None
        } else {
            let vars =
                context!(question => self.question, step, passages => shown(mine.iter().copied()));
            let completion = ctx
                .generate(KNOWLEDGE, &prompts::KNOWLEDGE, vars, params)
                .await?;
            match partial_text(KNOWLEDGE, completion, &mut notes) {
                Ok(text) => Some(text),
                Err(MethodError::EmptyOutput { .. }) => {
                    notes.push(
                        "the knowledge summary was empty; the passages stand in for it".into(),
                    );
                    None
                }
                Err(e) => return Err(e),
            }
        };
        let knowledge = knowledge_for_prompt(summary.as_deref(), &mine);
        let check = if self.variant == CrpRagVariant::NoEvaluation {
            None
        } else {
            Some(
                self.check(ctx, params, step, &knowledge, &mut notes)
                    .await?,
            )
        };
        Ok(StepKnowledge {
            summary,
            check,
            notes,
        })
    }

    /// The perplexity test where the backend gives log-probabilities, the
    /// model's own verdict where it does not.
    async fn check(
        &self,
        ctx: &MethodContext<'_>,
        params: &Params,
        step: &str,
        knowledge: &str,
        notes: &mut Vec<String>,
    ) -> Result<SufficiencyCheck, MethodError> {
        let options = check_options(&ctx.options(params));
        let vars = context!(step, knowledge);
        if ctx.llm_capabilities().logprobs {
            let completion = ctx
                .generate_with(CHECK, &prompts::CHECK, &vars, &options)
                .await?;
            match completion.logprobs.as_deref().map(perplexity) {
                Some(Some(p)) => {
                    return Ok(SufficiencyCheck {
                        test: SufficiencyTest::Perplexity,
                        reply: completion.text.trim().to_string(),
                        perplexity: Some(p),
                        sufficient: p < self.perplexity_threshold,
                    })
                }
                Some(None) => notes.push("the check's answer was empty; the model was asked to assess instead".into()),
                None => notes.push("the backend returned no log-probabilities; the model was asked to assess instead".into()),
            }
        }
        let completion = ctx
            .generate_with(
                ASSESS,
                &prompts::ASSESS,
                &vars,
                &GenerateOptions {
                    grammar: Some(VERDICT_GRAMMAR.into()),
                    schema: Some(verdict_schema()),
                    logprobs: false,
                    ..options
                },
            )
            .await?;
        let reply = completion.text.trim().to_string();
        let sufficient = verdict(&reply).unwrap_or_else(|| {
            notes.push("the self-assessment began with neither yes nor no; taken as no".into());
            false
        });
        Ok(SufficiencyCheck {
            test: SufficiencyTest::SelfAssessment,
            reply,
            perplexity: None,
            sufficient,
        })
    }
}

/// The knowledge a prompt shows for a step: the model's summary, or under
/// `no-aggregation` (or when the summary was empty) the passages
/// themselves, each after its number.
pub fn knowledge_for_prompt(summary: Option<&str>, passages: &[&Passage]) -> String {
    match summary {
        Some(text) => as_document_data(text),
        None => passages
            .iter()
            .map(|p| format!("[{}] {}", p.number, as_document_data(p.text.trim())))
            .collect::<Vec<_>>()
            .join("\n\n"),
    }
}

/// The number `passage` has among `passages`, adding it when it is new.
fn number_of(passages: &mut Vec<Passage>, passage: Passage) -> usize {
    if let Some(known) = passages.iter().find(|p| p.chunk_id == passage.chunk_id) {
        return known.number;
    }
    let number = passages.len() + 1;
    passages.push(Passage { number, ..passage });
    number
}
