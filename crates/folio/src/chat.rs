//! `folio chat`: a conversation in the terminal. Each line asks a question
//! in the current thread, so a follow-up can lean on the turns before it;
//! lines starting with `/` are commands (switch method, start or resume a
//! thread, export). Line editing and history come from rustyline, the
//! history kept in the data directory. Ctrl-C while an answer streams stops
//! that answer (it is stored as cancelled) and returns to the prompt; at the
//! prompt it clears the line; Ctrl-D or `/quit` leaves.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::Editor;

use folio_engine::documents::loaders::Format;
use folio_engine::methods::runner::AskRequest;
use folio_engine::store::{Day, RunStatus, Scope};
use folio_engine::Library;

use crate::answers::{ask_streaming, print_citations, print_cut_off_mark, print_footer};
use crate::args::{ScopeArgs, SettingsArgs};

#[derive(Args)]
pub struct ChatArgs {
    /// The method to start with; `/method NAME` switches.
    #[arg(long, default_value = "vanilla-rag")]
    method: String,
    /// Go on with this thread instead of starting a new one.
    #[arg(long)]
    thread: Option<i64>,
    #[command(flatten)]
    settings: SettingsArgs,
    #[command(flatten)]
    scope: ScopeArgs,
}

/// What one line asks for.
#[derive(Debug, Clone, PartialEq)]
enum Line {
    Ask(String),
    Method(String),
    New,
    Thread(i64),
    Threads,
    Export(PathBuf),
    Scope(ScopeEdit),
    Help,
    Quit,
    Blank,
    /// A command that does not parse, with what to say.
    Bad(String),
}

/// A change to the session's scope.
#[derive(Debug, Clone, PartialEq)]
enum ScopeEdit {
    Show,
    Clear,
    In(PathBuf),
    Collection(String),
    Format(Format),
    Since(Day),
    Tag(String),
    /// Does not parse, with what to say.
    Bad(String),
}

const SCOPE_USAGE: &str =
    "/scope takes: in PATH, collection NAME, format FORMAT, since YYYY-MM-DD, tag TAG, or clear";

const HELP: &str = "\
  a line without /   ask it in this thread
  /method NAME       answer the next questions with NAME (folio methods lists them)
  /new               start a new thread
  /thread N          go on with thread N
  /threads           recent threads
  /export FILE       write this thread as markdown to FILE
  /scope             what the questions draw from; /scope in PATH,
                     /scope collection NAME, /scope format pdf,
                     /scope since 2026-01-31, /scope tag garden/fruit
                     narrow it, /scope clear widens it
  /help              this list
  /quit              leave (or Ctrl-D)
  Ctrl-C stops an answer while it is written; at the prompt it clears the line.";

fn parse(line: &str) -> Line {
    let line = line.trim();
    let Some(command) = line.strip_prefix('/') else {
        return if line.is_empty() {
            Line::Blank
        } else {
            Line::Ask(line.to_string())
        };
    };
    let (name, rest) = command
        .split_once(char::is_whitespace)
        .map_or((command, ""), |(n, r)| (n, r.trim()));
    match (name, rest) {
        ("method", "") => Line::Bad("/method needs a method name".into()),
        ("method", method) => Line::Method(method.to_string()),
        ("new", "") => Line::New,
        ("thread", n) => match n.parse() {
            Ok(n) => Line::Thread(n),
            Err(_) => Line::Bad(format!("/thread needs a thread number, not `{n}`")),
        },
        ("threads", "") => Line::Threads,
        ("export", "") => Line::Bad("/export needs a file name, such as /export chat.md".into()),
        ("export", file) => Line::Export(PathBuf::from(file)),
        ("scope", rest) => Line::Scope(parse_scope(rest)),
        ("help", _) => Line::Help,
        ("quit" | "exit", "") => Line::Quit,
        _ => Line::Bad(format!("unknown command /{command}; /help lists them")),
    }
}

