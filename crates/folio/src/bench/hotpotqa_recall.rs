//! What int8 vectors and BM25's dropping of common words cost in retrieval
//! quality, on real text: the HotpotQA corpus (8,094 passages; the first
//! 1,000 with `--quick`) and its 200 dev questions, embedded by the
//! configured model and stored the way indexing stores them.
//!
//! Dense: the baseline is exact search over the same vectors in f32 (brute
//! force here, before they are stored). Reported: recall@10 against it of
//! the in-memory index (long-lived processes) and of sqlite-vec (one-shot
//! CLI commands), and the questions' recall@10 of supporting titles, f32
//! against int8: the quality a user sees.
//!
//! BM25: the same questions with every word in the query (the baseline)
//! and with common words dropped (what search does): supporting-title
//! recall@10, and latency (small at this size; the synthetic 100k and 1M
//! stores time it at scale).

use std::collections::HashSet;
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use serde::Deserialize;
use serde_json::{json, Value};

use super::embed_server::passages;
use super::report::{Row, Target};
use super::search::flat_document;
use super::Latency;
use super::{Context, TempDir};
use folio_engine::embed::Embedder;
use folio_engine::retrieve::{fts_query, ExactVectors, SearchMode};
use folio_engine::store::Store;

const K: usize = 10;
/// The bound: int8 loses at most a point of recall@10.
const TARGET_RECALL: f64 = 0.99;
/// Dropping common words keeps at least this share of BM25's recall.
const TARGET_BM25_RECALL_RATIO: f64 = 0.98;
/// Passages a commit while storing.
const PER_COMMIT: usize = 500;

#[derive(Deserialize)]
pub(super) struct Question {
    pub question: String,
    supporting_titles: Vec<String>,
}

