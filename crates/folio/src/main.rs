//! The `folio` command line: a thin layer over `folio_engine::Library`. Human output
//! by default, one JSON document with `--json`, progress bars on a terminal.

use std::io::IsTerminal;
use std::path::PathBuf;

mod answers;
mod args;
mod bench;
mod chat;
mod compare;
mod eval;
mod graph;
mod jobs;
mod links;
mod models;
mod serve;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use folio_engine::eval::job::EvalJobs;
use folio_engine::events::{EngineEvent, JobPhase, JobProgress, Progress};
use folio_engine::path_text::shown;
use folio_engine::pipeline::PassSummary;
use folio_engine::retrieve::SearchMode;
use folio_engine::{Config, Library};

#[derive(Parser)]
#[command(
    name = "folio",
    version,
    about = "A local-first knowledge base over your folders"
)]
struct Cli {
    /// Where the index lives (default: the platform data directory).
    #[arg(long, global = true, env = "FOLIO_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// Files larger than this many bytes are recorded as errors, not read.
    #[arg(long, global = true, env = "FOLIO_MAX_FILE_SIZE")]
    max_file_size: Option<u64>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    #[command(flatten)]
    Index(IndexCommand),
    #[command(flatten)]
    Answer(AnswerCommand),
    /// iG²RAG's information-gain graph: build it, see how far it covers the library.
    #[command(subcommand)]
    Graph(graph::GraphCommand),
    /// The configured language model, embedding model and prompts, and whether each loads.
    Models(models::ModelsArgs),
    /// Benchmarks against same-run baselines; tables on stdout, JSON in bench/results/.
    Bench(bench::BenchArgs),
    /// Answer a dataset's questions with several methods and score them; a
    /// table on stdout, rows and summaries in --out.
    Eval(eval::EvalArgs),
}