fn parse_scope(rest: &str) -> ScopeEdit {
    let (what, value) = rest
        .split_once(char::is_whitespace)
        .map_or((rest, ""), |(w, v)| (w, v.trim()));
    match (what, value) {
        ("", "") => ScopeEdit::Show,
        ("clear", "") => ScopeEdit::Clear,
        ("in", path) if !path.is_empty() => ScopeEdit::In(PathBuf::from(path)),
        ("collection", name) if !name.is_empty() => ScopeEdit::Collection(name.to_string()),
        ("tag", tag) if !tag.is_empty() => ScopeEdit::Tag(tag.to_string()),
        ("format", name) if !name.is_empty() => match Format::named(name) {
            Ok(format) => ScopeEdit::Format(format),
            Err(e) => ScopeEdit::Bad(e.to_string()),
        },
        ("since", day) if !day.is_empty() => match day.parse() {
            Ok(day) => ScopeEdit::Since(day),
            Err(e) => ScopeEdit::Bad(format!("{e}")),
        },
        _ => ScopeEdit::Bad(SCOPE_USAGE.into()),
    }
}

/// The conversation's place: which thread, which method, which part of
/// the library.
struct Session {
    method: String,
    thread: Option<i64>,
    settings: SettingsArgs,
    scope: Scope,
}

impl Session {
    fn prompt(&self) -> String {
        let scoped = if self.scope.is_everything() {
            ""
        } else {
            " · scoped"
        };
        match self.thread {
            Some(thread) => format!("[{} · thread {thread}{scoped}] › ", self.method),
            None => format!("[{} · new thread{scoped}] › ", self.method),
        }
    }
}

pub async fn run(library: &Library, args: ChatArgs) -> Result<()> {
    folio_engine::methods::find(&args.method)?;
    if let Some(thread) = args.thread {
        library.threads().get(thread).await?;
    }
    let scope = args.scope.scope();
    library.scope_size(&scope).await?;
    let mut session = Session {
        method: args.method,
        thread: args.thread,
        settings: args.settings,
        scope,
    };
    let mut editor: Editor<(), DefaultHistory> = Editor::new()?;
    let history = library.config().data_dir.join("chat-history");
    // A first session has no history yet; anything else unreadable is
    // worth a word, not an exit.
    if let Err(e) = editor.load_history(&history) {
        if !matches!(&e, ReadlineError::Io(io) if io.kind() == std::io::ErrorKind::NotFound) {
            eprintln!("(chat history not loaded: {e})");
        }
    }
    println!("folio chat — /help lists commands, Ctrl-D leaves");
    loop {
        let prompt = session.prompt();
        let line = match tokio::task::block_in_place(|| editor.readline(&prompt)) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        };
        let parsed = parse(&line);
        if parsed != Line::Blank {
            let _ = editor.add_history_entry(line.as_str());
            if let Err(e) = editor.save_history(&history) {
                eprintln!("(chat history not saved: {e})");
            }
        }
        if parsed == Line::Quit {
            break;
        }
        if let Err(e) = act(library, &mut session, parsed).await {
            eprintln!("error: {e:#}");
        }
    }
    Ok(())
}

async fn act(library: &Library, session: &mut Session, line: Line) -> Result<()> {
    match line {
        Line::Ask(question) => ask(library, session, question).await?,
        Line::Method(method) => {
            folio_engine::methods::find(&method)?;
            println!("answering with {method}");
            session.method = method;
        }
        Line::New => {
            session.thread = None;
            println!("the next question starts a new thread");
        }
        Line::Thread(id) => {
            let thread = library.threads().get(id).await?;
            println!(
                "going on with thread {id}: {} ({} turns)",
                thread.summary.title, thread.summary.turns
            );
            session.thread = Some(id);
        }
        Line::Threads => crate::answers::threads(library, None, 10, false).await?,
        Line::Export(file) => match session.thread {
            Some(thread) => {
                let written = library.threads().export(thread, &file).await?;
                println!("wrote {}", written.display());
            }
            None => println!("nothing to export yet: ask a question first"),
        },
        Line::Scope(edit) => change_scope(library, session, edit).await?,
        Line::Help => println!("{HELP}"),
        Line::Bad(message) => println!("{message}"),
        Line::Blank | Line::Quit => {}
    }
    Ok(())
}

