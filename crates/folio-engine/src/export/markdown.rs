//! The markdown text of an exported run or thread.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use folio_methods::markdown::{block, inline, source_link, Fences};
use folio_methods::{Citation, CitedBy, Trace};
use folio_store::{LeftOutReason, LlmCallRow, Rewrite, RunRecord, RunStatus, Thread, Turn};

/// The whole document for `run`, given its recorded model calls and the
/// files it cites that are no longer in the library.
pub fn render(run: &RunRecord, calls: &[LlmCallRow], gone: &BTreeSet<String>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", inline(&run.question));
    let model = run
        .model
        .get("model")
        .and_then(|m| m.as_str())
        .unwrap_or("unknown model");
    let _ = writeln!(
        out,
        "*{} · {} · run {} · {}*\n",
        run.method,
        inline(model),
        run.id,
        run.status.as_str()
    );
    if !run.scope.is_everything() {
        let _ = writeln!(out, "> Asked within: {}.\n", inline(&run.scope.to_string()));
    }
    if let Some(turn) = &run.turn {
        render_turn(&mut out, turn);
    }
    let trace = run
        .trace
        .clone()
        .and_then(|t| serde_json::from_value::<Trace>(t).ok());
    if let Some(answer) = &run.answer {
        let _ = writeln!(out, "{}\n", block(answer));
    }
    if let Some(cut) = &run.cut_off {
        let _ = writeln!(
            out,
            "> **Cut off:** the answer reached its limit of {} tokens before it finished.\n",
            cut.max_tokens
        );
    }
    if let Some(trace) = &trace {
        trace.write_body(&mut out);
    }
    if run.status != RunStatus::Done {
        let reason = run.error.as_deref().unwrap_or("the run did not finish");
        let _ = writeln!(out, "> **No complete answer:** {}\n", inline(reason));
    }
    let citations: Vec<Citation> =
        serde_json::from_value(run.citations.clone()).unwrap_or_default();
    if !citations.is_empty() {
        out.push_str("## Sources\n\n");
        for c in &citations {
            let _ = writeln!(
                out,
                "{}. {}{}{}",
                c.number,
                source_link(
                    &c.path,
                    &c.heading_path,
                    c.span_start,
                    c.span_end,
                    c.page,
                    c.ocr,
                    c.rows
                ),
                if gone.contains(&c.path) {
                    " — *no longer in the library*"
                } else {
                    ""
                },
                attribution(c)
            );
        }
        out.push('\n');
    }
    out.push_str("## How this answer was built\n\n");
    match &trace {
        Some(trace) => trace.write_markdown(&mut out, &citations),
        None => out.push_str("No trace was recorded.\n\n"),
    }
    render_calls(&mut out, calls, &run.timings);
    out
}

/// A whole thread, turn after turn, each as [`render`] writes a run with
/// its headings one level down. `calls` are each run's, in the same order.
pub fn render_thread(
    thread: &Thread,
    calls: &[Vec<LlmCallRow>],
    gone: &BTreeSet<String>,
) -> String {
    let mut out = String::new();
    let summary = &thread.summary;
    let _ = writeln!(out, "# {}\n", inline(&summary.title));
    let _ = writeln!(
        out,
        "*thread {} · {} turn{}*\n",
        summary.id,
        summary.turns,
        if summary.turns == 1 { "" } else { "s" }
    );
    for (run, calls) in thread.runs.iter().zip(calls) {
        if run.thread_id != summary.id {
            let _ = writeln!(
                out,
                "*The next turn is from thread {}, which this thread branched from.*\n",
                run.thread_id
            );
        }
        out.push_str(&nested(&render(run, calls, gone)));
    }
    out
}

/// `markdown` with every heading one level deeper; lines inside fenced
/// code are left alone (a `#` there is code, not a heading).
fn nested(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len() + 64);
    let mut fences = Fences::default();
    for line in markdown.lines() {
        if !fences.inside(line) && line.starts_with('#') {
            out.push('#');
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// How a follow-up was asked: the question retrieval read, and which
/// earlier turns the method saw.
fn render_turn(out: &mut String, turn: &Turn) {
    let asked = match &turn.rewrite {
        Rewrite::NotNeeded => "asked as written (no earlier turn had an answer)".to_string(),
        Rewrite::Standalone { query } => format!("rewritten as *{}*", inline(query)),
        Rewrite::Joined { query, because } => format!(
            "searched as *{}*, the earlier question and the follow-up together ({})",
            inline(query),
            because.explained()
        ),
        Rewrite::FellBack { reason } => format!(
            "asked as written: the rewrite was unusable ({})",
            inline(reason)
        ),
        Rewrite::Off => "asked as written (rewriting was turned off)".to_string(),
    };
    let runs = |ids: &mut dyn Iterator<Item = i64>| {
        ids.map(|id| format!("run {id}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(out, "> **Follow-up**, {asked}.");
    if !turn.history.is_empty() {
        let _ = writeln!(
            out,
            "> The answer saw the earlier turns {}.",
            runs(&mut turn.history.iter().copied())
        );
    }
    for (reason, why) in [
        (LeftOutReason::OverBudget, "past the history's token budget"),
        (LeftOutReason::NoAnswer, "they have no answer"),
    ] {
        let mut left = turn
            .left_out
            .iter()
            .filter(|l| l.reason == reason)
            .map(|l| l.run)
            .peekable();
        if left.peek().is_some() {
            let _ = writeln!(out, "> Left out, {why}: {}.", runs(&mut left));
        }
    }
    out.push('\n');
}

/// How an attributed source is marked in the sources list: the model did
/// not cite it, Folio matched these sentences to it.
fn attribution(c: &Citation) -> String {
    if c.by != CitedBy::Attribution {
        return String::new();
    }
    let quotes: Vec<String> = c
        .supports
        .iter()
        .map(|s| format!("“{}”", inline(s)))
        .collect();
    format!(
        " — *attributed* (unmarked in the answer; matches {})",
        quotes.join(", ")
    )
}

fn render_calls(out: &mut String, calls: &[LlmCallRow], timings: &serde_json::Value) {
    if !calls.is_empty() {
        out.push_str("### Model calls\n\n| step | prompt tokens | completion tokens | time | result |\n|---|---:|---:|---:|---|\n");
        for c in calls {
            let result = match (&c.error, &c.finish) {
                (Some(e), _) => inline(e),
                (None, Some(f)) => f.clone(),
                (None, None) => String::new(),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.1} s | {} |",
                inline(&c.step),
                super::prompt_tokens(c.prompt_tokens, c.cached_tokens),
                c.completion_tokens,
                c.wall_ms as f64 / 1000.0,
                result.replace('|', "\\|")
            );
        }
        out.push('\n');
    }
    let ms = |key: &str| timings.get(key).and_then(|v| v.as_u64()).unwrap_or(0) as f64 / 1000.0;
    let _ = writeln!(
        out,
        "Total {:.2} s: retrieval {:.2} s, model {:.2} s, everything else {:.2} s.",
        ms("total_ms"),
        ms("retrieval_ms"),
        ms("llm_ms"),
        ms("other_ms")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_nest_around_code() {
        assert_eq!(
            nested("# Q\n```\n# not a heading\n```\n## Sources\n"),
            "## Q\n```\n# not a heading\n```\n### Sources\n"
        );
    }
}
