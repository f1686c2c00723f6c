//! The candidate subgraph (iG²RAG eq. 1): each chunk's top-n nearest chunks
//! by cosine similarity, the only pairs the scorer is asked about.

use std::collections::HashMap;

use crate::retrieve::VectorIndex;

pub struct Neighbourhoods<'a> {
    index: &'a VectorIndex,
    vectors: HashMap<i64, &'a [f32]>,
}

impl<'a> Neighbourhoods<'a> {
    pub fn new(index: &'a VectorIndex) -> Self {
        Neighbourhoods {
            index,
            vectors: index.vectors().collect(),
        }
    }

    /// The `n` chunks nearest to `chunk`, nearest first, with their cosine
    /// similarity; empty when the chunk has no vector.
    pub fn of(&self, chunk: i64, n: usize) -> Vec<(i64, f64)> {
        let Some(vector) = self.vectors.get(&chunk) else {
            return Vec::new();
        };
        self.index
            .nearest(vector, n + 1, None)
            .into_iter()
            .filter(|(id, _)| *id != chunk)
            .take(n)
            .map(|(id, d)| (id, 1.0 - f64::from(d * d) / 2.0))
            .collect()
    }
}
