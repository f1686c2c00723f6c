//! BM25 over the FTS5 index. User text is never passed to FTS5 as query
//! syntax: each word becomes a quoted term, so `"`, `*`, `NEAR` or a stray
//! parenthesis in a question cannot break or change the query.

use super::Result;
use crate::store::{DocumentSet, Store};

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

/// The `k` best chunks for `query` by BM25, best first, among `scope`'s
/// documents if one is given.
pub async fn search(
    store: &Store,
    query: &str,
    k: usize,
    scope: Option<&DocumentSet>,
) -> Result<Vec<(i64, f64)>> {
    let Some(q) = fts_query(query) else {
        return Ok(Vec::new());
    };
    Ok(store.bm25(&q, k, scope).await?)
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
