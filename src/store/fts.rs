//! BM25 over the FTS5 index of chunk text and heading paths.

use super::scope::{chunks_in, DocumentSet};
use super::{Result, Store};

impl Store {
    /// How many chunks the index holds.
    pub async fn chunk_count(&self) -> Result<u64> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chunks")
            .fetch_one(&self.pool)
            .await?;
        Ok(n as u64)
    }

    /// How many chunks each FTS5 `term` (quoted, from `retrieve::bm25`)
    /// matches, counting no further than `cap`: a common term's count
    /// costs no more than `cap` rows of its posting list. One statement
    /// for all the terms.
    pub async fn term_matches(&self, terms: &[String], cap: u64) -> Result<Vec<u64>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let sql = (0..terms.len())
            .map(|i| {
                format!(
                    "SELECT {i}, COUNT(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ?{} LIMIT ?1)",
                    i + 2
                )
            })
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        let mut q = sqlx::query_as::<_, (i64, i64)>(&sql).bind(cap as i64);
        for term in terms {
            q = q.bind(term);
        }
        let mut counts = vec![0; terms.len()];
        for (i, n) in q.fetch_all(&self.pool).await? {
            if let Some(slot) = counts.get_mut(i as usize) {
                *slot = n as u64;
            }
        }
        Ok(counts)
    }

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
