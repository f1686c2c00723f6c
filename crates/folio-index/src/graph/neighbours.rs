//! The candidate subgraph (iG²RAG eq. 1): each chunk's top-n nearest chunks
//! by cosine similarity, the only pairs the scorer is asked about.

use std::collections::HashMap;

use folio_retrieve::ExactVectors;

pub struct Neighbourhoods<'a> {
    index: &'a ExactVectors,
    rows: HashMap<i64, usize>,
}

impl<'a> Neighbourhoods<'a> {
    pub fn new(index: &'a ExactVectors) -> Self {
        Neighbourhoods {
            index,
            rows: index.rows(),
        }
    }

    /// The `n` chunks nearest to `chunk`, nearest first, with their cosine
    /// similarity; empty when the chunk has no vector.
    pub fn of(&self, chunk: i64, n: usize) -> Vec<(i64, f64)> {
        let Some(&row) = self.rows.get(&chunk) else {
            return Vec::new();
        };
        self.index
            .nearest(&self.index.vector(row), n + 1, None)
            .into_iter()
            .filter(|(id, _)| *id != chunk)
            .take(n)
            .map(|(id, d)| (id, 1.0 - f64::from(d * d) / 2.0))
            .collect()
    }
}
