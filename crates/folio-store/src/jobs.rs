//! Persisted jobs. A job row outlives the process that runs it: progress is
//! committed with the data it describes, and a job whose owner process is gone
//! (killed, crashed) is picked up again by the next worker.

use serde::{Deserialize, Serialize};

use super::{now_ms, Result, Store};
use folio_core::events::Progress;
use folio_core::process::alive as process_alive;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Queued,
    Running,
    Paused,
    Done,
    Failed,
    Cancelled,
}

impl JobState {
    fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Paused => "paused",
            JobState::Done => "done",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str) -> JobState {
        match s {
            "queued" => JobState::Queued,
            "running" => JobState::Running,
            "paused" => JobState::Paused,
            "done" => JobState::Done,
            "cancelled" => JobState::Cancelled,
            _ => JobState::Failed,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct Job {
    pub id: i64,
    pub kind: String,
    pub state: JobState,
    /// A running job whose process no longer exists; it resumes on the next
    /// `folio add` or `folio watch`.
    pub interrupted: bool,
    pub payload: serde_json::Value,
    pub done: i64,
    pub total: i64,
    pub failed: i64,
    /// Time spent running, summed over every process that worked on it.
    pub active_ms: i64,
    /// Items per second over the time the job has actually been running.
    pub rate: Option<f64>,
    pub eta_seconds: Option<f64>,
    pub error: Option<String>,
    /// The process running the job, if any.
    pub owner_pid: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

type JobRow = (
    i64,
    String,
    String,
    String,
    i64,
    i64,
    i64,
    i64,
    Option<String>,
    Option<i64>,
    i64,
    i64,
);

const JOB_COLUMNS: &str =
    "id, kind, state, payload, done, total, failed, active_ms, error, owner_pid, created_at, updated_at";

fn job_from_row(r: JobRow) -> Job {
    let (
        id,
        kind,
        state,
        payload,
        done,
        total,
        failed,
        active_ms,
        error,
        owner_pid,
        created_at,
        updated_at,
    ) = r;
    let state = JobState::parse(&state);
    let interrupted = state == JobState::Running && !owner_pid.is_some_and(process_alive);
    let rate = (active_ms > 0 && done > 0).then(|| done as f64 / (active_ms as f64 / 1000.0));
    let eta_seconds = rate
        .filter(|_| state == JobState::Running)
        .map(|r| (total - done).max(0) as f64 / r);
    Job {
        id,
        kind,
        state,
        interrupted,
        payload: serde_json::from_str(&payload).unwrap_or(serde_json::Value::Null),
        done,
        total,
        failed,
        active_ms,
        rate,
        eta_seconds,
        error,
        owner_pid,
        created_at,
        updated_at,
    }
}

impl Store {
    pub async fn create_job(
        &self,
        kind: &str,
        payload: &serde_json::Value,
        state: JobState,
    ) -> Result<i64> {
        let now = now_ms();
        Ok(sqlx::query(
            "INSERT INTO jobs(kind, state, payload, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(kind)
        .bind(state.as_str())
        .bind(payload.to_string())
        .bind(now)
        .bind(now)
        .execute(&self.pool)
        .await?
        .last_insert_rowid())
    }

    /// Takes the job for this process. `seen_owner` is the owner the caller
    /// saw when it judged the job free (none, or a dead process); if another
    /// worker claimed it since, nothing changes and `false` comes back.
    pub async fn claim_job(&self, id: i64, seen_owner: Option<i64>) -> Result<bool> {
        self.claim_job_from(id, seen_owner, "('queued', 'running')")
            .await
    }

    /// [`Store::claim_job`] for a job the user starts again by hand, which
    /// takes a parked one too.
    pub async fn claim_job_in_foreground(&self, id: i64, seen_owner: Option<i64>) -> Result<bool> {
        self.claim_job_from(id, seen_owner, "('queued', 'running', 'paused')")
            .await
    }

    async fn claim_job_from(&self, id: i64, seen_owner: Option<i64>, states: &str) -> Result<bool> {
        let claimed = sqlx::query(&format!(
            "UPDATE jobs SET state = 'running', owner_pid = ?, updated_at = ? \
             WHERE id = ? AND state IN {states} AND owner_pid IS ?"
        ))
        .bind(std::process::id() as i64)
        .bind(now_ms())
        .bind(id)
        .bind(seen_owner)
        .execute(&self.pool)
        .await?;
        Ok(claimed.rows_affected() == 1)
    }

    /// Creates a job already claimed by this process: one the user starts
    /// in the foreground runs at once, and no worker can take it first.
    pub async fn create_claimed_job(&self, kind: &str, payload: &serde_json::Value) -> Result<i64> {
        let now = now_ms();
        Ok(sqlx::query(
            "INSERT INTO jobs(kind, state, payload, owner_pid, created_at, updated_at) \
             VALUES (?, 'running', ?, ?, ?, ?)",
        )
        .bind(kind)
        .bind(payload.to_string())
        .bind(std::process::id() as i64)
        .bind(now)
        .bind(now)
        .execute(&self.pool)
        .await?
        .last_insert_rowid())
    }

    /// Replaces what a job is to do: the user started it again with other
    /// settings (an evaluation with a larger --limit).
    pub async fn set_job_payload(&self, id: i64, payload: &serde_json::Value) -> Result<()> {
        sqlx::query("UPDATE jobs SET payload = ?, updated_at = ? WHERE id = ?")
            .bind(payload.to_string())
            .bind(now_ms())
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Sets the claimed job's whole count, for work that counts itself
    /// (an evaluation's answers) rather than committing batch by batch.
    /// `active_ms` is the time run so far, this process's included.
    pub async fn set_job_progress(
        &self,
        id: i64,
        progress: &Progress,
        active_ms: i64,
    ) -> Result<()> {
        sqlx::query(
            "UPDATE jobs SET done = ?, total = ?, failed = ?, active_ms = ?, updated_at = ? WHERE id = ?",
        )
        .bind(progress.done as i64)
        .bind(progress.total as i64)
        .bind(progress.failed as i64)
        .bind(active_ms)
            .bind(now_ms())
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Records how many items the claimed job still has to do.
    pub async fn start_job(&self, id: i64, total: u64) -> Result<()> {
        sqlx::query("UPDATE jobs SET total = done + ?, updated_at = ? WHERE id = ?")
            .bind(total as i64)
            .bind(now_ms())
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Lets go of a stopped job with its progress: back to the queue (any
    /// worker, this process included, can resume it) or parked until the
    /// user resumes background work.
    pub async fn release_job(&self, id: i64, to: JobState) -> Result<()> {
        sqlx::query("UPDATE jobs SET state = ?, owner_pid = NULL, updated_at = ? WHERE id = ?")
            .bind(to.as_str())
            .bind(now_ms())
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Moves every job in state `from` to state `to` (queued jobs to paused
    /// and back); returns how many moved.
    pub async fn move_jobs(&self, from: JobState, to: JobState) -> Result<u64> {
        let done = sqlx::query(
            "UPDATE jobs SET state = ?, updated_at = ? WHERE state = ? AND owner_pid IS NULL",
        )
        .bind(to.as_str())
        .bind(now_ms())
        .bind(from.as_str())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    /// Marks an unfinished job cancelled and returns it as it was before, or
    /// `None` when there is no such unfinished job. A worker running it
    /// notices at its next batch and leaves the state alone.
    pub async fn cancel_job(&self, id: i64) -> Result<Option<Job>> {
        let Some(job) = self.job(id).await? else {
            return Ok(None);
        };
        if !matches!(
            job.state,
            JobState::Queued | JobState::Running | JobState::Paused
        ) {
            return Ok(None);
        }
        self.finish_job(id, JobState::Cancelled, None).await?;
        Ok(Some(job))
    }

    pub async fn finish_job(&self, id: i64, state: JobState, error: Option<&str>) -> Result<()> {
        let now = now_ms();
        sqlx::query("UPDATE jobs SET state = ?, error = ?, owner_pid = NULL, updated_at = ?, finished_at = ? WHERE id = ?")
            .bind(state.as_str())
            .bind(error)
            .bind(now)
            .bind(now)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn job(&self, id: i64) -> Result<Option<Job>> {
        let row: Option<JobRow> =
            sqlx::query_as(&format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?"))
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.map(job_from_row))
    }

    /// The most recent jobs, newest first.
    pub async fn jobs(&self, limit: usize) -> Result<Vec<Job>> {
        let rows: Vec<JobRow> = sqlx::query_as(&format!(
            "SELECT {JOB_COLUMNS} FROM jobs ORDER BY id DESC LIMIT ?"
        ))
        .bind(limit as i64)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(job_from_row).collect())
    }

    /// Jobs that are not finished: queued, paused and running ones, those
    /// of live processes included. Oldest first.
    pub async fn unfinished_jobs(&self) -> Result<Vec<Job>> {
        let rows: Vec<JobRow> = sqlx::query_as(&format!(
            "SELECT {JOB_COLUMNS} FROM jobs WHERE state IN ('queued', 'paused', 'running') ORDER BY id"
        ))
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(job_from_row).collect())
    }

    /// Jobs that are not finished and that no live process holds: queued,
    /// paused, and running ones whose process died. Oldest first.
    pub async fn waiting_jobs(&self) -> Result<Vec<Job>> {
        let mut jobs = self.unfinished_jobs().await?;
        jobs.retain(|j| j.state != JobState::Running || j.interrupted);
        Ok(jobs)
    }

    /// Jobs a worker may take now: waiting ones that are not paused.
    pub async fn pending_jobs(&self) -> Result<Vec<Job>> {
        let mut jobs = self.waiting_jobs().await?;
        jobs.retain(|j| j.state != JobState::Paused);
        Ok(jobs)
    }
}