pub async fn measure(ctx: &Context) -> Result<(Vec<Row>, Value)> {
    let limit = if ctx.quick { 1_000 } else { usize::MAX };
    let texts = passages(ctx, limit)?;
    let titles: Vec<&str> = texts
        .iter()
        .map(|t| t.split_once("\n\n").map_or(t.as_str(), |(title, _)| title))
        .collect();
    let questions = dev_questions(ctx)?;
    let embedder =
        Embedder::load(&ctx.config.embedding_source()).context("loading the embedding model")?;
    eprintln!(
        "search: embedding {} HotpotQA passages for the int8 recall check",
        texts.len()
    );
    let vectors = embedder.embed_bulk(&texts)?;
    let queries: Vec<String> = questions.iter().map(|q| q.question.clone()).collect();
    let query_vectors = embedder.embed(&queries)?;

    let dir = TempDir::new("int8-recall")?;
    let store = Store::open(&dir.path().join("folio.sqlite")).await?;
    let (space, _) = store
        .ensure_vector_space(embedder.name(), embedder.dim())
        .await?;
    let folder_id = store.add_folder("/folio-bench/hotpotqa").await?;
    let documents: Vec<_> = texts
        .iter()
        .zip(&titles)
        .zip(&vectors)
        .enumerate()
        .map(|(i, ((text, title), v))| {
            flat_document(
                folder_id,
                format!("/folio-bench/hotpotqa/{i:05}.md"),
                title,
                vec![(text.clone(), v.clone())],
            )
        })
        .collect();
    for batch in documents.chunks(PER_COMMIT) {
        store.write_documents(batch, &space, None, None).await?;
    }
    let (first_id, last_id, count) = store.chunk_id_range().await?;
    if count as usize != texts.len() || last_id - first_id + 1 != count {
        bail!("expected {} chunks with consecutive ids", texts.len());
    }
    let index = ExactVectors::load(&store, embedder.dim()).await?;

    let mut exact = Vec::new();
    let mut memory = Vec::new();
    let mut sqlite = Vec::new();
    for q in &query_vectors {
        exact.push(exact_top(&vectors, q));
        let rows = |hits: Vec<(i64, f32)>| -> Vec<usize> {
            hits.into_iter()
                .map(|(id, _)| (id - first_id) as usize)
                .collect()
        };
        memory.push(rows(index.nearest(q, K, None)));
        sqlite.push(rows(store.nearest_chunks(q, K, None).await?));
    }
    let mut every_word = (Vec::new(), Vec::new());
    let mut pruned = (Vec::new(), Vec::new());
    for (q, v) in queries.iter().zip(&query_vectors) {
        let rows = |hits: Vec<(i64, f64)>| -> Vec<usize> {
            hits.into_iter()
                .map(|(id, _)| (id - first_id) as usize)
                .collect()
        };
        let start = Instant::now();
        let all = match fts_query(q) {
            Some(fts) => store.bm25(&fts, K, None).await?,
            None => Vec::new(),
        };
        every_word.0.push(start.elapsed().as_secs_f64() * 1000.0);
        every_word.1.push(rows(all));
        let start = Instant::now();
        let kept = SearchMode::Bm25.rank(&store, None, q, v, K, None).await?;
        pruned.0.push(start.elapsed().as_secs_f64() * 1000.0);
        pruned.1.push(rows(kept));
    }
    store.close().await;
    let bm25_all = title_recall(&every_word.1, &titles, &questions);
    let bm25_pruned = title_recall(&pruned.1, &titles, &questions);
    let (all_ms, pruned_ms) = (Latency::of(&every_word.0), Latency::of(&pruned.0));

    let memory_recall = overlap(&memory, &exact);
    let sqlite_recall = overlap(&sqlite, &exact);
    let titles_f32 = title_recall(&exact, &titles, &questions);
    let titles_int8 = title_recall(&memory, &titles, &questions);
    let at = format!(
        "HotpotQA {} passages, {} questions",
        texts.len(),
        questions.len()
    );
    let rows = vec![
        Row::new(
            format!("int8 recall@10 vs exact f32, in memory ({at})"),
            "share",
            memory_recall,
        )
        .target(Target::AtLeast(TARGET_RECALL)),
        Row::new(
            format!("int8 recall@10 vs exact f32, sqlite-vec ({at})"),
            "share",
            sqlite_recall,
        )
        .target(Target::AtLeast(TARGET_RECALL)),
        Row::new(
            format!("supporting-title recall@10, int8 ({at})"),
            "share",
            titles_int8,
        )
        .baseline(titles_f32),
        Row::new(
            format!("supporting-title recall@10, BM25 without common words, vs every word ({at})"),
            "share",
            bm25_pruned,
        )
        .baseline(bm25_all)
        .target(Target::RatioAtLeast(TARGET_BM25_RECALL_RATIO)),
        Row::new(
            format!("bm25 top-10 p50 without common words, vs every word ({at})"),
            "ms",
            pruned_ms.p50,
        )
        .baseline(all_ms.p50),
    ];
    let details = json!({
        "passages": texts.len(),
        "questions": questions.len(),
        "model": embedder.name(),
        "memory_recall_vs_exact": memory_recall,
        "sqlite_vec_recall_vs_exact": sqlite_recall,
        "supporting_title_recall_f32": titles_f32,
        "supporting_title_recall_int8": titles_int8,
        "bm25_title_recall_every_word": bm25_all,
        "bm25_title_recall_without_common_words": bm25_pruned,
        "bm25_every_word_ms": every_word.0,
        "bm25_without_common_words_ms": pruned.0,
    });
    Ok((rows, details))
}

pub(super) fn dev_questions(ctx: &Context) -> Result<Vec<Question>> {
    let path = ctx.eval_dir.join("hotpotqa/dev.jsonl");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| Ok(serde_json::from_str(l)?))
        .collect()
}

/// The `K` rows with the largest f32 dot product with `q`, best first.
fn exact_top(vectors: &[Vec<f32>], q: &[f32]) -> Vec<usize> {
    let mut scored: Vec<(f32, usize)> = vectors
        .iter()
        .enumerate()
        .map(|(row, v)| (v.iter().zip(q).map(|(a, b)| a * b).sum(), row))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(K).map(|(_, row)| row).collect()
}

/// Share of the exact top-k found, over all queries.
fn overlap(found: &[Vec<usize>], exact: &[Vec<usize>]) -> f64 {
    let hits: usize = found
        .iter()
        .zip(exact)
        .map(|(f, e)| {
            let e: HashSet<_> = e.iter().collect();
            f.iter().filter(|r| e.contains(r)).count()
        })
        .sum();
    hits as f64 / (exact.len() * K) as f64
}

/// Mean share of each question's supporting titles among its top-k.
fn title_recall(found: &[Vec<usize>], titles: &[&str], questions: &[Question]) -> f64 {
    let per_question: f64 = found
        .iter()
        .zip(questions)
        .map(|(rows, q)| {
            let got: HashSet<&str> = rows.iter().map(|&r| titles[r]).collect();
            let hit = q
                .supporting_titles
                .iter()
                .filter(|t| got.contains(t.as_str()))
                .count();
            hit as f64 / q.supporting_titles.len().max(1) as f64
        })
        .sum();
    per_question / questions.len().max(1) as f64
}
