//! BM25 over the FTS5 index. User text is never passed to FTS5 as query
//! syntax: each word becomes a quoted term, so `"`, `*`, `NEAR` or a stray
//! parenthesis in a question cannot break or change the query.
//!
//! FTS5 scores every chunk that matches any term of an OR query before it
//! can sort, and scoring, not finding, is what costs (on 1M chunks, about
//! 1.6 µs a chunk scored against 0.1 µs a chunk matched). Two rules keep
//! that bounded; both are measured for quality by `folio bench search`
//! (HotpotQA dev) and for speed and agreement by `folio bench scale`.
//!
//! - **Common words are left out.** A term matching more than
//!   [`COMMON_SHARE`] of the chunks (and more than [`COMMON_AT_LEAST`], so a
//!   small library, cheap to score whole, keeps its words) is dropped when
//!   the query has a rarer one: "which", "the" or "from" barely move BM25's
//!   ranking (their IDF is near zero). Counting stops at the threshold, so
//!   finding out costs little. A query of only common words keeps its longest.
//! - **Rows are ranked only where the rarest words are.** When the kept
//!   terms match more than [`RANKED_AT_MOST`] chunks together, only the
//!   chunks holding one of the rarest terms (taken rarest first while their
//!   matches fit in that number, and at least one) are ranked, still scored
//!   on every kept term. A chunk holding none of a question's rare words is
//!   seldom in its top ten; on the 1M-chunk benchmark library, 98.6% of the
//!   unrestricted top-10 chunks hold one (HotpotQA dev questions, one-off
//!   measurement, 2026-11-28). Below about 400,000 chunks the kept terms
//!   rarely match that many, and nothing changes.

use super::Result;
use folio_store::{CountedQuery, DocumentSet, Store};

/// The share of chunks beyond which a term is common.
const COMMON_SHARE: f64 = 0.05;
/// No term matching this many chunks or fewer is common.
const COMMON_AT_LEAST: u64 = 500;
/// Chunks a query ranks before it narrows to its rarest words.
const RANKED_AT_MOST: u64 = 20_000;

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

/// Whether a query whose kept terms match many chunks ranks only the
/// chunks of its rarest terms (see the top).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Narrowing {
    /// What search does.
    ToRarest,
    /// Every chunk holding a kept term is ranked: the baseline that
    /// `folio bench scale` measures the narrowing against.
    Off,
}

/// The `k` best chunks for `query` by BM25, best first, among `scope`'s
/// documents if one is given; see the top for which words count.
pub async fn search(
    store: &Store,
    query: &str,
    k: usize,
    scope: Option<&DocumentSet>,
) -> Result<Vec<(i64, f64)>> {
    search_narrowed(store, query, k, scope, Narrowing::ToRarest).await
}

/// [`search`], narrowing as `narrowing` says.
pub async fn search_narrowed(
    store: &Store,
    query: &str,
    k: usize,
    scope: Option<&DocumentSet>,
    narrowing: Narrowing,
) -> Result<Vec<(i64, f64)>> {
    let terms = query_terms(query);
    if terms.len() < 2 {
        return match fts_query(query) {
            Some(fts) => Ok(store.bm25(&fts, k, scope).await?),
            None => Ok(Vec::new()),
        };
    }
    let common = common_threshold(store.chunk_count().await?);
    let quoted_terms: Vec<String> = terms.iter().map(|t| quoted(t)).collect();
    let matches = store.term_matches(&quoted_terms, common + 1).await?;
    Ok(match plan(quoted_terms, &matches, common, narrowing) {
        Some(counted) => store.bm25_counted(&counted, k, scope).await?,
        // Only common words: the longest, whose count stopped early, is
        // left to FTS5 to count.
        None => {
            let longest = terms.iter().max_by_key(|t| t.chars().count());
            match longest {
                Some(t) => store.bm25(&quoted(t), k, scope).await?,
                None => Vec::new(),
            }
        }
    })
}

/// The ranked query for `terms` (quoted) matching `matches` chunks each:
/// the terms matching at most `common` chunks, narrowed to rows holding
/// the rarest of them once they match more than [`RANKED_AT_MOST`] (unless
/// `narrowing` is off); `None` when every term is common.
fn plan(
    terms: Vec<String>,
    matches: &[u64],
    common: u64,
    narrowing: Narrowing,
) -> Option<CountedQuery> {
    let scored: Vec<(String, u64)> = terms
        .into_iter()
        .zip(matches.iter().copied())
        .filter(|(_, n)| *n <= common)
        .collect();
    if scored.is_empty() {
        return None;
    }
    let mut rarest_first: Vec<&(String, u64)> = scored.iter().collect();
    rarest_first.sort_by_key(|(_, n)| *n);
    let mut within = Vec::new();
    let mut ranked = 0;
    for (term, n) in rarest_first {
        if !within.is_empty() && ranked + n > RANKED_AT_MOST {
            break;
        }
        within.push(term.clone());
        ranked += n;
    }
    if within.len() == scored.len() || narrowing == Narrowing::Off {
        within.clear();
    }
    Some(CountedQuery { scored, within })
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

    fn terms(ws: &[&str]) -> Vec<String> {
        ws.iter().map(|w| w.to_string()).collect()
    }

    fn counted(ws: &[(&str, u64)]) -> Vec<(String, u64)> {
        ws.iter().map(|(w, n)| (w.to_string(), *n)).collect()
    }

    #[test]
    fn common_terms_go_when_a_rarer_one_stays() {
        let query = plan(
            terms(&["which", "band", "from"]),
            &[900, 12, 400],
            500,
            Narrowing::ToRarest,
        )
        .unwrap();
        assert_eq!(query.scored, counted(&[("band", 12), ("from", 400)]));
        assert!(query.within.is_empty());
        let common_only = plan(terms(&["what", "is"]), &[501, 501], 500, Narrowing::Off);
        assert_eq!(common_only, None);
    }

    #[test]
    fn a_query_over_the_budget_ranks_only_rows_of_its_rarest_terms() {
        let query = plan(
            terms(&["band", "the", "formed", "seattle", "grunge"]),
            &[15_000, 60_000, 9_000, 4_000, 300],
            50_000,
            Narrowing::ToRarest,
        )
        .unwrap();
        assert_eq!(
            query.scored,
            counted(&[
                ("band", 15_000),
                ("formed", 9_000),
                ("seattle", 4_000),
                ("grunge", 300)
            ])
        );
        // Rarest first while they fit in RANKED_AT_MOST (20,000): 300 +
        // 4,000 + 9,000; "band" would pass it.
        assert_eq!(query.within, terms(&["grunge", "seattle", "formed"]));
        let off = plan(
            terms(&["band", "formed", "seattle"]),
            &[15_000, 9_000, 4_000],
            50_000,
            Narrowing::Off,
        )
        .unwrap();
        assert_eq!(off.scored.len(), 3);
        assert!(off.within.is_empty());
    }

    #[test]
    fn the_rarest_term_narrows_even_when_it_alone_passes_the_budget() {
        let query = plan(
            terms(&["a1", "b2"]),
            &[30_000, 45_000],
            50_000,
            Narrowing::ToRarest,
        )
        .unwrap();
        assert_eq!(query.within, terms(&["a1"]));
    }
}
