//! Benchmark `graph`: what scoring iG²RAG's information-gain graph costs per
//! node with the configured model, with the prompt's shared prefix (the
//! instructions) kept in the model's cache, against the same scoring
//! computed from scratch. A fresh library indexes the first passages of the
//! HotpotQA corpus; alternating blocks of its chunks are scored without and
//! with prefix reuse, so both see the same kind of passages and the same
//! machine. Batching is measured by the calls per node: one prompt grades
//! all n neighbours, where one prompt per pair would take n calls.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::report::{Report, Row, Target};
use super::{Context, TempDir};
use folio_engine::config::Config;
use folio_engine::eval::corpus::write_passages;
use folio_engine::graph::{GraphBuild, GraphBuildOptions};
use folio_engine::library::Library;
use folio_engine::retrieve::ExactVectors;

/// The paper's spend per chunk (§4, build cost), the target to stay under.
const PAPER_TOKENS_PER_NODE: f64 = 3_100.0;

/// Nodes scored in one setting, summed.
#[derive(Default)]
struct Tally {
    nodes: u64,
    failed: u64,
    calls: u64,
    prompt_tokens: u64,
    cached_tokens: u64,
    completion_tokens: u64,
    seconds: f64,
}

impl Tally {
    fn per_node(&self, value: f64) -> f64 {
        value / self.nodes.max(1) as f64
    }

    fn computed_prompt_tokens(&self) -> f64 {
        self.per_node((self.prompt_tokens - self.cached_tokens) as f64)
    }

    fn tokens(&self) -> f64 {
        self.per_node((self.prompt_tokens + self.completion_tokens) as f64)
    }
}

pub(crate) async fn run(ctx: &Context) -> Result<Report> {
    let (passages, block, blocks) = if ctx.quick { (40, 3, 2) } else { (200, 10, 4) };
    let dir = TempDir::new("graph")?;
    let corpus = dir.path().join("corpus");
    write_passages(
        &ctx.eval_dir.join("hotpotqa/corpus.jsonl"),
        &corpus,
        Some(passages),
    )?;
    let config = Config {
        data_dir: dir.path().join("data"),
        ..ctx.config.clone()
    };
    let library = Library::open(config).await?;
    eprintln!("graph: indexing the first {passages} HotpotQA passages");
    let job = library.add(&[corpus]).await?;
    library.jobs().run(job).await?;
    let store = library.store();
    let dim = library.retrieval().model().await?.1.dim;
    let vectors = ExactVectors::load(store, dim).await?;
    let llm = library.llm().await?;
    let prompts = library.prompts().await?;
    let options = GraphBuildOptions::default();
    let cancel = CancellationToken::new();
    let score = |scope: HashSet<i64>, reuse_prefix: bool| {
        let llm = llm.clone();
        let (prompts, vectors, cancel) = (&prompts, &vectors, &cancel);
        async move {
            GraphBuild {
                store,
                llm: llm.as_ref(),
                prompts,
                vectors,
                options,
                job: None,
                scope: Some(&scope),
                timeout: Duration::from_secs(ctx.config.llm.timeout_secs),
                cancel,
                reuse_prefix,
            }
            .run(&|_| {})
            .await
        }
    };

    let ids = store.embedded_chunk_ids().await?;
    // The first node loads the model and is not counted.
    score(ids.iter().take(1).copied().collect(), false).await?;
    let mut tallies = [Tally::default(), Tally::default()];
    for (i, chunk_block) in ids[1..].chunks(block).take(blocks).enumerate() {
        let reuse = i % 2 == 1;
        eprintln!(
            "graph: block {} of {blocks}, {} chunks, prefix reuse {}",
            i + 1,
            chunk_block.len(),
            if reuse { "on" } else { "off" }
        );
        let started = Instant::now();
        let p = score(chunk_block.iter().copied().collect(), reuse).await?;
        let t = &mut tallies[usize::from(reuse)];
        t.seconds += started.elapsed().as_secs_f64();
        t.nodes += p.progress.done;
        t.failed += p.progress.failed;
        t.calls += p.calls;
        t.prompt_tokens += p.prompt_tokens;
        t.cached_tokens += p.cached_tokens;
        t.completion_tokens += p.completion_tokens;
    }
    let [scratch, reused] = &tallies;

    let rows = vec![
        Row::new("seconds per node", "s", reused.per_node(reused.seconds))
            .baseline(scratch.per_node(scratch.seconds))
            .target(Target::RatioAtMost(1.0)),
        Row::new(
            "prompt tokens computed per node",
            "tokens",
            reused.computed_prompt_tokens(),
        )
        .baseline(scratch.computed_prompt_tokens())
        .target(Target::RatioAtMost(1.0)),
        Row::new(
            "tokens per node (prompt + completion)",
            "tokens",
            reused.tokens(),
        )
        .target(Target::AtMost(PAPER_TOKENS_PER_NODE)),
        Row::new(
            "calls per node",
            "calls",
            reused.per_node(reused.calls as f64),
        )
        .target(Target::AtMost(options.n as f64)),
        Row::new(
            "failed nodes",
            "%",
            100.0 * (reused.failed + scratch.failed) as f64
                / (reused.nodes + scratch.nodes).max(1) as f64,
        ),
    ];
    let model = llm.info().model;
    Ok(Report {
        name: "graph",
        title: "Information-gain graph build cost per node, coarse rubric".into(),
        baseline: "the same scoring without prefix reuse, on the neighbouring blocks of chunks"
            .into(),
        rows,
        details: json!({
            "model": model,
            "passages_indexed": passages,
            "chunks": ids.len(),
            "neighbours_per_node": options.n,
            "nodes_with_reuse": reused.nodes,
            "nodes_without_reuse": scratch.nodes,
            "block": block,
            "prompt_tokens_per_node": reused.per_node(reused.prompt_tokens as f64),
            "cached_tokens_per_node": reused.per_node(reused.cached_tokens as f64),
            "completion_tokens_per_node": reused.per_node(reused.completion_tokens as f64),
        }),
        notes: vec![
            format!(
                "one call grades all {} neighbours of a node; one prompt per pair would take {} calls",
                options.n, options.n
            ),
            "tokens per node count the prompt in full, cached or not; the target is the paper's ~3,100".into(),
        ],
    })
}
