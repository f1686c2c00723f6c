//! `folio graph`: build (or bring up to date) and inspect iG²RAG's
//! information-gain graph.

use std::io::IsTerminal;

use anyhow::Result;
use clap::Subcommand;
use indicatif::{ProgressBar, ProgressStyle};
use tokio_util::sync::CancellationToken;

use folio_engine::choice::Choice;
use folio_engine::graph::{
    BuildProgress, GraphBuildOptions, GraphStatus, Rubric, DEFAULT_NEIGHBOURS,
};
use folio_engine::Library;

use crate::args::choice;
use crate::print_json;

#[derive(Subcommand)]
pub enum GraphCommand {
    /// Score every chunk not yet in the graph: its n nearest neighbours,
    /// graded by the language model. Resumes where an earlier build
    /// stopped; Ctrl-C stops after the chunk in flight.
    Build {
        /// How neighbours are graded: coarse (redundant / minor / significant
        /// / novel, the paper's default), fine (a score from 0.00 to 1.00) or
        /// binary (gain or no gain).
        #[arg(long, value_parser = choice::<Rubric>(), default_value = "coarse")]
        rubric: Rubric,
        /// Neighbours scored per chunk (1 to 20).
        #[arg(long, default_value_t = DEFAULT_NEIGHBOURS)]
        n: usize,
    },
    /// How much of the library each graph covers, and what it cost.
    Status,
}

pub async fn run(
    library: &Library,
    command: GraphCommand,
    stop: &CancellationToken,
    json: bool,
) -> Result<()> {
    match command {
        GraphCommand::Build { rubric, n } => build(library, rubric, n, stop, json).await,
        GraphCommand::Status => status(library, json).await,
    }
}

async fn build(
    library: &Library,
    rubric: Rubric,
    n: usize,
    stop: &CancellationToken,
    json: bool,
) -> Result<()> {
    let job = library
        .jobs()
        .queue_graph_build(GraphBuildOptions { rubric, n })
        .await?;
    let bar = scoring_bar(json);
    let draw = |p: &BuildProgress| draw_scoring(&bar, p);
    let outcome = library.jobs().run_graph(job, stop, &draw).await;
    bar.finish_and_clear();
    let Some(progress) = outcome? else {
        anyhow::bail!(
            "graph job {job} is held by another process or background work is paused; \
             `folio graph status` shows it"
        );
    };
    if json {
        return print_json(&serde_json::json!({ "job": job, "progress": progress }));
    }
    println!(
        "{} graph: scored {} of {} pending chunks · {} failed · {} edges · {} calls · {} prompt tokens ({} from cache) · {} completion tokens{}",
        rubric.as_str(),
        progress.progress.done,
        progress.progress.total,
        progress.progress.failed,
        progress.edges,
        progress.calls,
        progress.prompt_tokens,
        progress.cached_tokens,
        progress.completion_tokens,
        if progress.stopped {
            " · stopped; `folio graph build` resumes it"
        } else {
            ""
        }
    );
    Ok(())
}

/// The bar of a scoring pass on stderr; hidden for JSON output or when
/// stderr is not a terminal.
pub fn scoring_bar(json: bool) -> ProgressBar {
    let bar = if !json && std::io::stderr().is_terminal() {
        ProgressBar::new(0)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("scoring [{bar:30}] {pos}/{len} chunks · {msg}")
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

pub fn draw_scoring(bar: &ProgressBar, p: &BuildProgress) {
    crate::draw_progress(bar, &p.progress);
    bar.set_message(format!(
        "{} edges · {} failed · {} tokens{}",
        p.edges,
        p.progress.failed,
        p.prompt_tokens + p.completion_tokens,
        p.progress
            .eta_seconds
            .map(|e| format!(" · eta {e:.0}s"))
            .unwrap_or_default()
    ));
}

async fn status(library: &Library, json: bool) -> Result<()> {
    let s: GraphStatus = library.graph_status().await?;
    if json {
        return print_json(&s);
    }
    println!("chunks with a vector: {}", s.chunks);
    if s.rubrics.is_empty() {
        println!("no graph built yet; `folio graph build` builds one");
    }
    for r in &s.rubrics {
        let [redundant, minor, significant, novel] = r.edges_by_class;
        println!(
            "{}: {} scored · {} failed · {} pending · {} edges (redundant {redundant}, minor {minor}, significant {significant}, novel {novel})",
            r.rubric.as_str(),
            r.scored,
            r.failed,
            r.pending,
            r.edges
        );
        let c = r.cost;
        println!(
            "  cost: {} calls · {} prompt tokens ({} from cache) · {} completion tokens · {} per node · models: {}",
            c.calls,
            c.prompt_tokens,
            c.cached_tokens,
            c.completion_tokens,
            c.tokens_per_node()
                .map_or_else(|| "-".to_string(), |t| format!("{t:.0} tokens")),
            if r.models.is_empty() {
                "-".to_string()
            } else {
                r.models.join(", ")
            }
        );
        for (chunk, error) in r.recent_failures.iter().take(5) {
            println!("  failed chunk {chunk}: {error}");
        }
    }
    for j in &s.jobs {
        println!(
            "job #{} {} {}/{}{}",
            j.id,
            if j.interrupted {
                "interrupted".to_string()
            } else {
                format!("{:?}", j.state).to_lowercase()
            },
            j.done,
            j.total,
            j.error
                .as_deref()
                .map(|e| format!(" · {e}"))
                .unwrap_or_default()
        );
    }
    Ok(())
}