/// Commands that work on the user's index.
#[derive(Subcommand)]
enum IndexCommand {
    /// Index folders or files and keep them watched.
    Add {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Queue the work for a running `folio watch` (or the app) and return at once.
        #[arg(long)]
        no_wait: bool,
    },
    /// Stop watching a folder and drop everything indexed from it.
    Remove { path: PathBuf },
    /// Read files again, each alone: ones set aside because Folio stopped
    /// while reading them, or ones that failed for a reason since fixed.
    Retry {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Documents, chunks, per-file errors and jobs.
    Status,
    /// Background jobs, newest first, and whether background work is
    /// paused; pause, resume or cancel it.
    Jobs {
        #[command(subcommand)]
        command: Option<jobs::JobsCommand>,
    },
    /// Keep watched folders indexed until interrupted (Ctrl-C).
    Watch,
    /// Serve the library to other apps on this machine: MCP for
    /// assistants, an HTTP API, and Folio's methods as OpenAI-compatible
    /// models; keeps folders indexed as `watch` does.
    Serve(serve::ServeArgs),
    /// Serve the library over stdin and stdout as an MCP server, for
    /// assistants that start it themselves (Claude Desktop's
    /// `mcpServers`). It serves the index as it is; `folio watch`, `folio
    /// serve` or the app keep it current.
    Mcp,
    /// Search indexed chunks.
    Search {
        query: String,
        #[arg(short, long, default_value_t = 10)]
        k: usize,
        #[arg(long, value_parser = args::choice::<SearchMode>(), default_value = "hybrid")]
        mode: SearchMode,
        #[command(flatten)]
        scope: args::ScopeArgs,
    },
    /// Collections: named sets of folders to scope questions to. Without
    /// a subcommand, lists them.
    Collections {
        #[command(subcommand)]
        command: Option<CollectionCommand>,
    },
    /// A note's links and backlinks (`[[wikilinks]]` and embeds, resolved
    /// as notes apps resolve them), with its aliases and tags.
    Links { path: PathBuf },
    /// The tags of the library's notes (front matter and inline `#tags`),
    /// with how many notes carry each: what `--tag` can name.
    Tags,
    /// Print a document's structure tree.
    Tree {
        path: PathBuf,
        /// Characters of each content node to show.
        #[arg(long, default_value_t = 70)]
        width: usize,
    },
}

#[derive(Subcommand)]
enum CollectionCommand {
    /// Save a collection of indexed folders and tags, replacing one of the
    /// same name. With both, a document must lie in one of the folders and
    /// carry one of the tags.
    Save {
        name: String,
        #[arg(required_unless_present = "tags")]
        folders: Vec<PathBuf>,
        /// Only notes with this tag, or one nested under it (repeatable).
        #[arg(long = "tag", value_name = "TAG")]
        tags: Vec<String>,
    },
    /// Delete a collection (its folders stay indexed).
    Delete { name: String },
}

/// Commands that answer questions and read their history.
#[derive(Subcommand)]
enum AnswerCommand {
    /// Answer a question from the library with a method.
    Ask(answers::AskArgs),
    /// Talk with the library: each line a question in one thread, with line
    /// editing and history; Ctrl-C stops an answer, Ctrl-D leaves.
    Chat(chat::ChatArgs),
    /// Answer one question with several methods and show the answers side
    /// by side, each with its sources, time and tokens.
    Compare(compare::CompareArgs),
    /// The answering methods and their options.
    Methods,
    /// Recent runs, newest first.
    Runs {
        #[arg(long, default_value_t = 20)]
        limit: i64,
    },
    /// A run's answer, citations, model calls and timings.
    Show { run: i64 },
    /// Conversations, most recently active first; with an id, that thread
    /// turn by turn.
    Threads {
        thread: Option<i64>,
        #[arg(long, default_value_t = 20)]
        limit: i64,
        /// Delete the thread and its turns (branches of it keep the turns
        /// they branched after); refused while one of its turns runs.
        #[arg(long, requires = "thread")]
        delete: bool,
    },
    /// Write a run, or with --thread a whole conversation, as markdown: the
    /// answers, their sources and how each was built.
    Export {
        #[arg(required_unless_present = "thread", conflicts_with = "thread")]
        run: Option<i64>,
        #[arg(long)]
        thread: Option<i64>,
        #[arg(short, long)]
        output: PathBuf,
    },
}

fn main() {
    folio_engine::allocator::limit_arenas();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    let outcome = runtime.block_on(run(cli));
    folio_engine::llm::quiesce(MODEL_EXIT_WAIT);
    if let Err(e) = outcome {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

/// Enough for a cancelled model request to reach its next token.
const MODEL_EXIT_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

pub(crate) fn print_json<T: Serialize>(value: &T) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

async fn run(cli: Cli) -> Result<()> {
    let config = Config::load(cli.data_dir.clone(), cli.max_file_size)
        .context("reading the configuration")?;
    let command = match cli.command {
        // Benchmarks make their own temporary libraries; the user's is never opened.
        Command::Bench(args) => return bench::run(args, config, cli.json).await,
        // An evaluation keeps its own index in its output folder; the
        // user's library holds only its job.
        Command::Eval(args) => return eval::run(args, config, cli.json).await,
        Command::Models(args) => return models::run(args, &config, cli.json).await,
        Command::Answer(AnswerCommand::Methods) => return answers::list_methods(cli.json),
        command => command,
    };
    let library = Library::open(config).await.context("opening the index")?;
    // A chat outlives a Ctrl-C: it stops the answer being written, not the
    // session, so the chat listens for it per answer.
    if let Command::Answer(AnswerCommand::Chat(args)) = command {
        return chat::run(&library, args).await;
    }
    let stop = library.stop_token().clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\nstopping; finished work is kept and the rest resumes next time");
            stop.cancel();
        }
    });
    let answer_cancel = library.stop_token();
    let command = match command {
        Command::Answer(command) => {
            return answer(&library, command, answer_cancel, cli.json).await
        }
        Command::Graph(command) => {
            return graph::run(&library, command, answer_cancel, cli.json).await
        }
        Command::Index(command) => command,
        Command::Bench(_) | Command::Models(_) | Command::Eval(_) => {
            unreachable!("handled before the library opens")
        }
    };
    match command {
        IndexCommand::Add { paths, no_wait } => add(&library, &paths, no_wait, cli.json).await,
        IndexCommand::Remove { path } => {
            library.remove(&path).await?;
            if cli.json {
                print_json(&serde_json::json!({ "removed": path }))
            } else {
                println!("removed {}", path.display());
                Ok(())
            }
        }
        IndexCommand::Retry { paths } => retry(&library, &paths, cli.json).await,
        IndexCommand::Status => status(&library, cli.json).await,
        IndexCommand::Jobs { command } => jobs::run(&library, command, cli.json).await,
        IndexCommand::Watch => watch(&library, cli.json).await,
        IndexCommand::Serve(args) => serve::run(library, args, cli.json).await,
        IndexCommand::Mcp => Ok(folio_server::serve_stdio(std::sync::Arc::new(library)).await?),
        IndexCommand::Collections { command } => collections(&library, command, cli.json).await,
        IndexCommand::Search {
            query,
            k,
            mode,
            scope,
        } => {
            let scope = scope.scope();
            let search = library.search(&query, k, mode, &scope);
            let hits = with_progress(library.subscribe(), !cli.json, search).await?;
            if cli.json {
                return print_json(&hits);
            }
            if hits.is_empty() {
                println!("no results");
            }
            for (i, h) in hits.iter().enumerate() {
                println!("{:>2}. {:.4}  {}", i + 1, h.score, shown(&h.path));
                if !h.heading_path.is_empty() {
                    println!("    {}", h.heading_path);
                }
                if let Some(ocr) = h.ocr {
                    println!("    ({ocr})");
                }
                println!("    {}\n", h.snippet);
            }
            Ok(())
        }
        IndexCommand::Links { path } => {
            let links = library.links(&path).await?;
            if cli.json {
                return print_json(&links);
            }
            print!("{}", links::render(&links));
            Ok(())
        }
        IndexCommand::Tags => {
            let tags = library.tags().await?;
            if cli.json {
                return print_json(&tags);
            }
            for t in &tags {
                println!("#{}  {}", t.tag, t.documents);
            }
            Ok(())
        }
        IndexCommand::Tree { path, width } => {
            let doc = library.tree(&path).await?;
            if cli.json {
                return print_json(&doc);
            }
            print!("{}", doc.tree.render(width));
            Ok(())
        }
    }
}

