//! The graph a question walks (iG²RAG §3.2): every chunk with a vector is a
//! node, and one rubric's edges, weighted by gain (or, for the `sim-ppr`
//! ablation, by the similarity of the same pairs), make the transition
//! matrices. Built once per change of the graph and shared by questions.
//! A notes vault's links may join them as edges of their own (a fixed
//! weight, [`LINK_WEIGHT`]), so a walk also goes where the author pointed.

use std::collections::{HashMap, HashSet};

use super::ppr::{
    personalized_pagerank, top_k, PersonalizedPageRank, PprError, PprParams, TransitionMatrix,
};
use super::ranker::Seed;
use super::Result;
use folio_llm::rubric::{GainClass, Rubric};
use folio_store::{GainEdge, Store};

/// The weight of a link edge, walked by gain or by similarity alike. A
/// link says its author found the target worth reading next, not how much
/// it adds, so it counts as a significant gain: more than a near repeat,
/// less than what the scorer finds novel.
pub const LINK_WEIGHT: f64 = GainClass::Significant.weight();

pub struct WalkGraph {
    /// The store's graph version this copy was read at.
    pub version: (i64, i64),
    ids: Vec<i64>,
    index_of: HashMap<i64, u32>,
    gain: TransitionMatrix,
    similarity: TransitionMatrix,
    out: HashMap<i64, Vec<GainEdge>>,
    /// The chunks each chunk's links lead to; empty unless links were
    /// asked for.
    linked: HashMap<i64, Vec<i64>>,
    edges: usize,
}

/// Which weights a walk follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weights {
    Gain,
    Similarity,
}

/// A finished walk: every node it gave mass to, best first.
pub struct Walk {
    pub ranked: Vec<(i64, f64)>,
    pub stats: PersonalizedPageRank,
}

impl WalkGraph {
    /// The graph of `rubric`, with the library's link edges when `links`.
    pub async fn load(store: &Store, rubric: Rubric, links: bool) -> Result<WalkGraph> {
        let version = store.gain_graph_version().await?;
        let ids = store.embedded_chunk_ids().await?;
        let edges = store.gain_edges(rubric).await?;
        let links = match links {
            true => store.link_edges().await?,
            false => Vec::new(),
        };
        WalkGraph::of(version, ids, &edges, &links)
    }

    /// The part of this graph among `chunks`: a scoped question walks only
    /// its scope, so mass never leaves it through another document.
    pub fn within(&self, chunks: &HashSet<i64>) -> Result<WalkGraph> {
        let ids: Vec<i64> = self
            .ids
            .iter()
            .copied()
            .filter(|id| chunks.contains(id))
            .collect();
        let edges: Vec<GainEdge> = ids
            .iter()
            .flat_map(|id| self.out_edges(*id))
            .filter(|e| chunks.contains(&e.target))
            .copied()
            .collect();
        let links: Vec<(i64, i64)> = ids
            .iter()
            .flat_map(|id| self.links_from(*id).iter().map(move |to| (*id, *to)))
            .filter(|(_, to)| chunks.contains(to))
            .collect();
        WalkGraph::of(self.version, ids, &edges, &links)
    }

