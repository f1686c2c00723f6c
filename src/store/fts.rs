//! BM25 over the FTS5 index of chunk text and heading paths.

use super::scope::{chunks_in, DocumentSet};
use super::{Result, Store};

impl Store {
    /// The `k` best chunks for an FTS5 `query`, best first, with BM25 scores
    /// where higher is better. The query is FTS5 syntax: callers build it
    /// from user text with `retrieve::fts_query`, never pass user text on.
    /// Heading words count half as much as body words: a heading is shared
    /// by every chunk under it. With `scope`, only the chunks of its
    /// documents are ranked.
    pub async fn bm25(
        &self,
        query: &str,
        k: usize,
        scope: Option<&DocumentSet>,
    ) -> Result<Vec<(i64, f64)>> {
        let within = match scope {
            None => String::new(),
            // `+` keeps the filter out of FTS5's plan: MATCH drives, and each
            // match is looked up in the scope's chunks, read once.
            Some(_) => format!("AND +rowid IN ({})", chunks_in(3)),
        };
        let sql = format!(
            "SELECT rowid, bm25(chunks_fts, 1.0, 0.5) AS s FROM chunks_fts \
             WHERE chunks_fts MATCH ?1 {within} ORDER BY s LIMIT ?2"
        );
        let mut q = sqlx::query_as::<_, (i64, f64)>(&sql)
            .bind(query)
            .bind(k as i64);
        if let Some(documents) = scope {
            q = q.bind(documents.chunks_json());
        }
        let rows = q.fetch_all(&self.pool).await?;
        Ok(rows.into_iter().map(|(id, s)| (id, -s)).collect())
    }
}
