//! Reasoning graph construction (the paper's section 3.2). Each round asks
//! the model, sampling, for the next steps after every open step; new steps
//! whose embeddings are close are merged into one node that keeps all their
//! incoming edges; the graph stops growing when every open step is final
//! or a budget runs out.

use super::prompts;
use std::collections::BTreeSet;

use futures::future::try_join_all;
use minijinja::context;

use super::graph::{Graph, SOURCE};
use super::steps::{self, Step};
use super::trace::{GraphBudget, GraphStop, NodeMerge};
use crate::context::partial_text;
use crate::{MethodContext, MethodError, Params};
use folio_core::text::normalize;
use folio_llm::{FinishReason, GenerateOptions};
use folio_retrieve::dot;

const NEXT_STEPS: &str = "next steps";
const FUSE: &str = "merge steps";

pub struct Growth<'a> {
    pub question: &'a str,
    pub budget: GraphBudget,
    pub merge_threshold: f64,
    /// Steps are sampled at this temperature so the alternatives differ.
    pub temperature: f32,
}

/// What a round of construction left for the trace besides the graph.
#[derive(Default)]
pub struct Grown {
    pub merges: Vec<NodeMerge>,
    pub stop: Option<GraphStop>,
    pub notes: Vec<String>,
}

/// A proposed step and the open step it follows.
struct Candidate {
    step: Step,
    parent: usize,
}

