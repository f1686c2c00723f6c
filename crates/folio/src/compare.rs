//! `folio compare`: one question answered by several methods, the answers
//! side by side in the terminal: the CLI's face of the app's Compare view.
//! The methods answer in turn, as one model answers one request at a time;
//! each answer is a run of its own in history, as in the app.

use std::io::IsTerminal;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::Args;
use tokio_util::sync::CancellationToken;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use folio_engine::eval::spec::{compare_requests, MethodSpec};
use folio_engine::methods::runner::AskSettings;
use folio_engine::methods::{Citation, CitedBy};
use folio_engine::path_text::shown_name;
use folio_engine::store::{RunRecord, RunStatus};
use folio_engine::Library;

use crate::answers::{ask_streaming, run_seconds};
use crate::args::{ScopeArgs, SettingsArgs};
use crate::print_json;

#[derive(Args)]
pub struct CompareArgs {
    question: String,
    /// Two or more method specs, comma-separated, one column each:
    /// `method` or `method:name=value[:name=value…]`, as `folio eval`
    /// takes them, e.g. `vanilla-rag,pager:variant=parallel,activerag`.
    #[arg(
        long,
        required = true,
        value_delimiter = ',',
        value_name = "SPEC,SPEC,…"
    )]
    methods: Vec<MethodSpec>,
    #[command(flatten)]
    settings: SettingsArgs,
    #[command(flatten)]
    scope: ScopeArgs,
    /// Width of the table in characters (default: the terminal's, else 120).
    #[arg(long)]
    width: Option<usize>,
}

/// Narrower columns than this are stacked one under another instead.
const NARROWEST_COLUMN: usize = 24;
const DEFAULT_WIDTH: usize = 120;
const GUTTER: &str = " │ ";

pub async fn run(
    library: &Library,
    args: CompareArgs,
    cancel: &CancellationToken,
    json: bool,
) -> Result<()> {
    let settings = AskSettings::from(args.settings);
    let requests = compare_requests(
        &args.question,
        &args.methods,
        settings,
        settings.resolve(&library.config().llm),
        &args.scope.scope(),
    )?;
    let total = requests.len();
    let mut answered = Vec::with_capacity(total);
    for (i, (spec, request)) in args.methods.iter().zip(&requests).enumerate() {
        if cancel.is_cancelled() {
            break;
        }
        eprint!("[{}/{total}] {spec} … ", i + 1);
        let started = Instant::now();
        let run = ask_streaming(library, request, cancel, true).await?;
        eprintln!(
            "{} in {:.1} s",
            run.status.as_str(),
            started.elapsed().as_secs_f64()
        );
        answered.push((spec, run));
    }
    if json {
        let rows: Vec<_> = answered
            .iter()
            .map(|(spec, run)| serde_json::json!({ "spec": spec, "run": run }))
            .collect();
        print_json(&rows)?;
    } else {
        let columns: Vec<Column> = answered
            .iter()
            .map(|(spec, run)| Column::of(&spec.to_string(), run))
            .collect();
        println!("{}\n", args.question);
        print!(
            "{}",
            side_by_side(&columns, args.width.unwrap_or_else(width))
        );
    }
    if answered.len() < total {
        bail!(
            "stopped after {} of {total} methods; their runs are kept",
            answered.len()
        );
    }
    let failed: Vec<String> = answered
        .iter()
        .filter(|(_, run)| run.status != RunStatus::Done)
        .map(|(spec, run)| format!("{spec} (run {})", run.id))
        .collect();
    if !failed.is_empty() {
        bail!("no answer from {}", failed.join(", "));
    }
    Ok(())
}

/// The terminal's width when stdout is one, else [`DEFAULT_WIDTH`].
fn width() -> usize {
    if !std::io::stdout().is_terminal() {
        return DEFAULT_WIDTH;
    }
    // SAFETY: TIOCGWINSZ fills the winsize it is handed and nothing else.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    match ok && size.ws_col > 0 {
        true => usize::from(size.ws_col),
        false => DEFAULT_WIDTH,
    }
}

/// One method's answer as the table shows it: sections of lines, each
/// section starting on the same row in every column.
#[derive(Debug, Clone, PartialEq)]
struct Column {
    title: String,
    sections: Vec<Vec<String>>,
}

impl Column {
    fn of(title: &str, run: &RunRecord) -> Column {
        let answer = match (&run.answer, run.status) {
            (Some(answer), _) => {
                let mut lines: Vec<String> = answer.lines().map(str::to_string).collect();
                if let Some(cut) = &run.cut_off {
                    lines.push(format!("[cut off at {} tokens]", cut.max_tokens));
                }
                lines
            }
            (None, status) => vec![format!(
                "{}: {}",
                status.as_str(),
                run.error.as_deref().unwrap_or("no answer")
            )],
        };
        let citations: Vec<Citation> =
            serde_json::from_value(run.citations.clone()).unwrap_or_default();
        let sources = match citations.is_empty() {
            true => vec!["no sources".to_string()],
            false => std::iter::once("sources:".to_string())
                .chain(citations.iter().map(source_line))
                .collect(),
        };
        let footer = vec![
            format!(
                "run {} · {} · {:.1} s",
                run.id,
                run.status.as_str(),
                run_seconds(run)
            ),
            format!(
                "{} model call{} · {} tokens in, {} out",
                run.llm_calls,
                if run.llm_calls == 1 { "" } else { "s" },
                run.prompt_tokens,
                run.completion_tokens
            ),
        ];
        Column {
            title: title.to_string(),
            sections: vec![answer, sources, footer],
        }
    }
}

