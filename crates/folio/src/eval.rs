//! `folio eval`: the command-line face of `folio_engine::eval`, which owns the order
//! of the steps (checks that cost nothing first, the model before the long
//! answering loop) and the progress shown on stderr; stdout gets only the
//! summary table, or its JSON with `--json`.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use tokio_util::sync::CancellationToken;

use folio_engine::choice::Choice;
use folio_engine::embed::Embedder;
use folio_engine::eval::attribution;
use folio_engine::eval::diff::{self, RightBy, RunRef};
use folio_engine::eval::job as eval_job;
use folio_engine::eval::{graph as eval_graph, summary, EvalEvent, EvalRequest, MethodSpec, Row};
use folio_engine::store::RunStatus;
use folio_engine::{Config, Library};
use indicatif::ProgressBar;

use crate::args::{choice, SettingsArgs};
use crate::print_json;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct EvalArgs {
    #[command(subcommand)]
    command: Option<EvalCommand>,
    /// Questions, one JSON object a line: id, question, answers and
    /// supporting_titles or supporting_files.
    #[arg(long, value_name = "FILE.jsonl", required = true)]
    dataset: Option<PathBuf>,
    /// A JSONL corpus ({"id","title","text"} a line), written out as one
    /// markdown file per passage, or a folder indexed as it is.
    #[arg(long, value_name = "FILE.jsonl|DIR", required = true)]
    corpus: Option<PathBuf>,
    /// Method specs, comma-separated: `method` or
    /// `method:name=value[:name=value…]`, e.g. `pager:variant=parallel:slots-max=3`.
    #[arg(
        long,
        required = true,
        value_delimiter = ',',
        value_name = "SPEC,SPEC,…"
    )]
    methods: Vec<MethodSpec>,
    /// Only the first N questions.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Where the index, results.jsonl, eval.json, summary.json and
    /// summary.md go (the index is kept here, not in --data-dir, and reused
    /// by later runs). A run with the same settings reuses the answers
    /// already there, for any --limit and --methods, and asks only for
    /// those results.jsonl lacks.
    #[arg(long, value_name = "DIR", default_value = "eval-out")]
    out: PathBuf,
    /// Replace the answers already in --out instead of reusing them (the
    /// index is still reused).
    #[arg(long)]
    fresh: bool,
    /// For `ig2rag` specs, the information-gain graph is scored over the
    /// chunks this many nearest each question, not the whole corpus (one
    /// model call per chunk). The graph stays in the index: a later run
    /// with a larger reach scores only the chunks it adds.
    #[arg(long, value_name = "N", default_value_t = eval_graph::DEFAULT_REACH)]
    graph_reach: usize,
    /// Answers in flight at once. A server that answers requests in
    /// parallel gains from more; the embedded model answers one at a time.
    /// Wall times per question then include waiting for the others.
    #[arg(long, value_name = "C", default_value_t = 1)]
    concurrency: usize,
    /// Also ask an LLM judge whether each answer gives a gold answer: the
    /// `[judge]` model of folio.toml, or the answering model. Reported in
    /// its own column, marked as a model's opinion.
    #[arg(long)]
    judge: bool,
    /// Only notes of the corpus tagged TAG (in front matter or as `#TAG`),
    /// or with a tag nested under it, are retrieved from; repeat for
    /// several.
    #[arg(long = "tag", value_name = "TAG")]
    tags: Vec<String>,
    #[command(flatten)]
    settings: SettingsArgs,
}

#[derive(Subcommand)]
enum EvalCommand {
    /// The questions one evaluated method got right and another wrong, with
    /// both answers and the key parts of both traces.
    Diff(DiffArgs),
    /// How sources attributed to unmarked sentences would score against
    /// the gold evidence at each threshold, from an evaluation's stored
    /// answers (nothing is asked again).
    Attribution(AttributionArgs),
}

#[derive(Args)]
struct AttributionArgs {
    /// An evaluation's --out folder.
    #[arg(value_name = "DIR")]
    out: PathBuf,
    /// Thresholds to score, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0.3,0.35,0.4,0.45,0.5,0.55,0.6,0.65,0.7"
    )]
    thresholds: Vec<f32>,
}

#[derive(Args)]
struct DiffArgs {
    /// An evaluation's --out folder, with `#SPEC` when it evaluated more
    /// than one method: `eval-out#pager:variant=parallel`.
    #[arg(value_name = "RUN_A")]
    a: RunRef,
    #[arg(value_name = "RUN_B")]
    b: RunRef,
    /// What counts as right.
    #[arg(long, value_parser = choice::<RightBy>(), default_value = "cover-em")]
    by: RightBy,
}