impl Growth<'_> {
    /// Grows `graph` round by round; `on_round` sees it after each round.
    pub async fn grow(
        &self,
        ctx: &MethodContext<'_>,
        params: &Params,
        graph: &mut Graph,
        grown: &mut Grown,
        on_round: impl Fn(&Graph, &Grown),
    ) -> Result<(), MethodError> {
        let mut open = vec![SOURCE];
        let mut round = 0;
        let stop = loop {
            if open.is_empty() {
                break GraphStop::AllFinal;
            }
            if round == self.budget.depth {
                break GraphStop::DepthBudget;
            }
            let room = self.budget.nodes.saturating_sub(graph.nodes.len() - 1);
            if room == 0 {
                break GraphStop::NodeBudget;
            }
            round += 1;
            let candidates = self.propose_all(ctx, params, graph, &open, grown).await?;
            if candidates.is_empty() {
                break GraphStop::NoNewSteps;
            }
            let mut clusters = self.cluster(ctx, candidates).await?;
            if clusters.len() > room {
                grown.notes.push(format!(
                    "round {round}: {} proposed steps did not fit the budget of {} steps and were left out",
                    clusters[room..].iter().map(|c| c.members.len()).sum::<usize>(),
                    self.budget.nodes
                ));
                clusters.truncate(room);
            }
            open = self
                .add_clusters(ctx, params, graph, grown, clusters)
                .await?;
            assert!(graph.is_acyclic(), "a round of construction made a cycle");
            on_round(graph, grown);
        };
        if !open.is_empty() && matches!(stop, GraphStop::DepthBudget | GraphStop::NodeBudget) {
            let (budget, option) = match stop {
                GraphStop::DepthBudget => (format!("{} rounds", self.budget.depth), "depth"),
                _ => (format!("{} steps", self.budget.nodes), "nodes"),
            };
            let ids: Vec<String> = open.iter().map(usize::to_string).collect();
            grown.notes.push(format!(
                "growth stopped at the budget of {budget} with step(s) {} not yet final: paths through them end before the answer (raise --{option} to let them reach it)",
                ids.join(", ")
            ));
        }
        if graph.nodes.len() == 1 {
            grown.notes.push(
                "the model proposed no usable step, so the question itself became the only step"
                    .into(),
            );
            graph.add(
                self.question.trim().to_string(),
                true,
                &BTreeSet::from([SOURCE]),
            );
        }
        grown.stop = Some(stop);
        Ok(())
    }

    /// Every open step's next steps, taken in turns (each step's first,
    /// then each step's second…) so a budget cut treats them alike.
    async fn propose_all(
        &self,
        ctx: &MethodContext<'_>,
        params: &Params,
        graph: &Graph,
        open: &[usize],
        grown: &mut Grown,
    ) -> Result<Vec<Candidate>, MethodError> {
        let replies = try_join_all(
            open.iter()
                .map(|&parent| self.propose(ctx, params, graph, parent)),
        )
        .await?;
        let mut per_parent = Vec::new();
        for (&parent, (steps, notes)) in open.iter().zip(replies) {
            grown.notes.extend(
                notes
                    .into_iter()
                    .map(|n| format!("after step {parent}: {n}")),
            );
            per_parent.push((parent, steps.into_iter()));
        }
        let mut candidates = Vec::new();
        loop {
            let before = candidates.len();
            for (parent, steps) in per_parent.iter_mut() {
                if let Some(step) = steps.next() {
                    candidates.push(Candidate {
                        step,
                        parent: *parent,
                    });
                }
            }
            if candidates.len() == before {
                return Ok(candidates);
            }
        }
    }

    /// The next steps after `parent`, asked once more with a firmer prompt
    /// when the reply has none in the expected form.
    async fn propose(
        &self,
        ctx: &MethodContext<'_>,
        params: &Params,
        graph: &Graph,
        parent: usize,
    ) -> Result<(Vec<Step>, Vec<String>), MethodError> {
        let mut chain: Vec<usize> = graph.ancestors(parent);
        if parent != SOURCE {
            chain.push(parent);
        }
        let conditions: Vec<&str> = chain
            .iter()
            .map(|&n| graph.nodes[n].text.as_str())
            .collect();
        let mut known = conditions.clone();
        known.push(self.question);
        let options = GenerateOptions {
            temperature: self.temperature,
            // One seed per open step: the alternatives differ between steps
            // and the same question grows the same graph again.
            seed: params.seed.wrapping_add(parent as u32),
            grammar: Some(steps::grammar(self.budget.branching)),
            schema: Some(steps::schema(self.budget.branching)),
            ..ctx.options(params)
        };
        let mut notes = Vec::new();
        for retry in [false, true] {
            let vars = context!(
                question => self.question,
                conditions => &conditions,
                branching => self.budget.branching,
                retry,
            );
            let completion = ctx
                .generate_with(NEXT_STEPS, &prompts::NEXT_STEPS, vars, &options)
                .await?;
            let cut_off = completion.finish == FinishReason::Length;
            match steps::parse(&completion.text, cut_off, self.budget.branching, &known) {
                Some(parsed) => {
                    notes.extend(parsed.notes);
                    return Ok((parsed.steps, notes));
                }
                None => notes.push(format!(
                    "no line began with Next: or Final:{}",
                    if retry {
                        "; the step ends its path"
                    } else {
                        "; asked again"
                    }
                )),
            }
        }
        Ok((Vec::new(), notes))
    }

    /// Groups the round's steps by similarity: a step joins the first group
    /// whose first step it is at least `merge_threshold` similar to.
    async fn cluster(
        &self,
        ctx: &MethodContext<'_>,
        candidates: Vec<Candidate>,
    ) -> Result<Vec<Cluster>, MethodError> {
        let texts: Vec<String> = candidates.iter().map(|c| c.step.text.clone()).collect();
        let vectors = ctx.embed(&texts).await?;
        let mut clusters: Vec<Cluster> = Vec::new();
        for (candidate, vector) in candidates.into_iter().zip(vectors) {
            let similar = clusters.iter_mut().find_map(|c| {
                // Unit vectors: their dot product is the cosine.
                let s = f64::from(dot(&c.leader, &vector));
                (s >= self.merge_threshold).then_some((c, s))
            });
            match similar {
                Some((cluster, s)) => {
                    cluster.similarity = cluster.similarity.min(s);
                    cluster.members.push(candidate);
                }
                None => clusters.push(Cluster {
                    leader: vector,
                    similarity: 1.0,
                    members: vec![candidate],
                }),
            }
        }
        Ok(clusters)
    }

    /// Adds one node per cluster (merged by the model when its steps differ
    /// in wording) and returns the new steps that still need a next step.
    async fn add_clusters(
        &self,
        ctx: &MethodContext<'_>,
        params: &Params,
        graph: &mut Graph,
        grown: &mut Grown,
        clusters: Vec<Cluster>,
    ) -> Result<Vec<usize>, MethodError> {
        let texts = try_join_all(clusters.iter().map(|c| self.merged_text(ctx, params, c))).await?;
        let mut open = Vec::new();
        for (cluster, (text, note)) in clusters.into_iter().zip(texts) {
            let parents: BTreeSet<usize> = cluster.members.iter().map(|m| m.parent).collect();
            // A merged step is final when any of its steps was: it already
            // covers the last step of some line of reasoning.
            let is_final = cluster.members.iter().any(|m| m.step.is_final);
            let id = graph.add(text, is_final, &parents);
            grown.notes.extend(note.map(|n| format!("step {id}: {n}")));
            if cluster.members.len() > 1 {
                grown.merges.push(NodeMerge {
                    node: id,
                    texts: cluster
                        .members
                        .iter()
                        .map(|m| m.step.text.clone())
                        .collect(),
                    similarity: cluster.similarity,
                    identical: cluster.identical(),
                });
            }
            if !is_final {
                open.push(id);
            }
        }
        Ok(open)
    }

    /// The text of a cluster's node, and a note when the model's merge
    /// could not be used.
    async fn merged_text(
        &self,
        ctx: &MethodContext<'_>,
        params: &Params,
        cluster: &Cluster,
    ) -> Result<(String, Option<String>), MethodError> {
        let first = cluster.members[0].step.text.clone();
        if cluster.identical() {
            return Ok((first, None));
        }
        let steps: Vec<&str> = cluster
            .members
            .iter()
            .map(|m| m.step.text.as_str())
            .collect();
        let completion = ctx
            .generate(
                FUSE,
                &prompts::FUSE,
                context!(question => self.question, steps),
                params,
            )
            .await?;
        let mut notes = Vec::new();
        let merged = partial_text(FUSE, completion, &mut notes)
            .ok()
            .and_then(|t| {
                t.lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .map(str::to_string)
            });
        Ok(match merged {
            Some(text) => (text, notes.pop()),
            None => (
                first,
                Some("the model's merge was empty, so the first step's wording was kept".into()),
            ),
        })
    }
}

struct Cluster {
    leader: Vec<f32>,
    /// The lowest similarity of a member to the first.
    similarity: f64,
    members: Vec<Candidate>,
}

impl Cluster {
    fn identical(&self) -> bool {
        let first = normalize(&self.members[0].step.text);
        self.members
            .iter()
            .all(|m| normalize(&m.step.text) == first)
    }
}
