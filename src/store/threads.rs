//! Threads: conversations made of runs. A question asked on its own starts
//! a thread; a follow-up joins one. A turn's place in its thread is its run
//! id's order, and how a follow-up was asked (its standalone rewrite, which
//! earlier turns the method saw) is kept with the run as a [`Turn`].

use serde::{Deserialize, Serialize};

use super::rows::from_row;
use super::runs::{run_from_row, RunRow, RUN_COLUMNS};
use super::{now_ms, Result, RunRecord, Store};

/// How a follow-up was asked. A first turn has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct Turn {
    /// The earlier turns the method was shown, oldest first, by run id.
    pub history: Vec<i64>,
    /// Earlier turns it was not shown, and why.
    pub left_out: Vec<LeftOut>,
    /// The follow-up as retrieval and the method read it.
    pub rewrite: Rewrite,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct LeftOut {
    pub run: i64,
    pub reason: LeftOutReason,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "snake_case")]
pub enum LeftOutReason {
    /// The turn failed, was cancelled or interrupted: there is no answer to show.
    NoAnswer,
    /// Showing it would have passed the history's token budget; older
    /// turns go first.
    OverBudget,
}

/// What became of the follow-up before retrieval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Rewrite {
    /// No earlier turn had an answer, so the follow-up was used as asked.
    NotNeeded,
    /// The model rewrote it into a question that stands on its own.
    Standalone { query: String },
    /// The model's reply was unusable; the follow-up was used as asked.
    FellBack { reason: String },
}

impl Rewrite {
    /// The standalone question, when the model wrote one.
    pub fn query(&self) -> Option<&str> {
        match self {
            Rewrite::Standalone { query } => Some(query),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct ThreadSummary {
    pub id: i64,
    /// The first turn's question.
    pub title: String,
    pub turns: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A thread with every turn, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Thread {
    #[serde(flatten)]
    #[ts(flatten)]
    pub summary: ThreadSummary,
    pub runs: Vec<RunRecord>,
}

struct SummaryRow {
    id: i64,
    title: String,
    turns: i64,
    created_at: i64,
    updated_at: i64,
}

from_row!(SummaryRow {
    id,
    title,
    turns,
    created_at,
    updated_at
});

const SUMMARY_SQL: &str = "SELECT t.id, t.title, t.created_at, t.updated_at, \
     (SELECT count(*) FROM runs r WHERE r.thread_id = t.id) AS turns FROM threads t";

fn summary(r: SummaryRow) -> ThreadSummary {
    ThreadSummary {
        id: r.id,
        title: r.title,
        turns: r.turns,
        created_at: r.created_at,
        updated_at: r.updated_at,
    }
}

impl Store {
    /// The most recently active threads first.
    pub async fn threads(&self, limit: i64) -> Result<Vec<ThreadSummary>> {
        let sql = format!("{SUMMARY_SQL} ORDER BY t.updated_at DESC, t.id DESC LIMIT ?");
        let rows: Vec<SummaryRow> = sqlx::query_as(&sql)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().map(summary).collect())
    }

    /// The thread with its turns, oldest first; `None` if there is none.
    pub async fn thread(&self, id: i64) -> Result<Option<Thread>> {
        let sql = format!("{SUMMARY_SQL} WHERE t.id = ?");
        let Some(row) = sqlx::query_as::<_, SummaryRow>(&sql)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
        else {
            return Ok(None);
        };
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE thread_id = ? ORDER BY id");
        let runs: Vec<RunRow> = sqlx::query_as(&sql).bind(id).fetch_all(&self.pool).await?;
        Ok(Some(Thread {
            summary: summary(row),
            runs: runs.into_iter().map(run_from_row).collect(),
        }))
    }

    /// A new thread named after its first question.
    pub(super) async fn new_thread(tx: &mut sqlx::SqliteConnection, title: &str) -> Result<i64> {
        let now = now_ms();
        Ok(
            sqlx::query("INSERT INTO threads(title, created_at, updated_at) VALUES (?, ?, ?)")
                .bind(title)
                .bind(now)
                .bind(now)
                .execute(tx)
                .await?
                .last_insert_rowid(),
        )
    }

    /// Marks the thread active now; whether it exists.
    pub(super) async fn touch_thread(tx: &mut sqlx::SqliteConnection, id: i64) -> Result<bool> {
        Ok(
            sqlx::query("UPDATE threads SET updated_at = ? WHERE id = ?")
                .bind(now_ms())
                .bind(id)
                .execute(tx)
                .await?
                .rows_affected()
                > 0,
        )
    }

    /// Forgets a thread, its runs and their model calls; whether it existed.
    pub async fn delete_thread(&self, id: i64) -> Result<bool> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "DELETE FROM llm_calls WHERE run_id IN (SELECT id FROM runs WHERE thread_id = ?)",
        )
        .bind(id)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM runs WHERE thread_id = ?")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let done = sqlx::query("DELETE FROM threads WHERE id = ?")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};

    use super::super::migrations::migrator;

    /// An index from before threads opens with each run as its own thread,
    /// and a new question starts a thread numbered past them.
    #[tokio::test]
    async fn runs_from_before_threads_become_threads_of_one_turn() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.sqlite");
        let options = SqliteConnectOptions::from_str("sqlite:")
            .unwrap()
            .filename(&path)
            .create_if_missing(true);
        let pool = SqlitePoolOptions::new()
            .connect_with(options)
            .await
            .unwrap();
        let mut before_threads = migrator().await.unwrap();
        before_threads.migrations = before_threads.migrations[..5].to_vec().into();
        before_threads.run(&pool).await.unwrap();
        for (question, at) in [("First?", 10), ("Second?", 20)] {
            sqlx::query(
                "INSERT INTO runs(question, method, params, model, status, created_at, finished_at) \
                 VALUES (?, 'llm-only', '{}', '{}', 'done', ?, ?)",
            )
            .bind(question)
            .bind(at)
            .bind(at + 1)
            .execute(&pool)
            .await
            .unwrap();
        }
        pool.close().await;

        let store = super::Store::open(&path).await.unwrap();
        let threads = store.threads(10).await.unwrap();
        let seen: Vec<(i64, &str, i64, i64)> = threads
            .iter()
            .map(|t| (t.id, t.title.as_str(), t.turns, t.updated_at))
            .collect();
        assert_eq!(seen, [(2, "Second?", 1, 21), (1, "First?", 1, 11)]);
        let thread = store.thread(1).await.unwrap().unwrap();
        assert_eq!(thread.runs.len(), 1);
        assert_eq!((thread.runs[0].id, thread.runs[0].thread_id), (1, 1));
        assert_eq!(thread.runs[0].turn, None);

        let started = store
            .start_run(&super::super::NewRun {
                thread: None,
                question: "Third?",
                method: "llm-only",
                params: &serde_json::json!({}),
                model: &serde_json::json!({}),
            })
            .await
            .unwrap()
            .unwrap();
        assert_eq!((started.run, started.thread), (3, 3));
        assert!(store.delete_run(3).await.unwrap());
        assert!(
            store.thread(3).await.unwrap().is_none(),
            "an emptied thread goes"
        );
        assert!(store.delete_thread(1).await.unwrap());
        assert!(store.thread(1).await.unwrap().is_none());
        assert_eq!(store.threads(10).await.unwrap().len(), 1);
    }
}
