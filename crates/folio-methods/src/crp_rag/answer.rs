//! Path selection and answer generation (section 3.4, eqs. 11–13): the
//! paths whose every step has sufficient knowledge are reasoned along step
//! by step, each step's result joining what is known, and the paths'
//! answers are merged. With no such path the method refuses and names the
//! steps that lacked knowledge.

use super::prompts;
use std::collections::{BTreeSet, HashMap};

use futures::future::try_join_all;
use minijinja::context;
use serde::Serialize;

use super::graph::{Graph, SOURCE};
use super::knowledge::knowledge_for_prompt;
use super::trace::{CrpRagVariant, ReasoningNode, ReasoningPath, SufficiencyTest};
use crate::context::{answer_text, note_if_cut_off, Written};
use crate::{MethodContext, MethodError, Params, Passage};
use folio_core::text::normalize;
use folio_llm::prompts::as_document_data;
use folio_llm::Completion;
use folio_store::CutOff;

const REASON: &str = "reason";
const MERGE: &str = "merge answers";

/// Which paths the answer is reasoned along, or why there are none.
#[derive(Debug, PartialEq)]
pub enum Selection {
    Paths(Vec<Vec<usize>>),
    /// The steps whose knowledge was judged insufficient.
    Refused(Vec<usize>),
}

/// Under `no-evaluation`, the shortest and the longest path (the paper's
/// breadth-first choice); otherwise the paths with sufficient knowledge at
/// every step, those that end in a final step first (a path the budget cut
/// off stops short of the answer), then the most confident (lowest mean
/// perplexity), then the shortest, at most `most` of them.
pub fn select(graph: &Graph, variant: CrpRagVariant, most: usize) -> Selection {
    let all = graph.paths();
    if variant == CrpRagVariant::NoEvaluation {
        let shortest = all.iter().min_by_key(|p| p.len());
        let longest = all.iter().rev().max_by_key(|p| p.len());
        let mut chosen: Vec<Vec<usize>> = Vec::new();
        for path in shortest.into_iter().chain(longest) {
            if !chosen.contains(path) {
                chosen.push(path.clone());
            }
        }
        chosen.truncate(most);
        return Selection::Paths(chosen);
    }
    let sufficient = |n: &ReasoningNode| n.check.as_ref().is_some_and(|c| c.sufficient);
    let mut good: Vec<(f64, Vec<usize>)> = all
        .into_iter()
        .filter(|p| p[1..].iter().all(|&n| sufficient(&graph.nodes[n])))
        .map(|p| (mean_perplexity(graph, &p), p))
        .collect();
    if good.is_empty() {
        return Selection::Refused(
            graph
                .steps()
                .filter(|n| !sufficient(n))
                .map(|n| n.id)
                .collect(),
        );
    }
    let complete = |p: &[usize]| graph.nodes[*p.last().expect("paths are never empty")].is_final;
    good.sort_by(|(a, p), (b, q)| {
        complete(q)
            .cmp(&complete(p))
            .then(a.total_cmp(b))
            .then(p.len().cmp(&q.len()))
    });
    Selection::Paths(good.into_iter().take(most).map(|(_, p)| p).collect())
}

fn mean_perplexity(graph: &Graph, path: &[usize]) -> f64 {
    let values: Vec<f64> = path[1..]
        .iter()
        .filter_map(|&n| graph.nodes[n].check.as_ref().and_then(|c| c.perplexity))
        .collect();
    if values.is_empty() {
        return 0.0;
    }
    values.iter().sum::<f64>() / values.len() as f64
}

/// The answer when no path is sufficient: which steps lacked knowledge
/// and by which test, so the person knows what the library is missing.
pub fn refusal(graph: &Graph, insufficient: &[usize], threshold: f64) -> String {
    let steps: Vec<String> = insufficient
        .iter()
        .map(|&id| {
            let node = &graph.nodes[id];
            let why = match node.check.as_ref() {
                Some(c) if c.test == SufficiencyTest::Perplexity => format!(
                    "perplexity {:.2}, at or above {threshold}",
                    c.perplexity.unwrap_or(f64::NAN)
                ),
                _ => "the model judged its knowledge insufficient".to_string(),
            };
            format!("step {id} “{}” ({why})", node.text)
        })
        .collect();
    format!(
        "I cannot answer this from the library: every line of reasoning has a step its documents do not support. Steps without enough knowledge: {}.",
        steps.join("; ")
    )
}

/// Reasons along the chosen paths of the knowledge graph, then concludes
/// from what they found.
pub struct PathReasoner<'a> {
    pub question: &'a str,
    pub variant: CrpRagVariant,
}

#[derive(Serialize)]
struct Known {
    step: String,
    result: String,
}

#[derive(Serialize)]
struct StepWithKnowledge {
    step: String,
    knowledge: String,
}

/// The final answer and the text its citations are read from.
pub struct Answered {
    pub text: String,
    pub cited_in: String,
    /// Set when the answer reached `max_tokens` before it finished.
    pub cut_off: Option<CutOff>,
}

