//! BM25 over the FTS5 index. User text is never passed to FTS5 as query
//! syntax: each word becomes a quoted term, so `"`, `*`, `NEAR` or a stray
//! parenthesis in a question cannot break or change the query.

use crate::error::Result;
use crate::store::Store;

/// Words of the query as quoted FTS5 terms joined with OR; `None` when the
/// query has no searchable word.
pub fn fts_query(query: &str) -> Option<String> {
    let terms: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{}\"", w.to_lowercase()))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" OR "))
}

/// Heading words count half as much as body words: a heading is shared by
/// every chunk under it.
pub async fn search(store: &Store, query: &str, k: usize) -> Result<Vec<(i64, f64)>> {
    let Some(q) = fts_query(query) else {
        return Ok(Vec::new());
    };
    let rows: Vec<(i64, f64)> = sqlx::query_as(
        "SELECT rowid, bm25(chunks_fts, 1.0, 0.5) AS s FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?",
    )
    .bind(q)
    .bind(k as i64)
    .fetch_all(store.pool())
    .await
    .map_err(crate::store::StoreError::from)?;
    Ok(rows.into_iter().map(|(id, s)| (id, -s)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_syntax_in_user_text_is_neutralised() {
        assert_eq!(
            fts_query("Rc<T> \"NEAR\"(x*"),
            Some("\"rc\" OR \"t\" OR \"near\" OR \"x\"".into())
        );
        assert_eq!(fts_query("?? !!"), None);
    }
}