async fn answer(
    library: &Library,
    command: AnswerCommand,
    cancel: &CancellationToken,
    json: bool,
) -> Result<()> {
    match command {
        AnswerCommand::Ask(args) => answers::ask(library, args, cancel, json).await,
        AnswerCommand::Chat(_) => unreachable!("a chat runs without the Ctrl-C handler"),
        AnswerCommand::Compare(args) => compare::run(library, args, cancel, json).await,
        AnswerCommand::Methods => answers::list_methods(json),
        AnswerCommand::Runs { limit } => answers::list_runs(library, limit, json).await,
        AnswerCommand::Show { run } => answers::show(library, run, json).await,
        AnswerCommand::Threads {
            thread: Some(thread),
            delete: true,
            ..
        } => answers::delete_thread(library, thread, json).await,
        AnswerCommand::Threads { thread, limit, .. } => {
            answers::threads(library, thread, limit, json).await
        }
        AnswerCommand::Export {
            run,
            thread,
            output,
        } => {
            let what = match (run, thread) {
                (_, Some(thread)) => answers::Exported::Thread(thread),
                (Some(run), None) => answers::Exported::Run(run),
                (None, None) => unreachable!("clap requires a run or --thread"),
            };
            answers::export(library, what, &output, json).await
        }
    }
}

