//! Stored runs: every question asked, the method's answer, citations and
//! trace, and each model call it made. The store keeps the method-specific
//! parts as JSON; the methods layer owns their types.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::rows::from_row;
use super::scope::Scope;
use super::threads::{Placement, Turn};
use super::{now_ms, Result, Store};
use folio_core::process::alive as process_alive;
use folio_llm::Shaping;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Done,
    Failed,
    Cancelled,
    /// Still marked running, but the process answering it is gone.
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Done => "done",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted => "interrupted",
        }
    }

    fn parse(s: &str) -> RunStatus {
        match s {
            "done" => RunStatus::Done,
            "failed" => RunStatus::Failed,
            "cancelled" => RunStatus::Cancelled,
            _ => RunStatus::Running,
        }
    }
}

pub struct NewRun<'a> {
    pub placement: Placement,
    pub question: &'a str,
    pub method: &'a str,
    /// What the question was restricted to.
    pub scope: &'a Scope,
    pub params: &'a Value,
    pub model: &'a Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct LlmCallRow {
    pub step: String,
    pub prompt_tokens: i64,
    /// Of `prompt_tokens`, those the model took from its cache.
    #[serde(default)]
    pub cached_tokens: i64,
    pub completion_tokens: i64,
    pub wall_ms: i64,
    pub finish: Option<String>,
    pub error: Option<String>,
    /// How the reply was held to its shape; `None` where none was asked for.
    #[serde(default)]
    pub shaping: Option<Shaping>,
}

/// An answer that reached its token limit before it finished. The run
/// keeps what was written, marked "cut off" wherever it is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct CutOff {
    /// The step whose reply was cut.
    pub step: String,
    /// The `max_tokens` it reached.
    pub max_tokens: u32,
}

/// A run just recorded, and the thread it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartedRun {
    pub run: i64,
    pub thread: i64,
}

/// How a run ended. `status` is never `Running` or `Interrupted` here.
pub struct RunOutcome {
    pub status: RunStatus,
    /// How a follow-up was asked; `None` for a thread's first turn.
    pub turn: Option<Turn>,
    pub answer: Option<String>,
    /// Set when the answer reached `max_tokens` before it finished.
    pub cut_off: Option<CutOff>,
    pub citations: Value,
    pub trace: Option<Value>,
    pub error: Option<String>,
    pub timings: Value,
    pub calls: Vec<LlmCallRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct RunRecord {
    pub id: i64,
    pub thread_id: i64,
    /// How a follow-up was asked; `None` for a thread's first turn (and for
    /// a follow-up that was interrupted before it was answered).
    pub turn: Option<Turn>,
    pub question: String,
    pub method: String,
    /// What the question was restricted to; the whole library by default.
    pub scope: Scope,
    pub params: Value,
    pub model: Value,
    pub status: RunStatus,
    pub answer: Option<String>,
    /// Set when the answer reached `max_tokens` before it finished: what it
    /// wrote is the answer, shown with a "cut off" mark.
    #[ts(optional = nullable)]
    pub cut_off: Option<CutOff>,
    pub citations: Value,
    pub trace: Option<Value>,
    pub error: Option<String>,
    pub timings: Value,
    pub llm_calls: i64,
    pub prompt_tokens: i64,
    /// Of `prompt_tokens`, those the model took from its cache.
    pub cached_tokens: i64,
    pub completion_tokens: i64,
    pub created_at: i64,
    pub finished_at: Option<i64>,
}

pub(super) struct RunRow {
    id: i64,
    thread_id: Option<i64>,
    turn: Option<String>,
    question: String,
    method: String,
    scope: Option<String>,
    params: String,
    model: String,
    status: String,
    owner_pid: Option<i64>,
    answer: Option<String>,
    cut_off: Option<String>,
    citations: String,
    trace: Option<String>,
    error: Option<String>,
    timings: String,
    llm_calls: i64,
    prompt_tokens: i64,
    cached_tokens: i64,
    completion_tokens: i64,
    created_at: i64,
    finished_at: Option<i64>,
}

from_row!(RunRow {
    id,
    thread_id,
    turn,
    question,
    method,
    scope,
    params,
    model,
    status,
    owner_pid,
    answer,
    cut_off,
    citations,
    trace,
    error,
    timings,
    llm_calls,
    prompt_tokens,
    cached_tokens,
    completion_tokens,
    created_at,
    finished_at
});

pub(super) const RUN_COLUMNS: &str =
    "id, thread_id, turn, question, method, scope, params, model, status, owner_pid, answer, cut_off, citations, \
     trace, error, timings, llm_calls, prompt_tokens, cached_tokens, completion_tokens, created_at, finished_at";

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

pub(super) fn run_from_row(r: RunRow) -> RunRecord {
    let mut status = RunStatus::parse(&r.status);
    if status == RunStatus::Running && !r.owner_pid.is_some_and(process_alive) {
        status = RunStatus::Interrupted;
    }
    RunRecord {
        id: r.id,
        // Every run has a thread since migration 6; a NULL would be a run
        // written by an older build into a newer file, shown as its own thread.
        thread_id: r.thread_id.unwrap_or(r.id),
        turn: r.turn.as_deref().and_then(|t| serde_json::from_str(t).ok()),
        question: r.question,
        method: r.method,
        scope: r
            .scope
            .as_deref()
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default(),
        params: json(&r.params),
        model: json(&r.model),
        status,
        answer: r.answer,
        cut_off: r
            .cut_off
            .as_deref()
            .and_then(|c| serde_json::from_str(c).ok()),
        citations: json(&r.citations),
        trace: r.trace.as_deref().map(json),
        error: r.error,
        timings: json(&r.timings),
        llm_calls: r.llm_calls,
        prompt_tokens: r.prompt_tokens,
        cached_tokens: r.cached_tokens,
        completion_tokens: r.completion_tokens,
        created_at: r.created_at,
        finished_at: r.finished_at,
    }
}

impl Store {
    /// Records a running run where `placement` says; `None` when the
    /// thread it follows up or branches from does not exist.
    pub async fn start_run(&self, run: &NewRun<'_>) -> Result<Option<StartedRun>> {
        let mut tx = self.begin_write().await?;
        let Some(thread) = Store::place(&mut tx, run.placement, run.question).await? else {
            return Ok(None);
        };
        let id = sqlx::query(
            "INSERT INTO runs(thread_id, question, method, scope, params, model, status, owner_pid, created_at) \
             VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?)",
        )
        .bind(thread)
        .bind(run.question)
        .bind(run.method)
        .bind(
            (!run.scope.is_everything())
                .then(|| serde_json::to_string(run.scope).ok())
                .flatten(),
        )
        .bind(run.params.to_string())
        .bind(run.model.to_string())
        .bind(std::process::id() as i64)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?
        .last_insert_rowid();
        tx.commit().await?;
        Ok(Some(StartedRun { run: id, thread }))
    }