impl PathReasoner<'_> {
    /// Reasons along `paths` and returns them with their results, in
    /// order, each with the reply its answer came from.
    pub async fn reason(
        &self,
        ctx: &MethodContext<'_>,
        params: &Params,
        graph: &Graph,
        passages: &[Passage],
        paths: Vec<Vec<usize>>,
        notes: &mut Vec<String>,
    ) -> Result<Vec<(ReasoningPath, Completion)>, MethodError> {
        if self.variant == CrpRagVariant::NoIterative {
            let replies = try_join_all(paths.iter().map(|p| {
                let steps: Vec<StepWithKnowledge> = p[1..]
                    .iter()
                    .map(|&n| StepWithKnowledge {
                        step: graph.nodes[n].text.clone(),
                        knowledge: joined_knowledge(graph, n, p, passages),
                    })
                    .collect();
                ctx.generate(
                    REASON,
                    &prompts::REASON_ONCE,
                    context!(question => self.question, steps),
                    params,
                )
            }))
            .await?;
            return Ok(paths
                .into_iter()
                .zip(replies)
                .map(|(nodes, c)| {
                    note_if_cut_off(REASON, &c, notes);
                    let path = ReasoningPath {
                        nodes,
                        results: Vec::new(),
                        answer: c.text.trim().to_string(),
                    };
                    (path, c)
                })
                .collect());
        }
        // Paths that share a beginning share its steps' results: each
        // distinct prefix is reasoned once, level by level.
        let mut results: HashMap<Vec<usize>, Completion> = HashMap::new();
        let longest = paths.iter().map(Vec::len).max().unwrap_or(0);
        for level in 1..longest {
            let prefixes: BTreeSet<&[usize]> = paths
                .iter()
                .filter(|p| p.len() > level)
                .map(|p| &p[..=level])
                .collect();
            let replies = try_join_all(prefixes.iter().map(|prefix| {
                let known: Vec<Known> = (1..level)
                    .map(|i| Known {
                        step: graph.nodes[prefix[i]].text.clone(),
                        result: as_document_data(results[&prefix[..=i]].text.trim()),
                    })
                    .collect();
                let node = prefix[level];
                let vars = context!(
                    question => self.question,
                    known,
                    step => &graph.nodes[node].text,
                    knowledge => joined_knowledge(graph, node, prefix, passages),
                    last => paths.iter().any(|p| p.as_slice() == *prefix),
                );
                ctx.generate(REASON, &prompts::REASON, vars, params)
            }))
            .await?;
            for (prefix, completion) in prefixes.into_iter().zip(replies) {
                note_if_cut_off(REASON, &completion, notes);
                results.insert(prefix.to_vec(), completion);
            }
        }
        Ok(paths
            .into_iter()
            .map(|nodes| {
                let steps: Vec<&Completion> =
                    (1..nodes.len()).map(|i| &results[&nodes[..=i]]).collect();
                let last = (*steps.last().expect("every path has a step")).clone();
                let path = ReasoningPath {
                    results: steps.iter().map(|c| c.text.trim().to_string()).collect(),
                    answer: last.text.trim().to_string(),
                    nodes,
                };
                (path, last)
            })
            .collect())
    }

    /// One path's answer as it is, or the paths' answers merged by the
    /// model when they differ. A final answer cut off at `max_tokens` is
    /// an error, as in every method.
    pub async fn conclude(
        &self,
        ctx: &MethodContext<'_>,
        params: &Params,
        paths: &[(ReasoningPath, Completion)],
    ) -> Result<Answered, MethodError> {
        let reasoning: Vec<&str> = paths
            .iter()
            .flat_map(|(p, _)| p.results.iter().chain([&p.answer]))
            .map(String::as_str)
            .collect();
        let distinct: BTreeSet<String> = paths.iter().map(|(p, _)| normalize(&p.answer)).collect();
        let Written { text, cut_off } = if distinct.len() == 1 {
            answer_text(REASON, paths[0].1.clone(), params.max_tokens)?
        } else {
            let answers: Vec<String> = paths
                .iter()
                .map(|(p, _)| as_document_data(&p.answer))
                .collect();
            let completion = ctx
                .generate(
                    MERGE,
                    &prompts::MERGE,
                    context!(question => self.question, answers),
                    params,
                )
                .await?;
            answer_text(MERGE, completion, params.max_tokens)?
        };
        Ok(Answered {
            cited_in: format!("{text}\n{}", reasoning.join("\n")),
            text,
            cut_off,
        })
    }
}

fn knowledge_of(graph: &Graph, node: usize, passages: &[Passage]) -> String {
    let node = &graph.nodes[node];
    let mine: Vec<&Passage> = node.passages.iter().map(|&n| &passages[n - 1]).collect();
    knowledge_for_prompt(node.knowledge.as_deref(), &mine)
}

/// A step's knowledge, and where it joins steps off `path` (complementary
/// sub-questions, as the paper's examples: "who wrote Evolution" and "which
/// film starred both" joined by "who did both"), theirs too when it was
/// judged sufficient. Another parent may also be an alternative to the
/// path's, so it adds knowledge but is never required.
pub(super) fn joined_knowledge(
    graph: &Graph,
    node: usize,
    path: &[usize],
    passages: &[Passage],
) -> String {
    let sufficient = |n: usize| graph.nodes[n].check.as_ref().is_some_and(|c| c.sufficient);
    graph
        .parents(node)
        .filter(|&p| p != SOURCE && !path.contains(&p) && sufficient(p))
        .chain([node])
        .map(|n| knowledge_of(graph, n, passages))
        .collect::<Vec<_>>()
        .join("\n\n")
}