/// Draws job progress from the engine's events while `work` runs.
/// A bar for an ingestion job's files, drawn on stderr when `show` and
/// stderr is a terminal.
pub fn files_bar(show: bool) -> ProgressBar {
    let bar = if show && std::io::stderr().is_terminal() {
        ProgressBar::new(0)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:>10} [{bar:30}] {pos}/{len} {prefix} · {per_sec} · eta {eta}",
        )
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix("files");
    bar
}

/// Moves a bar to where `p` is.
pub fn draw_progress(bar: &ProgressBar, p: &Progress) {
    bar.set_length(p.total);
    bar.set_position(p.done);
}

pub fn draw_job(bar: &ProgressBar, p: &JobProgress) {
    draw_progress(bar, &p.progress);
    bar.set_message(match p.phase {
        JobPhase::Scanning => "scanning",
        JobPhase::Indexing => "indexing",
        JobPhase::Embedding => "embedding",
        JobPhase::Scoring => "scoring",
        JobPhase::Answering => "answering",
        JobPhase::Judging => "judging",
        JobPhase::Finished => "done",
    });
}

/// Runs `work` with the library's job progress drawn on a bar.
async fn with_progress<T, E>(
    mut events: tokio::sync::broadcast::Receiver<EngineEvent>,
    show: bool,
    work: impl std::future::Future<Output = std::result::Result<T, E>>,
) -> std::result::Result<T, E> {
    let bar = files_bar(show);
    let drawn = bar.clone();
    let listener = tokio::spawn(async move {
        while let Ok(event) = events.recv().await {
            match event {
                EngineEvent::JobProgress(p) => draw_job(&drawn, &p),
                EngineEvent::DocumentReading { path, progress } => {
                    let name = folio_engine::path_text::shown_name(&path);
                    drawn.set_message(format!(
                        "indexing · OCR of {name}: page {} of {}",
                        progress.done, progress.total
                    ));
                }
                EngineEvent::VectorsUpgrading { progress } => {
                    drawn.set_prefix("vectors");
                    drawn.set_message("converting the index's vectors to int8 (once)");
                    draw_progress(&drawn, &progress);
                }
                EngineEvent::VectorIndexBuilding { progress, .. } => {
                    drawn.set_prefix("vectors");
                    drawn.set_message("building the approximate vector index");
                    draw_progress(&drawn, &progress);
                }
                _ => {}
            }
        }
    });
    let result = work.await;
    listener.abort();
    bar.finish_and_clear();
    result
}

/// The files the index holds as errors, after a pass.
fn print_file_errors(status: &folio_engine::library::Status) {
    for e in &status.errors {
        println!("  error: {}: {}", shown(&e.path), e.error);
    }
}

fn print_summary(s: &PassSummary) {
    println!(
        "indexed {} · unchanged {} · failed {} · removed {}{} · chunks embedded {} (reused {}){}",
        s.indexed,
        s.unchanged,
        s.failed,
        s.removed,
        match s.set_aside {
            0 => String::new(),
            n => format!(" · set aside {n} (Folio stopped while reading them)"),
        },
        s.chunks_embedded,
        s.chunks_reused,
        if s.cancelled {
            " · interrupted, resumes on the next `folio add` or `folio watch`"
        } else {
            ""
        }
    );
}

async fn collections(
    library: &Library,
    command: Option<CollectionCommand>,
    json: bool,
) -> Result<()> {
    match command {
        None => {
            let collections = library.collections().list().await?;
            if json {
                return print_json(&collections);
            }
            if collections.is_empty() {
                println!("no collections yet; save one with `folio collections save NAME FOLDER… [--tag TAG]…`");
            }
            for c in collections {
                println!("{} · {} documents", c.name, c.documents);
                for folder in c.folders {
                    println!("  {folder}");
                }
                if !c.tags.is_empty() {
                    let tags: Vec<String> = c.tags.iter().map(|t| format!("#{t}")).collect();
                    println!("  tagged {}", tags.join(" or "));
                }
            }
            Ok(())
        }
        Some(CollectionCommand::Save {
            name,
            folders,
            tags,
        }) => {
            let saved = library.collections().save(&name, &folders, &tags).await?;
            if json {
                return print_json(&saved);
            }
            println!(
                "saved {} · {} folders · {} tags · {} documents",
                saved.name,
                saved.folders.len(),
                saved.tags.len(),
                saved.documents
            );
            Ok(())
        }
        Some(CollectionCommand::Delete { name }) => {
            library.collections().delete(&name).await?;
            if json {
                return print_json(&serde_json::json!({ "deleted": name }));
            }
            println!("deleted {name}");
            Ok(())
        }
    }
}