/// Applies `edit` to the session's scope if the result can be used, and
/// says what the questions now draw from.
async fn change_scope(library: &Library, session: &mut Session, edit: ScopeEdit) -> Result<()> {
    let mut scope = session.scope.clone();
    match edit {
        ScopeEdit::Show => {}
        ScopeEdit::Clear => scope = Scope::default(),
        ScopeEdit::In(path) => scope.paths.push(Library::place(&path)),
        ScopeEdit::Collection(name) => scope.collections.push(name),
        ScopeEdit::Format(format) => scope.formats.push(format),
        ScopeEdit::Since(day) => scope.since = Some(day),
        ScopeEdit::Tag(tag) => scope.tags.push(tag),
        ScopeEdit::Bad(message) => {
            println!("{message}");
            return Ok(());
        }
    }
    let size = library.scope_size(&scope).await?;
    session.scope = scope;
    match size {
        None => println!("scope: the whole library"),
        Some(n) => println!(
            "scope: {} ({n} document{})",
            session.scope,
            if n == 1 { "" } else { "s" }
        ),
    }
    Ok(())
}

/// Asks in the session's thread. Ctrl-C while it runs stops this answer
/// only: the session's own token is a child of the library's.
async fn ask(library: &Library, session: &mut Session, question: String) -> Result<()> {
    let mut request = AskRequest::new(question, session.method.clone());
    request.thread = session.thread;
    request.k = session.settings.k;
    request.temperature = session.settings.temperature;
    request.max_tokens = session.settings.max_tokens;
    request.seed = session.settings.seed;
    request.scope = session.scope.clone();
    let cancel = library.stop_token().child_token();
    let stopper = tokio::spawn({
        let cancel = cancel.clone();
        async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        }
    });
    let run = ask_streaming(library, &request, &cancel, false).await;
    stopper.abort();
    let run = run?;
    session.thread = Some(run.thread_id);
    match run.status {
        RunStatus::Cancelled => println!("\n(stopped; the thread goes on from the turn before)"),
        RunStatus::Done => {
            print_cut_off_mark(&run);
            print_citations(&run, &Default::default())
        }
        _ => println!(
            "\n(no answer: {})",
            run.error.as_deref().unwrap_or("the run did not finish")
        ),
    }
    print_footer(&run);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_questions_unless_they_are_commands() {
        assert_eq!(parse("  Why? "), Line::Ask("Why?".into()));
        assert_eq!(parse("   "), Line::Blank);
        assert_eq!(parse("/method pager"), Line::Method("pager".into()));
        assert_eq!(parse("/thread 12"), Line::Thread(12));
        assert_eq!(parse("/new"), Line::New);
        assert_eq!(parse("/threads"), Line::Threads);
        assert_eq!(
            parse("/export my chat.md"),
            Line::Export("my chat.md".into())
        );
        assert_eq!(parse("/quit"), Line::Quit);
        assert!(matches!(parse("/thread twelve"), Line::Bad(m) if m.contains("twelve")));
        assert!(matches!(parse("/method"), Line::Bad(_)));
        assert!(matches!(parse("/export"), Line::Bad(_)));
        assert!(matches!(parse("/frobnicate"), Line::Bad(m) if m.contains("/help")));
        assert_eq!(parse("/scope"), Line::Scope(ScopeEdit::Show));
        assert_eq!(parse("/scope clear"), Line::Scope(ScopeEdit::Clear));
        assert_eq!(
            parse("/scope in my notes"),
            Line::Scope(ScopeEdit::In("my notes".into()))
        );
        assert_eq!(
            parse("/scope format PDF"),
            Line::Scope(ScopeEdit::Format(Format::Pdf))
        );
        assert_eq!(
            parse("/scope format md"),
            Line::Scope(ScopeEdit::Format(Format::Markdown))
        );
        assert_eq!(
            parse("/scope since 2026-01-31"),
            Line::Scope(ScopeEdit::Since("2026-01-31".parse().unwrap()))
        );
        assert_eq!(
            parse("/scope tag #garden/fruit"),
            Line::Scope(ScopeEdit::Tag("#garden/fruit".into()))
        );
        assert!(matches!(parse("/scope tag"), Line::Scope(ScopeEdit::Bad(m)) if m == SCOPE_USAGE));
        assert!(
            matches!(parse("/scope since monday"), Line::Scope(ScopeEdit::Bad(m)) if m.contains("YYYY-MM-DD"))
        );
        assert!(
            matches!(parse("/scope format zip"), Line::Scope(ScopeEdit::Bad(m)) if m.contains("pdf"))
        );
        assert!(matches!(parse("/scope in"), Line::Scope(ScopeEdit::Bad(m)) if m == SCOPE_USAGE));
    }
}
