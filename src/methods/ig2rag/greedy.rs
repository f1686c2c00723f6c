//! The `greedy` ablation (iG² w/ GS): start from the seeds and repeatedly
//! add the target of the strongest gain edge leaving what is chosen.

use std::collections::HashSet;

use super::Seed;
use crate::retrieve::WalkGraph;

/// Up to `k` chunks: the seeds by similarity, then edge targets in the
/// order taken, each with the weight that brought it in.
pub fn expand(graph: &WalkGraph, seeds: &[Seed], k: usize) -> Vec<(i64, f64)> {
    let mut chosen: Vec<(i64, f64)> = seeds
        .iter()
        .take(k)
        .map(|s| (s.chunk_id, s.similarity))
        .collect();
    let mut taken: HashSet<i64> = chosen.iter().map(|(id, _)| *id).collect();
    while chosen.len() < k {
        let best = chosen
            .iter()
            .flat_map(|(id, _)| graph.out_edges(*id))
            .filter(|e| e.score > 0.0 && !taken.contains(&e.target))
            .max_by(|a, b| a.score.total_cmp(&b.score).then(b.target.cmp(&a.target)));
        let Some(edge) = best else { break };
        taken.insert(edge.target);
        chosen.push((edge.target, edge.score));
    }
    chosen
}
