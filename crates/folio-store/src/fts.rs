//! BM25 over the FTS5 index of chunk text and heading paths.

use std::collections::HashMap;
use std::sync::Mutex;

use super::scope::{chunks_in, DocumentSet};
use super::{Result, Store};

/// Terms whose counts a store keeps; past this, it starts again.
const COUNTS_KEPT: usize = 20_000;

/// Counts of FTS5 terms ([`Store::term_matches`]) at one vector version.
#[derive(Default)]
pub(super) struct TermCounts(Mutex<KnownCounts>);

#[derive(Default)]
struct KnownCounts {
    version: i64,
    /// (quoted term, cap) → matches, at most the cap.
    counts: HashMap<(String, u64), u64>,
}

impl TermCounts {
    /// The kept count of each term (`None` for those not kept) at `version`.
    fn known(&self, version: i64, terms: &[String], cap: u64) -> Vec<Option<u64>> {
        let mut known = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if known.version != version {
            known.counts.clear();
            known.version = version;
        }
        terms
            .iter()
            .map(|t| known.counts.get(&(t.clone(), cap)).copied())
            .collect()
    }

    fn keep(&self, version: i64, term: &str, cap: u64, count: u64) {
        let mut known = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if known.version != version {
            return;
        }
        if known.counts.len() >= COUNTS_KEPT {
            known.counts.clear();
        }
        known.counts.insert((term.to_string(), cap), count);
    }
}