    fn of(
        version: (i64, i64),
        ids: Vec<i64>,
        edges: &[GainEdge],
        links: &[(i64, i64)],
    ) -> Result<WalkGraph> {
        let index_of: HashMap<i64, u32> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| (*id, i as u32))
            .collect();
        // Edges read after a chunk appeared or went may name chunks the id
        // list lacks; the version check reloads the graph soon after.
        let known: Vec<&GainEdge> = edges
            .iter()
            .filter(|e| index_of.contains_key(&e.source) && index_of.contains_key(&e.target))
            .collect();
        let mut linked: HashMap<i64, Vec<i64>> = HashMap::new();
        for (from, to) in links {
            if index_of.contains_key(from) && index_of.contains_key(to) && from != to {
                linked.entry(*from).or_default().push(*to);
            }
        }
        let link_edges = || {
            linked.iter().flat_map(|(from, tos)| {
                tos.iter()
                    .map(|to| (index_of[from], index_of[to], LINK_WEIGHT))
            })
        };
        // A pair joined by both a gain edge and a link is walked with both
        // weights added.
        let matrix = |weight: fn(&GainEdge) -> f64| {
            TransitionMatrix::from_edges(
                ids.len(),
                known
                    .iter()
                    .map(|e| (index_of[&e.source], index_of[&e.target], weight(e)))
                    .chain(link_edges()),
            )
        };
        let gain = matrix(|e| e.score)?;
        let similarity = matrix(|e| e.similarity.max(0.0))?;
        let mut out: HashMap<i64, Vec<GainEdge>> = HashMap::new();
        for e in &known {
            out.entry(e.source).or_default().push(**e);
        }
        Ok(WalkGraph {
            version,
            edges: known.len() + linked.values().map(Vec::len).sum::<usize>(),
            ids,
            index_of,
            gain,
            similarity,
            out,
            linked,
        })
    }

    pub fn nodes(&self) -> usize {
        self.ids.len()
    }

    pub fn edges(&self) -> usize {
        self.edges
    }

    /// Personalized PageRank from `seeds` (chunk, weight); seeds that are
    /// no longer in the graph are left out.
    pub fn walk(
        &self,
        seeds: &[(i64, f64)],
        weights: Weights,
        params: PprParams,
    ) -> std::result::Result<Walk, PprError> {
        let personalization: Vec<(u32, f64)> = seeds
            .iter()
            .filter_map(|(id, w)| self.index_of.get(id).map(|i| (*i, *w)))
            .collect();
        let matrix = match weights {
            Weights::Gain => &self.gain,
            Weights::Similarity => &self.similarity,
        };
        let stats = personalized_pagerank(matrix, &personalization, params)?;
        let reached = stats.scores.iter().filter(|s| **s > 0.0).count();
        let ranked = top_k(&stats.scores, reached)
            .into_iter()
            .map(|(i, s)| (self.ids[i as usize], s))
            .collect();
        Ok(Walk { ranked, stats })
    }

    /// The gain edges out of `chunk`.
    pub fn out_edges(&self, chunk: i64) -> &[GainEdge] {
        self.out.get(&chunk).map_or(&[], Vec::as_slice)
    }

    /// The chunks the links written in `chunk` lead to.
    pub fn links_from(&self, chunk: i64) -> &[i64] {
        self.linked.get(&chunk).map_or(&[], Vec::as_slice)
    }

    /// The link edges whose both ends are in `nodes`.
    pub fn links_among(&self, nodes: &HashSet<i64>) -> Vec<(i64, i64)> {
        nodes
            .iter()
            .flat_map(|n| self.links_from(*n).iter().map(move |to| (*n, *to)))
            .filter(|(_, to)| nodes.contains(to))
            .collect()
    }

    /// The gain edges whose both ends are in `nodes`.
    pub fn edges_among(&self, nodes: &HashSet<i64>) -> Vec<GainEdge> {
        nodes
            .iter()
            .flat_map(|n| self.out_edges(*n))
            .filter(|e| nodes.contains(&e.target))
            .copied()
            .collect()
    }

    /// The `greedy` ablation (iG² w/ GS): up to `k` chunks, the seeds by
    /// similarity, then, while fewer than `k`, the target of the strongest
    /// gain edge leaving what is chosen, each with the weight that brought
    /// it in.
    pub fn strongest_edges(&self, seeds: &[Seed], k: usize) -> Vec<(i64, f64)> {
        let mut chosen: Vec<(i64, f64)> = seeds
            .iter()
            .take(k)
            .map(|s| (s.chunk_id, s.similarity))
            .collect();
        let mut taken: HashSet<i64> = chosen.iter().map(|(id, _)| *id).collect();
        while chosen.len() < k {
            let best = chosen
                .iter()
                .flat_map(|(id, _)| self.weighted_out(*id))
                .filter(|(target, score)| *score > 0.0 && !taken.contains(target))
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
            let Some((target, score)) = best else { break };
            taken.insert(target);
            chosen.push((target, score));
        }
        chosen
    }

    /// Where `chunk`'s edges lead, by gain, links counted as
    /// [`LINK_WEIGHT`] and added to a gain edge to the same chunk.
    fn weighted_out(&self, chunk: i64) -> Vec<(i64, f64)> {
        let mut out: Vec<(i64, f64)> = self
            .out_edges(chunk)
            .iter()
            .map(|e| (e.target, e.score))
            .collect();
        for to in self.links_from(chunk) {
            match out.iter_mut().find(|(target, _)| target == to) {
                Some((_, score)) => *score += LINK_WEIGHT,
                None => out.push((*to, LINK_WEIGHT)),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use folio_llm::rubric::GainClass;

    fn edge(source: i64, target: i64, score: f64) -> GainEdge {
        GainEdge {
            source,
            target,
            class: GainClass::Significant,
            score,
            similarity: 0.5,
        }
    }

    #[test]
    fn a_walk_within_a_scope_never_leaves_it() {
        // 1 → 2 → 3 inside the scope; 1 → 9 → 3 through a chunk outside it,
        // with the heavier weights.
        let edges = [
            edge(1, 2, 0.2),
            edge(2, 3, 0.2),
            edge(1, 9, 0.9),
            edge(9, 3, 0.9),
        ];
        let whole = WalkGraph::of((1, 1), vec![1, 2, 3, 9], &edges, &[]).unwrap();
        let scope: HashSet<i64> = [1, 2, 3].into_iter().collect();
        let part = whole.within(&scope).unwrap();
        assert_eq!((part.nodes(), part.edges()), (3, 2));
        assert!(part.out_edges(1).iter().all(|e| e.target != 9));

        let walk = part
            .walk(&[(1, 1.0)], Weights::Gain, PprParams::default())
            .unwrap();
        let reached: Vec<i64> = walk.ranked.iter().map(|(id, _)| *id).collect();
        assert_eq!(reached, vec![1, 2, 3]);
        let mass: f64 = walk.ranked.iter().map(|(_, s)| s).sum();
        assert!((mass - 1.0).abs() < 1e-6, "{mass}");

        let whole_walk = whole
            .walk(&[(1, 1.0)], Weights::Gain, PprParams::default())
            .unwrap();
        assert!(whole_walk.ranked.iter().any(|(id, _)| *id == 9));
    }

    #[test]
    fn links_are_edges_of_their_own_weight_beside_the_gain_edges() {
        // No gain edge leaves 1: only its link to 3 does. 2 → 3 is both a
        // gain edge and a link; 4 is linked from outside the scope only.
        let edges = [edge(2, 3, 0.4)];
        let links = [(1, 3), (2, 3), (9, 4), (1, 1)];
        let graph = WalkGraph::of((1, 1), vec![1, 2, 3, 4, 9], &edges, &links).unwrap();
        assert_eq!(graph.edges(), 4, "the link of a chunk to itself is no edge");
        assert_eq!(graph.links_from(1), &[3]);

        let walk = graph
            .walk(&[(1, 1.0)], Weights::Gain, PprParams::default())
            .unwrap();
        let reached: Vec<i64> = walk.ranked.iter().map(|(id, _)| *id).collect();
        assert_eq!(reached, vec![1, 3]);

        let greedy = graph.strongest_edges(
            &[Seed {
                chunk_id: 2,
                similarity: 0.9,
                weight: 1.0,
            }],
            2,
        );
        assert_eq!(greedy[1], (3, 0.4 + LINK_WEIGHT));

        let scope: HashSet<i64> = [1, 2, 3, 4].into_iter().collect();
        let part = graph.within(&scope).unwrap();
        assert!(part.links_from(9).is_empty());
        let among: HashSet<(i64, i64)> = part.links_among(&scope).into_iter().collect();
        assert_eq!(among, [(1, 3), (2, 3)].into_iter().collect());

        let without = WalkGraph::of((1, 1), vec![1, 2, 3, 4, 9], &edges, &[]).unwrap();
        let stays = without
            .walk(&[(1, 1.0)], Weights::Gain, PprParams::default())
            .unwrap();
        assert_eq!(stays.ranked.len(), 1, "without links, 1 leads nowhere");
    }
}
