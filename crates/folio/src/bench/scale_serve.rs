//! The serving half of `folio bench scale`, run by it as a fresh process
//! (`folio bench scale-serve`), so that its memory is that of a library
//! being served and nothing else: it opens the library as the app does,
//! loads both embedded models (and has the LLM generate a few tokens, so
//! its weights are in memory, not just mapped), searches the index once
//! for every query untimed, times the queries it is given, and prints a
//! [`Served`] report with its resident memory.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use tokio_util::sync::CancellationToken;

use super::process::resident;
use super::scale::{Query, ScopedTimes, Served, Timed, K, SCOPES};
use super::search::{folder, FOLDERS};
use folio_engine::config::Config;
use folio_engine::library::Library;
use folio_engine::llm::{reply, ChatMessage, GenerateOptions};
use folio_engine::retrieve::{bm25_narrowed, CopyStatus, Narrowing, SearchMode, VectorCopy};
use folio_engine::store::{sqlite_heap_bytes, DocumentSet, Scope, Store};

const WARMUP: usize = 5;

pub async fn run(config: Config, queries: &Path) -> Result<()> {
    let queries: Vec<Query> = serde_json::from_slice(
        &std::fs::read(queries).with_context(|| format!("reading {}", queries.display()))?,
    )
    .context("the queries file is not a list of queries")?;
    let started = Instant::now();
    let library = Library::open(config).await?;
    let retrieval = library.retrieval();
    retrieval.warm_vectors().await?;
    let CopyStatus::Approximate { indexed, pending } = retrieval.vector_copy() else {
        bail!(
            "the library was not served from its saved approximate index ({:?})",
            retrieval.vector_copy()
        );
    };
    let llm = library.llm().await?;
    let options = GenerateOptions {
        max_tokens: 8,
        temperature: 0.0,
        ..GenerateOptions::default()
    };
    reply(
        llm.as_ref(),
        &[ChatMessage::user("Say hello.")],
        &options,
        &CancellationToken::new(),
    )
    .await?;
    let open_seconds = started.elapsed().as_secs_f64();
    let copy = retrieval
        .current_vectors()
        .await?
        .context("the library has no vector copy to search")?;
    let copy: &VectorCopy = &copy;
    let store = library.store();

    // The index is memory-mapped: the first searches fault its pages into
    // this process, which a library serving for a while has long done
    // (faiss's index is in its process's memory from the build). One
    // untimed pass over the queries does that here.
    for q in &queries {
        copy.nearest(&q.vector, K, None);
    }
    let dense = timed(
        &queries,
        |q| async move { Ok(copy.nearest(&q.vector, K, None)) },
    )
    .await?;
    let hybrid = timed(&queries, |q| rank(store, copy, q, SearchMode::Hybrid, None)).await?;
    let bm25 = timed(&queries, |q| rank(store, copy, q, SearchMode::Bm25, None)).await?;
    let bm25_every_chunk = timed(&queries, |q| async move {
        Ok(bm25_narrowed(store, &q.text, K, None, Narrowing::Off)
            .await?
            .into_iter()
            .map(|(id, score)| (id, score as f32))
            .collect())
    })
    .await?;
    let hybrid_embedded = timed(&queries, |q| async move {
        Ok(retrieval
            .search(&q.text, K, SearchMode::Hybrid, None)
            .await?
            .into_iter()
            .map(|hit| (hit.chunk_id, hit.score as f32))
            .collect())
    })
    .await?;
    let mut scoped = Vec::new();
    for percent in SCOPES {
        let scope = Scope {
            paths: (0..percent * FOLDERS / 100).map(folder).collect(),
            ..Scope::default()
        };
        let documents = store
            .resolve_scope(&scope)
            .await?
            .context("a scope of folders resolved to the whole library")?;
        let within = &documents;
        let dense = timed(&queries, |q| async move {
            Ok(copy.nearest(&q.vector, K, Some(within)))
        })
        .await?;
        let hybrid = timed(&queries, |q| {
            rank(store, copy, q, SearchMode::Hybrid, Some(within))
        })
        .await?;
        if let Some(id) = dense
            .ids
            .iter()
            .chain(&hybrid.ids)
            .flatten()
            .find(|id| within.chunks().binary_search(id).is_err())
        {
            bail!("a search within {percent}% of the folders returned chunk {id}, outside them");
        }
        scoped.push(ScopedTimes {
            percent,
            chunks: documents.chunks().len(),
            dense,
            hybrid,
        });
    }
    let memory = resident()?;
    let served = Served {
        open_seconds,
        indexed,
        pending,
        dense,
        hybrid,
        hybrid_embedded,
        bm25,
        bm25_every_chunk,
        scoped,
        rss_bytes: memory.now,
        peak_rss_bytes: memory.peak,
        file_rss_bytes: memory.file,
        file_huge_bytes: memory.file_huge,
        sqlite_heap_bytes: sqlite_heap_bytes(),
    };
    println!("{}", serde_json::to_string(&served)?);
    Ok(())
}

async fn rank(
    store: &Store,
    copy: &VectorCopy,
    q: &Query,
    mode: SearchMode,
    scope: Option<&DocumentSet>,
) -> Result<Vec<(i64, f32)>> {
    Ok(mode
        .rank(store, Some(copy), &q.text, &q.vector, K, scope)
        .await?
        .into_iter()
        .map(|(id, score)| (id, score as f32))
        .collect())
}

/// Milliseconds and ids of `search` for every query, after a warm-up;
/// fails unless each finds `K` chunks.
async fn timed<'q, F, Fut>(queries: &'q [Query], search: F) -> Result<Timed>
where
    F: Fn(&'q Query) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<(i64, f32)>>>,
{
    for q in queries.iter().take(WARMUP) {
        search(q).await?;
    }
    let mut timed = Timed {
        ms: Vec::with_capacity(queries.len()),
        ids: Vec::with_capacity(queries.len()),
    };
    for q in queries {
        let started = Instant::now();
        let hits = search(q).await?;
        timed.ms.push(started.elapsed().as_secs_f64() * 1000.0);
        if hits.len() != K {
            bail!(
                "a search found {} chunks, not {K}: {:?}",
                hits.len(),
                q.text
            );
        }
        timed.ids.push(hits.into_iter().map(|(id, _)| id).collect());
    }
    Ok(timed)
}