pub async fn run(args: EvalArgs, config: Config, json: bool) -> Result<()> {
    match args.command {
        Some(EvalCommand::Diff(d)) => {
            let diff = diff::diff(&d.a, &d.b, d.by).await?;
            if json {
                print_json(&diff)?;
            } else {
                print!("{}", diff::markdown(&diff));
            }
            return Ok(());
        }
        Some(EvalCommand::Attribution(a)) => {
            let embedder = Embedder::load(&config.embedding_source())
                .context("loading the embedding model")?;
            let sweeps = attribution::sweep(&a.out, &a.thresholds, &embedder).await?;
            if json {
                print_json(&sweeps)?;
            } else {
                print!("{}", attribution::markdown(&sweeps));
            }
            return Ok(());
        }
        None => {}
    }
    let (Some(dataset), Some(corpus)) = (args.dataset, args.corpus) else {
        bail!("folio eval needs --dataset and --corpus");
    };
    let request = EvalRequest {
        dataset,
        corpus,
        methods: args.methods,
        limit: args.limit,
        out: args.out,
        fresh: args.fresh,
        graph_reach: args.graph_reach,
        concurrency: args.concurrency,
        judge: args.judge,
        settings: args.settings.into(),
        tags: args.tags,
    };
    let library = Library::open(config).await.context("opening the index")?;
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!(
                "\nstopping; answers so far are in results.jsonl, and the same \
                 command (or a running app) goes on from them"
            );
            stop.cancel();
        }
    });

    let out = request.out.clone();
    let display = Display::new(json);
    let summary =
        eval_job::run_in_foreground(&library, request, &cancel, &|e| display.show(e)).await;
    display.done();
    let summary = summary?;
    if json {
        print_json(&summary)?;
    } else {
        print!("{}", summary::markdown(&summary.methods));
        print!("{}", summary::last_turns_markdown(&summary.last_turns));
        if let Some(judge) = &summary.judge {
            print!("{}", summary::judge_note(judge));
        }
    }
    eprintln!("results in {}", out.display());
    if summary.interrupted {
        bail!(
            "interrupted before every question was answered; run the same command again to go on"
        );
    }
    Ok(())
}

/// What `folio eval` prints of an evaluation's events: notices and one line
/// per answer on stderr (with several in flight, a line started when a
/// question is asked would be interleaved with others), bars for indexing
/// and graph scoring.
struct Display {
    files: ProgressBar,
    scoring: ProgressBar,
}

impl Display {
    fn new(json: bool) -> Display {
        Display {
            files: crate::files_bar(!json),
            scoring: crate::graph::scoring_bar(json),
        }
    }

    fn show(&self, event: EvalEvent) {
        match event {
            EvalEvent::Notice { text } => eprintln!("{text}"),
            EvalEvent::Stage { .. } => {}
            EvalEvent::Indexing { progress } => crate::draw_job(&self.files, &progress),
            EvalEvent::Indexed { summary } => {
                self.files.finish_and_clear();
                if summary == Default::default() {
                    eprintln!("the index is up to date");
                } else {
                    eprintln!(
                        "indexed {} · unchanged {} · failed {} · removed {} · chunks embedded {} (reused {})",
                        summary.indexed,
                        summary.unchanged,
                        summary.failed,
                        summary.removed,
                        summary.chunks_embedded,
                        summary.chunks_reused
                    );
                }
            }
            EvalEvent::GraphStarted { rubric, chunks } => eprintln!(
                "{} graph: scoring what is pending among the {chunks} chunks nearest the questions",
                rubric.as_str()
            ),
            EvalEvent::GraphScoring { progress } => {
                crate::graph::draw_scoring(&self.scoring, &progress);
                if progress.progress.done >= progress.progress.total || progress.stopped {
                    self.scoring.finish_and_clear();
                }
            }
            EvalEvent::Answered { done, total, row } => show_answer(done, total, &row),
            EvalEvent::Judged { done, total } => eprintln!("judged {done} of {total}"),
        }
    }

    fn done(&self) {
        self.files.finish_and_clear();
        self.scoring.finish_and_clear();
    }
}

fn show_answer(done: usize, total: usize, row: &Row) {
    let seconds = row.wall_ms as f64 / 1000.0;
    eprint!("[{done}/{total}] {} {} … ", row.spec, row.question_id);
    match row.status {
        RunStatus::Done => eprintln!(
            "{seconds:.1} s · F1 {:.2}{}",
            row.scores.f1,
            if row.scores.cover_em {
                " · covered"
            } else {
                ""
            }
        ),
        status => eprintln!(
            "{} after {seconds:.1} s: {}",
            status.as_str(),
            row.error.as_deref().unwrap_or("no answer")
        ),
    }
}
