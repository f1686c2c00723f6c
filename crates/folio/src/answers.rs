//! `folio ask`, `methods`, `runs`, `threads`, `show` and `export`:
//! answering questions and reading the history of answers.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::Args;
use tokio_util::sync::CancellationToken;

use folio_engine::methods::runner::{AskRequest, RewriteMode};
use folio_engine::methods::{
    methods, place_in_document, Citation, CitedBy, EventSink, RunEvent, ANSWER_STEP,
};
use folio_engine::store::{LeftOutReason, Rewrite, RunRecord, RunStatus, Turn};
use folio_engine::Library;

use crate::args::{ScopeArgs, SettingsArgs};
use crate::print_json;

#[derive(Args)]
pub struct AskArgs {
    question: String,
    /// The answering method; `folio methods` lists them (default
    /// vanilla-rag, or whole-document with --document).
    #[arg(long)]
    method: Option<String>,
    /// Ask about this one document, all of it: its sections are
    /// summarised (and the summaries kept for the next question) and the
    /// answer is built from them, with the whole-document method.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["within", "collections", "formats", "since"])]
    document: Option<PathBuf>,
    #[command(flatten)]
    settings: SettingsArgs,
    /// A method option, as NAME=VALUE; repeat for several.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = name_value)]
    options: Vec<(String, String)>,
    #[command(flatten)]
    method_flags: MethodFlags,
    /// Ask a follow-up in this thread (`folio threads` lists them); without
    /// it the question starts a thread of its own.
    #[arg(long)]
    thread: Option<i64>,
    /// With --thread: answer in a new branch of the thread, which sees the
    /// same earlier turns and leaves the thread as it is.
    #[arg(long, requires = "thread")]
    fork: bool,
    /// With --thread: search for the follow-up as asked instead of
    /// rewriting it to stand alone first (the answer still sees the thread).
    #[arg(long, requires = "thread")]
    no_rewrite: bool,
    #[command(flatten)]
    scope: ScopeArgs,
}

/// Every method's options as flags of their own (`--variant parallel`,
/// `--slots-max 4`), built from the method registry so a new option needs
/// no CLI change. Whether the chosen method has the option is checked when
/// the request is resolved, with the method's own list in the error.
#[derive(Debug, Clone, Default)]
struct MethodFlags(Vec<(String, String)>);

/// Each option name once, with what it means for every method that has it.
fn method_option_flags() -> Vec<(&'static str, String)> {
    let mut flags: Vec<(&'static str, String)> = Vec::new();
    for method in methods() {
        let info = method.info();
        for option in info.options {
            let help = format!(
                "{}: {}{} (default {})",
                info.id,
                option.help,
                option.accepted(),
                option.default
            );
            match flags.iter_mut().find(|(name, _)| *name == option.name) {
                Some((_, text)) => {
                    text.push('\n');
                    text.push_str(&help);
                }
                None => flags.push((option.name, help)),
            }
        }
    }
    flags
}

impl clap::FromArgMatches for MethodFlags {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = MethodFlags::default();
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        for (name, _) in method_option_flags() {
            if let Some(value) = matches.get_one::<String>(name) {
                self.0.push((name.to_string(), value.clone()));
            }
        }
        Ok(())
    }
}