/// `[2] ch04-01.md › Ownership › Rules (attributed)`.
fn source_line(c: &Citation) -> String {
    let heading = match c.heading_path.is_empty() {
        true => String::new(),
        false => format!(" › {}", c.heading_path),
    };
    let attributed = match c.by {
        CitedBy::Attribution => " (attributed)",
        _ => "",
    };
    format!(
        "[{}] {}{heading}{attributed}",
        c.number,
        shown_name(&c.path)
    )
}

/// The columns side by side in `width` characters, or one under another
/// where a column would be narrower than [`NARROWEST_COLUMN`].
fn side_by_side(columns: &[Column], width: usize) -> String {
    let n = columns.len().max(1);
    let inner = (width.saturating_sub(GUTTER.len() * (n - 1))) / n;
    let mut out = String::new();
    if inner < NARROWEST_COLUMN {
        for column in columns {
            out.push_str(&format!("── {} ──\n", column.title));
            for section in &column.sections {
                for line in section {
                    out.push_str(&wrap(line, width.max(NARROWEST_COLUMN)).join("\n"));
                    out.push('\n');
                }
                out.push('\n');
            }
        }
        return out;
    }
    let rows = |cells: Vec<Vec<String>>, out: &mut String| {
        let height = cells.iter().map(Vec::len).max().unwrap_or(0);
        for row in 0..height {
            let line: Vec<String> = cells
                .iter()
                .map(|cell| pad(cell.get(row).map(String::as_str).unwrap_or(""), inner))
                .collect();
            out.push_str(line.join(GUTTER).trim_end());
            out.push('\n');
        }
    };
    rows(
        columns.iter().map(|c| wrap(&c.title, inner)).collect(),
        &mut out,
    );
    out.push_str(&vec!["─".repeat(inner); n].join("─┼─"));
    out.push('\n');
    let sections = columns.iter().map(|c| c.sections.len()).max().unwrap_or(0);
    for s in 0..sections {
        if s > 0 {
            out.push('\n');
        }
        let cells = columns
            .iter()
            .map(|c| {
                c.sections
                    .get(s)
                    .into_iter()
                    .flatten()
                    .flat_map(|line| wrap(line, inner))
                    .collect()
            })
            .collect();
        rows(cells, &mut out);
    }
    out
}

/// `text` padded with spaces to `width` display columns.
fn pad(text: &str, width: usize) -> String {
    let fill = width.saturating_sub(text.width());
    format!("{text}{}", " ".repeat(fill))
}

/// `line` broken at spaces into lines of at most `width` display columns;
/// a word longer than that is broken where it reaches the edge. An empty
/// line stays one empty line.
fn wrap(line: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in line.split_whitespace() {
        let needed = match current.is_empty() {
            true => word.width(),
            false => current.width() + 1 + word.width(),
        };
        if needed > width && !current.is_empty() {
            lines.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        for c in word.chars() {
            if current.width() + c.width().unwrap_or(0) > width {
                lines.push(std::mem::take(&mut current));
            }
            current.push(c);
        }
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(current);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(title: &str, answer: &[&str], sources: &[&str]) -> Column {
        Column {
            title: title.to_string(),
            sections: vec![
                answer.iter().map(|s| s.to_string()).collect(),
                sources.iter().map(|s| s.to_string()).collect(),
            ],
        }
    }

    #[test]
    fn wrapping_breaks_at_spaces_and_splits_only_overlong_words() {
        assert_eq!(wrap("one two three four", 9), ["one two", "three", "four"]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 10), [""]);
        assert_eq!(wrap("日本語のテキスト", 6), ["日本語", "のテキ", "スト"]);
        for line in wrap("a sentence with several words in it", 7) {
            assert!(line.width() <= 7, "{line:?}");
        }
    }

    #[test]
    fn sections_start_on_the_same_row_in_every_column() {
        let table = side_by_side(
            &[
                column("vanilla-rag", &["a short answer"], &["[1] a.md"]),
                column(
                    "activerag",
                    &["a much longer answer that needs several lines here"],
                    &["[1] b.md"],
                ),
            ],
            60,
        );
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("vanilla-rag") && lines[0].contains("│ activerag"));
        assert!(lines[1].contains("┼"));
        let sources = lines.iter().position(|l| l.contains("[1] a.md")).unwrap();
        assert!(lines[sources].contains("[1] b.md"), "{table}");
        assert!(
            sources > 3,
            "the longer answer pushes both sources down: {table}"
        );
        for line in &lines {
            assert!(line.width() <= 60, "{line:?} is wider than the table");
        }
    }

    #[test]
    fn narrow_tables_stack_the_columns() {
        let table = side_by_side(
            &[
                column("vanilla-rag", &["first"], &[]),
                column("activerag", &["second"], &[]),
            ],
            40,
        );
        assert!(!table.contains('│'), "{table}");
        let first = table.find("── vanilla-rag ──").unwrap();
        let second = table.find("── activerag ──").unwrap();
        assert!(first < table.find("first").unwrap());
        assert!(table.find("first").unwrap() < second);
    }
}