/// A BM25 query whose terms were counted ([`Store::term_matches`]).
/// Terms are quoted FTS5 terms, built by `retrieve::bm25`, never user text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountedQuery {
    /// The terms that score, each with the number of chunks it matches.
    pub scored: Vec<(String, u64)>,
    /// When not empty: only chunks holding one of these (some of `scored`)
    /// are ranked.
    pub within: Vec<String>,
}

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
    /// costs no more than `cap` rows of its posting list. Counts are kept
    /// for the store's vector version they were made at (every write of
    /// chunks moves it), so the words a library's questions share, the
    /// most expensive to count, are counted once per change of the library.
    pub async fn term_matches(&self, terms: &[String], cap: u64) -> Result<Vec<u64>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let version = self.vectors_version().await?;
        let mut counts = self.term_counts.known(version, terms, cap);
        let missing: Vec<usize> = (0..terms.len()).filter(|i| counts[*i].is_none()).collect();
        if !missing.is_empty() {
            let fresh = self
                .count_terms(missing.iter().map(|i| &terms[*i]), cap)
                .await?;
            for (i, n) in missing.into_iter().zip(fresh) {
                self.term_counts.keep(version, &terms[i], cap, n);
                counts[i] = Some(n);
            }
        }
        Ok(counts.into_iter().map(|n| n.unwrap_or(0)).collect())
    }

    /// The counts of `terms`, up to `cap`, in one statement.
    async fn count_terms(
        &self,
        terms: impl ExactSizeIterator<Item = &String>,
        cap: u64,
    ) -> Result<Vec<u64>> {
        let n = terms.len();
        let sql = (0..n)
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
        let mut counts = vec![0; n];
        for (i, matches) in q.fetch_all(&self.pool).await? {
            if let Some(slot) = counts.get_mut(i as usize) {
                *slot = matches as u64;
            }
        }
        Ok(counts)
    }

    /// The `k` best chunks for `query`, best first, with BM25 scores where
    /// higher is better, ranked by [`super::fts_rank`]: the same scores as
    /// [`Store::bm25`] gives the same terms, but only chunks holding one of
    /// `query.within` (if any are named) are ranked, and no term's posting
    /// list is walked to count it again. Heading words count half, as there.
    pub async fn bm25_counted(
        &self,
        query: &CountedQuery,
        k: usize,
        scope: Option<&DocumentSet>,
    ) -> Result<Vec<(i64, f64)>> {
        let scored = query
            .scored
            .iter()
            .map(|(term, _)| term.as_str())
            .collect::<Vec<_>>()
            .join(" OR ");
        let fts = if query.within.is_empty() {
            scored
        } else {
            format!("({scored}) AND ({})", query.within.join(" OR "))
        };
        let counts: Vec<u64> = query.scored.iter().map(|(_, n)| *n).collect();
        self.ranked(&fts, Some(&counts), k, scope).await
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
        self.ranked(query, None, k, scope).await
    }

    /// The `k` best chunks for the FTS5 query `fts` within `scope`, ranked
    /// by FTS5's `bm25()` or, given the scored phrases' match `counts`, by
    /// `folio_bm25`; scores negated so that higher is better.
    async fn ranked(
        &self,
        fts: &str,
        counts: Option<&[u64]>,
        k: usize,
        scope: Option<&DocumentSet>,
    ) -> Result<Vec<(i64, f64)>> {
        let within = match scope {
            None => String::new(),
            // `+` keeps the filter out of FTS5's plan: MATCH drives, and each
            // match is looked up in the scope's chunks, read once.
            Some(_) => format!("AND +rowid IN ({})", chunks_in(3)),
        };
        let rank = match counts {
            None => "bm25(chunks_fts, 1.0, 0.5)".to_string(),
            Some(counts) => {
                let first = if scope.is_some() { 4 } else { 3 };
                let params: String = (0..counts.len())
                    .map(|i| format!(", ?{}", first + i))
                    .collect();
                format!("folio_bm25(chunks_fts, 1.0, 0.5, ?2{params})")
            }
        };
        let sql = format!(
            "SELECT rowid, {rank} AS s FROM chunks_fts \
             WHERE chunks_fts MATCH ?1 {within} ORDER BY s LIMIT ?2"
        );
        let mut q = sqlx::query_as::<_, (i64, f64)>(&sql)
            .bind(fts)
            .bind(k as i64);
        if let Some(documents) = scope {
            q = q.bind(documents.chunks_json());
        }
        for count in counts.unwrap_or(&[]) {
            q = q.bind(*count as i64);
        }
        let rows = q.fetch_all(&self.pool).await?;
        Ok(rows.into_iter().map(|(id, s)| (id, -s)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORDS: [&str; 8] = [
        "apple", "pear", "plum", "river", "stone", "bridge", "lamp", "cloud",
    ];

    /// A store whose full-text index holds `rows` chunks of deterministic
    /// text: word frequencies and row lengths vary, so IDF and length
    /// normalisation both matter.
    async fn store_with(rows: usize) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.sqlite")).await.unwrap();
        let mut state = 7u64;
        for id in 1..=rows as i64 {
            let words: Vec<&str> = (0..3 + (id % 11))
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1);
                    // Squared, so early words are common and late ones rare.
                    let x = (state >> 33) as f64 / (1u64 << 31) as f64;
                    WORDS[((x * x) * WORDS.len() as f64) as usize]
                })
                .collect();
            sqlx::query("INSERT INTO chunks_fts(rowid, text, heading_path) VALUES (?, ?, ?)")
                .bind(id)
                .bind(words.join(" "))
                .bind(WORDS[id as usize % 3])
                .execute(store.pool())
                .await
                .unwrap();
        }
        (dir, store)
    }

    async fn counted(store: &Store, words: &[&str]) -> Vec<(String, u64)> {
        let terms: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
        let counts = store.term_matches(&terms, u64::MAX >> 1).await.unwrap();
        terms.into_iter().zip(counts).collect()
    }

    fn assert_same(ours: &[(i64, f64)], builtin: &[(i64, f64)]) {
        assert_eq!(ours.len(), builtin.len());
        for (a, b) in ours.iter().zip(builtin) {
            assert_eq!(a.0, b.0, "{ours:?}\n{builtin:?}");
            assert!((a.1 - b.1).abs() < 1e-9, "{a:?} against {b:?}");
        }
    }

    /// The top k with the scores of FTS5's own function, for a short list
    /// (where lengths are skipped) and one longer than the matches.
    #[tokio::test]
    async fn counted_ranking_returns_fts5_bm25s_top_k_and_scores() {
        let (_dir, store) = store_with(400).await;
        let query = CountedQuery {
            scored: counted(&store, &["apple", "river", "lamp", "cloud"]).await,
            within: Vec::new(),
        };
        for k in [1, 3, 10, 40, 1_000] {
            let builtin = store
                .bm25("\"apple\" OR \"river\" OR \"lamp\" OR \"cloud\"", k, None)
                .await
                .unwrap();
            assert!(builtin.len() == k || (k == 1_000 && builtin.len() > 200));
            assert_same(
                &store.bm25_counted(&query, k, None).await.unwrap(),
                &builtin,
            );
        }
    }

    #[tokio::test]
    async fn a_scoped_counted_ranking_matches_the_scoped_builtin() {
        let (_dir, store) = store_with(400).await;
        let scope = DocumentSet::new(vec![1], (1..=150).collect());
        let query = CountedQuery {
            scored: counted(&store, &["apple", "river", "cloud"]).await,
            within: Vec::new(),
        };
        let builtin = store
            .bm25("\"apple\" OR \"river\" OR \"cloud\"", 10, Some(&scope))
            .await
            .unwrap();
        assert_eq!(builtin.len(), 10);
        assert!(builtin.iter().all(|(id, _)| *id <= 150));
        assert_same(
            &store.bm25_counted(&query, 10, Some(&scope)).await.unwrap(),
            &builtin,
        );
    }

    #[tokio::test]
    async fn a_narrowed_query_ranks_only_its_rows_with_unchanged_scores() {
        let (_dir, store) = store_with(200).await;
        let scored = counted(&store, &["apple", "pear", "cloud"]).await;
        let builtin = store
            .bm25("\"apple\" OR \"pear\" OR \"cloud\"", 500, None)
            .await
            .unwrap();
        let with_cloud: Vec<i64> = store
            .bm25("\"cloud\"", 500, None)
            .await
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert!(!with_cloud.is_empty() && with_cloud.len() < builtin.len());
        let expected: Vec<(i64, f64)> = builtin
            .into_iter()
            .filter(|(id, _)| with_cloud.contains(id))
            .collect();
        let query = CountedQuery {
            scored,
            within: vec!["\"cloud\"".into()],
        };
        assert_same(
            &store.bm25_counted(&query, 500, None).await.unwrap(),
            &expected,
        );
    }

    #[tokio::test]
    async fn term_counts_are_kept_until_the_library_changes() {
        let (_dir, store) = store_with(50).await;
        let cloud = vec!["\"cloud\"".to_string()];
        let before = store.term_matches(&cloud, 1_000).await.unwrap()[0];
        sqlx::query("INSERT INTO chunks_fts(rowid, text, heading_path) VALUES (1000, 'cloud', '')")
            .execute(store.pool())
            .await
            .unwrap();
        assert_eq!(store.term_matches(&cloud, 1_000).await.unwrap()[0], before);
        let mut conn = store.pool().acquire().await.unwrap();
        super::super::vectors::bump_vectors_version(&mut conn)
            .await
            .unwrap();
        drop(conn);
        assert_eq!(
            store.term_matches(&cloud, 1_000).await.unwrap()[0],
            before + 1
        );
    }

    #[tokio::test]
    async fn the_ranking_function_refuses_a_call_without_counts() {
        let (_dir, store) = store_with(5).await;
        let Err(e) = sqlx::query(
            "SELECT folio_bm25(chunks_fts, 1.0, 0.5, 10) FROM chunks_fts WHERE chunks_fts MATCH 'apple'",
        )
        .fetch_all(store.pool())
        .await
        else {
            panic!("folio_bm25 ranked without counts");
        };
        assert!(e.to_string().contains("a match count for each"), "{e}");
    }
}
