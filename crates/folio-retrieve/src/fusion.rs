//! Reciprocal rank fusion (Cormack et al., 2009): scores by rank alone, so a
//! cosine similarity and a BM25 score never have to be put on one scale.

use std::collections::HashMap;

/// The constant from the RRF paper; it damps the weight of the very top ranks.
const RRF_K: f64 = 60.0;

pub fn reciprocal_rank_fusion(lists: &[&[(i64, f64)]]) -> Vec<(i64, f64)> {
    let mut scores: HashMap<i64, f64> = HashMap::new();
    for list in lists {
        for (rank, (id, _)) in list.iter().enumerate() {
            *scores.entry(*id).or_default() += 1.0 / (RRF_K + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(i64, f64)> = scores.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_ranked_well_by_both_lists_win() {
        let dense = [(1, 0.9), (2, 0.8), (3, 0.7)];
        let bm25 = [(2, 12.0), (4, 11.0), (5, 3.0)];
        let fused = reciprocal_rank_fusion(&[&dense, &bm25]);
        assert_eq!(fused[0].0, 2);
        assert_eq!(fused[1].0, 1);
        assert_eq!(fused.len(), 5);
    }
}