    /// Records the outcome and every model call in one transaction, so a run
    /// is either still running or complete with its calls.
    pub async fn finish_run(&self, id: i64, outcome: &RunOutcome) -> Result<()> {
        let mut tx = self.begin_write().await?;
        let prompt_tokens: i64 = outcome.calls.iter().map(|c| c.prompt_tokens).sum();
        let cached_tokens: i64 = outcome.calls.iter().map(|c| c.cached_tokens).sum();
        let completion_tokens: i64 = outcome.calls.iter().map(|c| c.completion_tokens).sum();
        sqlx::query(
            "UPDATE runs SET status = ?, owner_pid = NULL, turn = ?, answer = ?, cut_off = ?, citations = ?, trace = ?, \
             error = ?, timings = ?, llm_calls = ?, prompt_tokens = ?, cached_tokens = ?, completion_tokens = ?, \
             finished_at = ? \
             WHERE id = ?",
        )
        .bind(outcome.status.as_str())
        .bind(
            outcome
                .turn
                .as_ref()
                .and_then(|t| serde_json::to_string(t).ok()),
        )
        .bind(&outcome.answer)
        .bind(
            outcome
                .cut_off
                .as_ref()
                .and_then(|c| serde_json::to_string(c).ok()),
        )
        .bind(outcome.citations.to_string())
        .bind(outcome.trace.as_ref().map(Value::to_string))
        .bind(&outcome.error)
        .bind(outcome.timings.to_string())
        .bind(outcome.calls.len() as i64)
        .bind(prompt_tokens)
        .bind(cached_tokens)
        .bind(completion_tokens)
        .bind(now_ms())
        .bind(id)
        .execute(&mut *tx)
        .await?;
        for (ordinal, call) in outcome.calls.iter().enumerate() {
            sqlx::query(
                "INSERT INTO llm_calls(run_id, ordinal, step, prompt_tokens, cached_tokens, completion_tokens, wall_ms, \
                 finish, error, shaping) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(id)
            .bind(ordinal as i64)
            .bind(&call.step)
            .bind(call.prompt_tokens)
            .bind(call.cached_tokens)
            .bind(call.completion_tokens)
            .bind(call.wall_ms)
            .bind(&call.finish)
            .bind(&call.error)
            .bind(call.shaping.map(Shaping::as_str))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub async fn run(&self, id: i64) -> Result<Option<RunRecord>> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?");
        let row: Option<RunRow> = sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(run_from_row))
    }

    /// The most recent runs first; with `text`, only runs whose question or
    /// answer contains it (case-insensitive for ASCII).
    pub async fn runs(&self, text: Option<&str>, limit: i64) -> Result<Vec<RunRecord>> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE ?1 IS NULL \
             OR instr(lower(question), lower(?1)) > 0 OR instr(lower(COALESCE(answer, '')), lower(?1)) > 0 \
             ORDER BY id DESC LIMIT ?2"
        );
        let text = text.map(str::trim).filter(|t| !t.is_empty());
        let rows: Vec<RunRow> = sqlx::query_as(&sql)
            .bind(text)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().map(run_from_row).collect())
    }

    pub async fn llm_calls(&self, run_id: i64) -> Result<Vec<LlmCallRow>> {
        let rows: Vec<CallRow> = sqlx::query_as(
            "SELECT step, prompt_tokens, cached_tokens, completion_tokens, wall_ms, finish, error, shaping \
             FROM llm_calls WHERE run_id = ? ORDER BY ordinal",
        )
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| LlmCallRow {
                step: r.step,
                prompt_tokens: r.prompt_tokens,
                cached_tokens: r.cached_tokens,
                completion_tokens: r.completion_tokens,
                wall_ms: r.wall_ms,
                finish: r.finish,
                error: r.error,
                shaping: r.shaping.as_deref().and_then(Shaping::parse),
            })
            .collect())
    }
}

struct CallRow {
    step: String,
    prompt_tokens: i64,
    cached_tokens: i64,
    completion_tokens: i64,
    wall_ms: i64,
    finish: Option<String>,
    error: Option<String>,
    shaping: Option<String>,
}

from_row!(CallRow {
    step,
    prompt_tokens,
    cached_tokens,
    completion_tokens,
    wall_ms,
    finish,
    error,
    shaping
});
