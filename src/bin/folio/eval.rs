//! `folio eval`: the command-line face of `folio::eval`. It owns the order
//! of the steps (checks that cost nothing first, the model before the long
//! answering loop) and the progress shown on stderr; stdout gets only the
//! summary table, or its JSON with `--json`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use anyhow::{bail, Context, Result};
use clap::Args;
use tokio_util::sync::CancellationToken;

use folio::eval::{
    answer_all, corpus, dataset, graph as eval_graph, manifest, spec, summary, GraphScope,
    Manifest, MethodSpec, OutDir, PassageTitles, Progress, Question, Remaining, Summary,
};
use folio::graph::{GraphBuildOptions, Rubric};
use folio::ingest::pipeline::PassSummary;
use folio::methods::find;
use folio::methods::runner::AskSettings;
use folio::store::RunStatus;
use folio::{Config, Library};

use crate::{print_json, with_progress};

#[derive(Args)]
pub struct EvalArgs {
    /// Questions, one JSON object a line: id, question, answers and
    /// supporting_titles or supporting_files.
    #[arg(long, value_name = "FILE.jsonl")]
    dataset: PathBuf,
    /// A JSONL corpus ({"id","title","text"} a line), written out as one
    /// markdown file per passage, or a folder indexed as it is.
    #[arg(long, value_name = "FILE.jsonl|DIR")]
    corpus: PathBuf,
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
    /// by later runs). A run with the same settings goes on where an earlier
    /// one stopped, answering only what results.jsonl lacks.
    #[arg(long, value_name = "DIR", default_value = "eval-out")]
    out: PathBuf,
    /// Replace the answers already in --out instead of going on from them
    /// (the index is still reused).
    #[arg(long)]
    fresh: bool,
    /// For `ig2rag` specs, the information-gain graph is scored over the
    /// chunks this many nearest each question, not the whole corpus (one
    /// model call per chunk). The graph stays in the index: a later run
    /// with a larger reach scores only the chunks it adds.
    #[arg(long, value_name = "N", default_value_t = eval_graph::DEFAULT_REACH)]
    graph_reach: usize,
    #[command(flatten)]
    settings: AskSettings,
}