impl clap::Args for MethodFlags {
    fn augment_args(command: clap::Command) -> clap::Command {
        method_option_flags()
            .into_iter()
            .fold(command, |command, (name, help)| {
                command.arg(
                    clap::Arg::new(name)
                        .long(name)
                        .value_name("VALUE")
                        .help(help)
                        .help_heading("Method options"),
                )
            })
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

fn name_value(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .ok_or_else(|| format!("`{s}` is not NAME=VALUE"))
}

pub async fn ask(
    library: &Library,
    args: AskArgs,
    cancel: &CancellationToken,
    json: bool,
) -> Result<()> {
    let mut scope = args.scope.scope();
    let method = match (&args.method, &args.document) {
        (Some(method), _) => method.clone(),
        (None, Some(_)) => folio_engine::methods::whole_document::ID.to_string(),
        (None, None) => "vanilla-rag".to_string(),
    };
    if let Some(document) = &args.document {
        scope.paths = vec![Library::place(document)];
    }
    let request = AskRequest {
        question: args.question,
        method,
        k: args.settings.k,
        temperature: args.settings.temperature,
        max_tokens: args.settings.max_tokens,
        seed: args.settings.seed,
        options: args
            .options
            .into_iter()
            .chain(args.method_flags.0)
            .collect::<BTreeMap<_, _>>(),
        thread: args.thread,
        fork: args.fork,
        scope,
        rewrite: match args.no_rewrite {
            true => RewriteMode::Off,
            false => RewriteMode::On,
        },
    };
    let run = ask_streaming(library, &request, cancel, json).await?;
    if json {
        let calls = library.runs().calls(run.id).await?;
        print_json(&serde_json::json!({ "run": run, "calls": calls }))?;
    } else {
        print_cut_off_mark(&run);
        print_citations(&run, &BTreeSet::new());
        print_footer(&run);
    }
    warn_if_cut_off(&run);
    fail_unless_done(&run)
}

/// The mark under an answer that reached its token limit.
pub fn print_cut_off_mark(run: &RunRecord) {
    if let Some(cut) = &run.cut_off {
        println!("[cut off at {} tokens]", cut.max_tokens);
    }
}

/// A cut-off answer is an answer: the command succeeds, and says on
/// stderr what to change for a whole one.
pub fn warn_if_cut_off(run: &RunRecord) {
    if let Some(cut) = &run.cut_off {
        eprintln!(
            "warning: the answer reached max_tokens ({}) before it finished; what it wrote is kept. \
             Ask with --max-tokens {} for a longer one.",
            cut.max_tokens,
            cut.max_tokens.saturating_mul(2)
        );
    }
}

/// `run 12 · thread 4 · done · 812 tokens in, 64 out`, and the scope
/// when the question had one.
pub fn print_footer(run: &RunRecord) {
    println!(
        "\nrun {} · thread {} · {} · {} tokens in, {} out",
        run.id,
        run.thread_id,
        status_words(run),
        folio_engine::export::prompt_tokens(run.prompt_tokens, run.cached_tokens),
        run.completion_tokens
    );
    print_scope(run);
}

/// `done`, `done, cut off`, `failed`…
fn status_words(run: &RunRecord) -> String {
    match run.cut_off {
        Some(_) => format!("{}, cut off", run.status.as_str()),
        None => run.status.as_str().to_string(),
    }
}

/// `scope: in /notes; format pdf`, for a run asked within a scope.
fn print_scope(run: &RunRecord) {
    if !run.scope.is_everything() {
        println!("scope: {}", run.scope);
    }
}

/// Asks, streaming as the run goes (unless `quiet`): the answer step to
/// stdout, the steps before it (a rewrite, an outline, an agent's notes)
/// to stderr as progress, so stdout holds only the answer. The stored
/// run's answer is printed if no step streamed it.
pub async fn ask_streaming(
    library: &Library,
    request: &AskRequest,
    cancel: &CancellationToken,
    quiet: bool,
) -> Result<RunRecord> {
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    let printer = tokio::spawn(async move {
        let mut streamed_answer = false;
        while let Some(event) = receiver.recv().await {
            if quiet {
                continue;
            }
            match event {
                RunEvent::Retrieved { passages, .. } => eprintln!("retrieved {passages} passages"),
                RunEvent::Rewritten { rewrite } => eprintln!("{}", rewrite_line(&rewrite)),
                RunEvent::LlmStarted { step } if step != ANSWER_STEP => eprintln!("── {step} ──"),
                RunEvent::Token { step, text } if step == ANSWER_STEP => {
                    streamed_answer = true;
                    let mut stdout = std::io::stdout();
                    let _ = write!(stdout, "{text}");
                    let _ = stdout.flush();
                }
                RunEvent::Token { text, .. } => eprint!("{text}"),
                RunEvent::LlmFinished { step, .. } if step == ANSWER_STEP => println!(),
                RunEvent::LlmFinished { .. } => eprintln!(),
                _ => {}
            }
        }
        streamed_answer
    });
    let run = library.ask(request, &EventSink::new(sender), cancel).await;
    let streamed_answer = printer.await.unwrap_or(false);
    let run = run?;
    if !quiet && !streamed_answer {
        if let Some(answer) = &run.answer {
            println!("{answer}");
        }
    }
    Ok(run)
}

/// What became of a follow-up before retrieval, in one line.
fn rewrite_line(rewrite: &Rewrite) -> String {
    match rewrite {
        Rewrite::NotNeeded => "no earlier answer in the thread; asked as written".to_string(),
        Rewrite::Standalone { query } => format!("searching for: {query}"),
        Rewrite::Joined { query, because } => {
            format!("searching for: {query} ({})", because.explained())
        }
        Rewrite::FellBack { reason } => format!("asked as written ({reason})"),
        Rewrite::Off => "searching as asked (rewriting is off)".to_string(),
    }
}

/// How a follow-up was asked: its rewrite and which earlier turns it saw.
fn print_turn(turn: &Turn) {
    println!("follow-up: {}", rewrite_line(&turn.rewrite));
    let runs = |ids: Vec<i64>| {
        ids.iter()
            .map(|id| id.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !turn.history.is_empty() {
        println!("saw earlier turns: runs {}", runs(turn.history.clone()));
    }
    for (reason, why) in [
        (LeftOutReason::OverBudget, "past the history budget"),
        (LeftOutReason::NoAnswer, "no answer"),
    ] {
        let left: Vec<i64> = turn
            .left_out
            .iter()
            .filter(|l| l.reason == reason)
            .map(|l| l.run)
            .collect();
        if !left.is_empty() {
            println!("left out ({why}): runs {}", runs(left));
        }
    }
}

fn fail_unless_done(run: &RunRecord) -> Result<()> {
    match run.status {
        RunStatus::Done => Ok(()),
        _ => bail!(
            "run {} {}: {}",
            run.id,
            run.status.as_str(),
            run.error.as_deref().unwrap_or("no answer")
        ),
    }
}

/// The run's sources; those in `gone` are marked as no longer indexed.
pub fn print_citations(run: &RunRecord, gone: &BTreeSet<String>) {
    let citations: Vec<Citation> =
        serde_json::from_value(run.citations.clone()).unwrap_or_default();
    if citations.is_empty() {
        return;
    }
    println!("\nsources:");
    for c in citations {
        let heading = if c.heading_path.is_empty() {
            String::new()
        } else {
            format!(" › {}", c.heading_path)
        };
        let place = place_in_document(c.span_start, c.span_end, c.page, c.rows);
        let ocr = c.ocr.map(|ocr| format!("; {ocr}")).unwrap_or_default();
        let gone = if gone.contains(&c.path) {
            " — no longer in the library"
        } else {
            ""
        };
        println!(
            "  [{}] {}{heading} ({place}{ocr}){gone}",
            c.number,
            folio_engine::path_text::shown(&c.path)
        );
        if c.by == CitedBy::Attribution {
            println!(
                "      attributed: the answer did not mark it; it matches {}",
                quoted(&c.supports)
            );
        }
    }
}

/// The sentences an attributed source supports, quoted and cut short.
fn quoted(sentences: &[String]) -> String {
    const SHOWN: usize = 100;
    let quote = |s: &String| match s.char_indices().nth(SHOWN) {
        Some((at, _)) => format!("“{}…”", &s[..at]),
        None => format!("“{s}”"),
    };
    sentences.iter().map(quote).collect::<Vec<_>>().join(", ")
}

pub fn list_methods(json: bool) -> Result<()> {
    let infos: Vec<_> = methods().iter().map(|m| m.info()).collect();
    if json {
        return print_json(&infos);
    }
    for m in infos {
        println!("{:<12} {}", m.id, m.summary);
        println!("    defaults: {}", m.defaults);
        for o in m.options {
            println!(
                "    --{} …{}  {} (default {})",
                o.name,
                o.accepted(),
                o.help,
                o.default
            );
        }
    }
    Ok(())
}

pub async fn list_runs(library: &Library, limit: i64, json: bool) -> Result<()> {
    let runs = library.runs().list(None, limit).await?;
    if json {
        return print_json(&runs);
    }
    if runs.is_empty() {
        println!("no runs yet; ask with `folio ask \"…\"`");
    }
    for r in runs {
        println!(
            "{:>5}  {:<11} {:<11} {:>6.1}s  {}",
            r.id,
            r.method,
            r.status.as_str(),
            run_seconds(&r),
            preview(&r.question)
        );
    }
    Ok(())
}

/// How long the run took, by its own timings.
pub fn run_seconds(run: &RunRecord) -> f64 {
    run.timings
        .get("total_ms")
        .and_then(|v| v.as_u64())
        .unwrap_or(0) as f64
        / 1000.0
}

fn preview(text: &str) -> String {
    folio_engine::documents::structure_tree::preview(text, 70)
}

pub async fn show(library: &Library, id: i64, json: bool) -> Result<()> {
    let run = library.runs().get(id).await?;
    let calls = library.runs().calls(id).await?;
    if json {
        return print_json(&serde_json::json!({ "run": run, "calls": calls }));
    }
    println!(
        "run {} · thread {} · {} · {}",
        run.id,
        run.thread_id,
        run.method,
        status_words(&run)
    );
    println!("question: {}", run.question);
    print_scope(&run);
    if let Some(turn) = &run.turn {
        print_turn(turn);
    }
    println!();
    if let Some(answer) = &run.answer {
        println!("{answer}");
    }
    print_cut_off_mark(&run);
    if let Some(error) = &run.error {
        println!("\nerror: {error}");
    }
    let gone = library
        .runs()
        .gone_sources(std::slice::from_ref(&run))
        .await?;
    print_citations(&run, &gone);
    println!("\nmodel calls:");
    for c in &calls {
        let result = c
            .error
            .clone()
            .or_else(|| c.finish.clone())
            .unwrap_or_default();
        println!(
            "  {:<10} {:>6} in {:>6} out {:>7.1}s  {result}",
            c.step,
            folio_engine::export::prompt_tokens(c.prompt_tokens, c.cached_tokens),
            c.completion_tokens,
            c.wall_ms as f64 / 1000.0
        );
    }
    println!("timings: {}", run.timings);
    Ok(())
}

/// What `folio export` writes: one run, or a whole thread.
#[derive(Debug, Clone, Copy)]
pub enum Exported {
    Run(i64),
    Thread(i64),
}

pub async fn export(library: &Library, what: Exported, out: &Path, json: bool) -> Result<()> {
    let written = match what {
        Exported::Run(id) => library.runs().export(id, out).await?,
        Exported::Thread(id) => library.threads().export(id, out).await?,
    };
    if json {
        let (key, id) = match what {
            Exported::Run(id) => ("run", id),
            Exported::Thread(id) => ("thread", id),
        };
        return print_json(&serde_json::json!({ key: id, "written": written }));
    }
    println!("wrote {}", written.display());
    Ok(())
}

/// Recent threads, or with `id` one thread turn by turn.
pub async fn delete_thread(library: &Library, id: i64, json: bool) -> Result<()> {
    library.threads().delete(id).await?;
    if json {
        print_json(&serde_json::json!({ "deleted_thread": id }))
    } else {
        println!("deleted thread {id}");
        Ok(())
    }
}

pub async fn threads(library: &Library, id: Option<i64>, limit: i64, json: bool) -> Result<()> {
    let Some(id) = id else {
        let threads = library.threads().list(None, limit).await?;
        if json {
            return print_json(&threads);
        }
        if threads.is_empty() {
            println!("no threads yet; ask with `folio ask \"…\"` or talk with `folio chat`");
        }
        for t in threads {
            println!(
                "{:>5}  {:>3} turn{}  {}",
                t.id,
                t.turns,
                if t.turns == 1 { " " } else { "s" },
                preview(&t.title)
            );
        }
        return Ok(());
    };
    let thread = library.threads().get(id).await?;
    if json {
        return print_json(&thread);
    }
    let gone = library.runs().gone_sources(&thread.runs).await?;
    println!("thread {} · {}", thread.summary.id, thread.summary.title);
    for run in &thread.runs {
        let inherited = if run.thread_id == thread.summary.id {
            String::new()
        } else {
            format!(" · from thread {}", run.thread_id)
        };
        println!(
            "\n── run {} · {} · {}{inherited} ──",
            run.id,
            run.method,
            run.status.as_str()
        );
        println!("> {}", run.question);
        if !run.scope.is_everything() {
            println!("  (scope: {})", run.scope);
        }
        if let Some(query) = run.turn.as_ref().and_then(|t| t.rewrite.query()) {
            println!("  (searched for: {query})");
        }
        match (&run.answer, &run.error) {
            (Some(answer), _) => println!("{answer}"),
            (None, Some(error)) => println!("error: {error}"),
            (None, None) => println!("(no answer)"),
        }
        print_citations(run, &gone);
    }
    Ok(())
}
