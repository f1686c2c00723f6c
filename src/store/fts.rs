//! BM25 over the FTS5 index of chunk text and heading paths.

use super::{Result, Store};

impl Store {
    /// The `k` best chunks for an FTS5 `query`, best first, with BM25 scores
    /// where higher is better. The query is FTS5 syntax: callers build it
    /// from user text with `retrieve::fts_query`, never pass user text on.
    /// Heading words count half as much as body words: a heading is shared
    /// by every chunk under it.
    pub async fn bm25(&self, query: &str, k: usize) -> Result<Vec<(i64, f64)>> {
        let rows: Vec<(i64, f64)> = sqlx::query_as(
            "SELECT rowid, bm25(chunks_fts, 1.0, 0.5) AS s FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?",
        )
        .bind(query)
        .bind(k as i64)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(|(id, s)| (id, -s)).collect())
    }
}