pub async fn run(args: EvalArgs, mut config: Config, json: bool) -> Result<()> {
    let settings = args.settings;
    let resolved = settings.resolve(&config.llm);
    spec::check_all(
        &args.methods,
        resolved.k,
        resolved.temperature,
        resolved.max_tokens,
    )?;
    if args.graph_reach == 0 {
        bail!("--graph-reach must be at least 1: ig2rag's graph is scored over that many chunks nearest each question");
    }
    let questions = dataset::read(&args.dataset, args.limit)?;
    let manifest = Manifest::new(
        &args.dataset,
        &args.corpus,
        &questions,
        &args.methods,
        resolved,
        &config,
    )?;
    let out = OutDir::create(&args.out)?;
    let opened = manifest::open(&out, &manifest, args.fresh)?;
    if let Some(line) = opened.torn_line {
        eprintln!(
            "warning: line {line} of results.jsonl was cut off mid-write (the run was killed); \
             dropped, that answer is asked again"
        );
    }
    let remaining = Remaining::new(&questions, &args.methods, &opened.rows);
    if remaining.done() > 0 {
        eprintln!(
            "resuming: {} of {} answers already in results.jsonl",
            remaining.done(),
            remaining.total
        );
    }
    let prepared = corpus::prepare(&args.corpus, &out.passages())?;
    if let Some(w) = &prepared.written {
        eprintln!(
            "corpus: {} passages in {} ({} written, {} unchanged, {} removed)",
            w.passages,
            prepared.folder.display(),
            w.written,
            w.unchanged,
            w.removed
        );
    }

    config.data_dir = out.index();
    let library = Library::open(config)
        .await
        .context("opening the evaluation's index")?;
    let cancel = CancellationToken::new();
    let ingest_cancel = library.cancel_flag();
    let stop = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!(
                "\nstopping; answers so far are in results.jsonl, \
                 and the same command goes on from them"
            );
            ingest_cancel.store(true, Ordering::Relaxed);
            stop.cancel();
        }
    });

    eprintln!(
        "indexing {} into {}",
        prepared.folder.display(),
        out.index().display()
    );
    let ingest = with_progress(&library, true, corpus::ingest(&library, &prepared.folder)).await?;
    if ingest == PassSummary::default() {
        eprintln!("the index is up to date");
    } else {
        eprintln!(
            "indexed {} · unchanged {} · failed {} · removed {} · chunks embedded {} (reused {})",
            ingest.indexed,
            ingest.unchanged,
            ingest.failed,
            ingest.removed,
            ingest.chunks_embedded,
            ingest.chunks_reused
        );
    }
    if ingest.cancelled {
        bail!("interrupted while indexing; run the same command again to resume");
    }

    let model = library
        .llm()
        .await
        .context("loading the language model")?
        .info();
    let retrieves = args
        .methods
        .iter()
        .any(|s| find(&s.method).is_ok_and(|m| m.info().retrieves));
    if retrieves {
        library.warm_vectors().await?;
    }
    let mut graphs = Vec::new();
    for rubric in eval_graph::rubrics_walked(&args.methods) {
        let scope = build_graph(
            &library,
            &questions,
            rubric,
            args.graph_reach,
            &cancel,
            json,
        )
        .await?;
        eprint!("{}", summary::graph_note(&scope));
        graphs.push(scope);
    }
    if cancel.is_cancelled() {
        bail!("interrupted while scoring the graph; run the same command again to resume");
    }

    let mut results = opened.file;
    let answered = answer_all(
        &library,
        &remaining,
        settings,
        &cancel,
        &mut results,
        show_progress,
    )
    .await?;
    let mut rows = opened.rows;
    rows.extend(answered.rows);

    let no_titles = PassageTitles::default();
    let titles = prepared.written.as_ref().map_or(&no_titles, |w| &w.titles);
    let by_id: HashMap<&str, &Question> = questions.iter().map(|q| (q.id.as_str(), q)).collect();
    let recall = |row: &folio::eval::Row| {
        by_id
            .get(row.question_id.as_str())
            .and_then(|q| q.supporting.recall(&row.sources, titles))
    };
    let methods = summary::summarize(&manifest.specs, &rows, &recall);
    let summary = Summary {
        dataset: args.dataset.display().to_string(),
        corpus: args.corpus.display().to_string(),
        questions: questions.len(),
        settings: resolved,
        model,
        corpus_files: prepared.written,
        ingest,
        interrupted: answered.interrupted,
        graphs,
        methods,
    };
    summary::write(&summary, &out.summary_json(), &out.summary_md())?;
    if json {
        print_json(&summary)?;
    } else {
        print!("{}", summary::markdown(&summary.methods));
    }
    eprintln!("results in {}", out.root().display());
    if answered.interrupted {
        bail!(
            "interrupted after {} of {} answers; run the same command again to go on",
            rows.len(),
            remaining.total
        );
    }
    Ok(())
}

/// Scores the chunks the questions reach into `rubric`'s graph, showing
/// progress; Ctrl-C stops after the chunk in flight, keeping what was scored.
async fn build_graph(
    library: &Library,
    questions: &[Question],
    rubric: Rubric,
    reach: usize,
    cancel: &CancellationToken,
    json: bool,
) -> Result<GraphScope> {
    let scope = eval_graph::reached_chunks(library, questions, reach).await?;
    eprintln!(
        "{} graph: scoring what is pending among the {} chunks nearest the questions",
        rubric.as_str(),
        scope.len()
    );
    let bar = crate::graph::scoring_bar(json);
    let options = GraphBuildOptions {
        rubric,
        ..GraphBuildOptions::default()
    };
    let this_run = library
        .build_graph_within(options, &scope, cancel, &|p| {
            crate::graph::draw_scoring(&bar, p)
        })
        .await
        .context("scoring the information-gain graph")?;
    bar.finish_and_clear();
    let status = library
        .graph_status()
        .await?
        .rubrics
        .into_iter()
        .find(|r| r.rubric == rubric)
        .context("the graph has no scored node")?;
    Ok(GraphScope {
        reach,
        chunks: scope.len(),
        status,
        this_run,
    })
}

fn show_progress(progress: Progress<'_>) {
    match progress {
        Progress::Asking {
            step,
            total,
            question,
            spec,
        } => eprint!("[{step}/{total}] {spec} {} … ", question.id),
        Progress::Answered { row, .. } => {
            let seconds = row.wall_ms as f64 / 1000.0;
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
    }
}
