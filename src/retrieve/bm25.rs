//! BM25 over the FTS5 index. User text is never passed to FTS5 as query
//! syntax: each word becomes a quoted term, so `"`, `*`, `NEAR` or a stray
//! parenthesis in a question cannot break or change the query.
//!
//! Common words are left out of the query. FTS5 computes a score for every
//! chunk that matches any term of an OR query before it can sort, so
//! "which", "the" or "from" in a question would have it score most of a
//! large library, while such words barely move BM25's ranking (their IDF is
//! near zero). A term that matches more than [`COMMON_SHARE`] of the chunks
//! (and more than [`COMMON_AT_LEAST`], so a small library, cheap to score
//! whole, keeps its words) is dropped when the query has a rarer one;
//! counting stops there, so finding out costs little. A query of only
//! common words keeps its longest. Retrieval quality with and without the
//! pruning is measured on HotpotQA by `folio bench search`.

use super::Result;
use crate::store::{DocumentSet, Store};

/// The share of chunks beyond which a term is common.
const COMMON_SHARE: f64 = 0.05;
/// No term matching this many chunks or fewer is common.
const COMMON_AT_LEAST: u64 = 500;

/// The most chunks a term may match in a library of `chunks` and not be
/// common.
pub fn common_threshold(chunks: u64) -> u64 {
    ((chunks as f64 * COMMON_SHARE).ceil() as u64).max(COMMON_AT_LEAST)
}

/// The query's distinct words, lower case, in order.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word = word.to_lowercase();
        if !terms.contains(&word) {
            terms.push(word);
        }
    }
    terms
}

fn quoted(term: &str) -> String {
    format!("\"{term}\"")
}

/// `terms` as quoted FTS5 terms joined with OR.
fn any_of(terms: &[String]) -> String {
    terms
        .iter()
        .map(|t| quoted(t))
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// Words of the query as quoted FTS5 terms joined with OR; `None` when the
/// query has no searchable word. Every word is kept.
pub fn fts_query(query: &str) -> Option<String> {
    let terms = query_terms(query);
    (!terms.is_empty()).then(|| any_of(&terms))
}

/// The `k` best chunks for `query` by BM25, best first, among `scope`'s
/// documents if one is given; common words are left out (see the top).
pub async fn search(
    store: &Store,
    query: &str,
    k: usize,
    scope: Option<&DocumentSet>,
) -> Result<Vec<(i64, f64)>> {
    let terms = distinctive(store, query_terms(query)).await?;
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    Ok(store.bm25(&any_of(&terms), k, scope).await?)
}

/// `terms` less the common ones.
async fn distinctive(store: &Store, terms: Vec<String>) -> Result<Vec<String>> {
    if terms.len() < 2 {
        return Ok(terms);
    }
    let common = common_threshold(store.chunk_count().await?);
    let quoted_terms: Vec<String> = terms.iter().map(|t| quoted(t)).collect();
    let matches = store.term_matches(&quoted_terms, common + 1).await?;
    Ok(keep_rare(terms, &matches, common))
}

/// The terms matching at most `common` chunks, or the longest term if none does.
fn keep_rare(terms: Vec<String>, matches: &[u64], common: u64) -> Vec<String> {
    let longest = terms.iter().max_by_key(|t| t.chars().count()).cloned();
    let rare: Vec<String> = terms
        .into_iter()
        .zip(matches)
        .filter(|(_, n)| **n <= common)
        .map(|(t, _)| t)
        .collect();
    if rare.is_empty() {
        longest.into_iter().collect()
    } else {
        rare
    }
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
        assert_eq!(fts_query("the The THE"), Some("\"the\"".into()));
    }

    #[test]
    fn a_term_is_common_past_a_share_of_a_large_library_only() {
        assert_eq!(common_threshold(100), COMMON_AT_LEAST);
        assert_eq!(common_threshold(100_000), 5_000);
        assert_eq!(common_threshold(1_000_000), 50_000);
    }

    #[test]
    fn common_terms_go_when_a_rarer_one_stays_and_the_longest_stays_otherwise() {
        let terms = |ws: &[&str]| ws.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert_eq!(
            keep_rare(terms(&["which", "band", "from"]), &[900, 12, 400], 50),
            terms(&["band"])
        );
        assert_eq!(
            keep_rare(terms(&["what", "is", "there"]), &[51, 51, 51], 50),
            terms(&["there"])
        );
        assert_eq!(
            keep_rare(terms(&["rust", "borrow"]), &[3, 50], 50),
            terms(&["rust", "borrow"])
        );
    }
}