async fn add(library: &Library, paths: &[PathBuf], no_wait: bool, json: bool) -> Result<()> {
    let job = library.add(paths).await?;
    if no_wait {
        if json {
            return print_json(&serde_json::json!({ "job": job, "state": "queued" }));
        }
        println!("queued job {job}; `folio watch` (or the app) will index it");
        return Ok(());
    }
    let passes = with_progress(library.subscribe(), !json, library.jobs().run_pending()).await?;
    // Everything this run did: an interrupted job it resumed, and what a
    // crash before it left to set aside, as well as its own job.
    let summary = passes
        .iter()
        .fold(PassSummary::default(), |mut all, (_, s)| {
            all.add(*s);
            all
        });
    let status = library.status().await?;
    if json {
        return print_json(
            &serde_json::json!({ "job": job, "summary": summary, "counts": status.counts, "errors": status.errors }),
        );
    }
    print_summary(&summary);
    print_file_errors(&status);
    Ok(())
}

async fn retry(library: &Library, paths: &[PathBuf], json: bool) -> Result<()> {
    let summary = with_progress(library.subscribe(), !json, library.jobs().retry(paths)).await?;
    let status = library.status().await?;
    if json {
        return print_json(&serde_json::json!({ "summary": summary, "errors": status.errors }));
    }
    print_summary(&summary);
    print_file_errors(&status);
    Ok(())
}

async fn status(library: &Library, json: bool) -> Result<()> {
    let s = library.status().await?;
    if json {
        return print_json(&s);
    }
    println!("index: {}", s.data_dir);
    println!("folders:");
    for f in &s.folders {
        match f.missing {
            true => println!(
                "  {} (missing: its {} documents are kept until it is back; `folio remove` forgets them)",
                shown(&f.path),
                f.documents
            ),
            false => println!("  {}", shown(&f.path)),
        }
    }
    let c = s.counts;
    println!(
        "documents: {} indexed, {} with errors · nodes {} · chunks {} ({} embedded)",
        c.documents, c.errors, c.nodes, c.chunks, c.embedded
    );
    for d in s.documents.iter().filter(|d| d.note.is_some()) {
        println!(
            "  note: {}: {}",
            shown(&d.path),
            d.note.as_deref().unwrap_or_default()
        );
    }
    if !s.errors.is_empty() {
        println!("errors:");
        for e in &s.errors {
            println!("  {}: {}", shown(&e.path), e.error);
        }
    }
    println!("jobs:");
    for j in s.jobs.iter().take(5) {
        println!("  {}", jobs::job_line(j));
    }
    Ok(())
}

pub(crate) async fn watch(library: &Library, json: bool) -> Result<()> {
    if !json {
        eprintln!("watching; Ctrl-C to stop");
    }
    let shutdown = library.stop_token().cancelled();
    library
        .jobs()
        .run_background(
            shutdown,
            &|summary| {
                if json {
                    if let Ok(line) = serde_json::to_string(summary) {
                        println!("{line}");
                    }
                } else if *summary != PassSummary::default() {
                    print_summary(summary);
                }
            },
            &[&EvalJobs],
        )
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clap checks a command's flags only when it is parsed; this checks
    /// every subcommand at once (a method option named like a scope flag,
    /// say, would otherwise fail only when `folio ask` runs).
    #[test]
    fn every_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
