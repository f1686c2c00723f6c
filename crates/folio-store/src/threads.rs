//! Threads: conversations made of runs. A question asked on its own starts
//! a thread; a follow-up joins one. A turn's place in its thread is its run
//! id's order, and how a follow-up was asked (its standalone rewrite, which
//! earlier turns the method saw) is kept with the run as a [`Turn`].

use serde::{Deserialize, Serialize};

use super::rows::from_row;
use super::runs::{run_from_row, RunRow, RUN_COLUMNS};
use super::{now_ms, Result, RunRecord, Store};

/// How a follow-up was asked. A first turn has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct Turn {
    /// The earlier turns the method was shown, oldest first, by run id.
    pub history: Vec<i64>,
    /// Earlier turns it was not shown, and why.
    pub left_out: Vec<LeftOut>,
    /// The follow-up as retrieval and the method read it.
    pub rewrite: Rewrite,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
pub struct LeftOut {
    pub run: i64,
    pub reason: LeftOutReason,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
#[serde(rename_all = "snake_case")]
pub enum LeftOutReason {
    /// The turn is still being answered: there is no answer to show yet.
    /// (A turn that failed, was cut off or stopped gives its question and
    /// whatever it wrote.)
    NoAnswer,
    /// Showing it would have passed the history's token budget; older
    /// turns go first.
    OverBudget,
}

/// What became of the follow-up before retrieval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Rewrite {
    /// No earlier turn had an answer, so the follow-up was used as asked.
    NotNeeded,
    /// The model rewrote it into a question that stands on its own.
    Standalone { query: String },
    /// The question before the follow-up and the follow-up, searched
    /// together: the model's rewrite lost the follow-up's point, or the
    /// request asked for no model rewrite but this.
    Joined {
        query: String,
        /// Runs stored before there were several reasons had this one.
        #[serde(default)]
        because: JoinedBecause,
    },
    /// The model's reply was unusable; the follow-up was used as asked.
    FellBack { reason: String },
    /// The request asked for no rewrite (an evaluation's baseline); the
    /// follow-up was used as asked.
    Off,
}

/// Why a follow-up was searched joined to the question before it.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    ts_rs::TS,
    schemars::JsonSchema,
)]
#[ts(export)]
#[serde(rename_all = "snake_case")]
pub enum JoinedBecause {
    /// The rewrite was an earlier question again, word for word.
    #[default]
    RepeatedEarlier,
    /// The rewrite left out words the follow-up asks about.
    DroppedWords,
    /// The rewrite was the follow-up again, its "it" or "that" unresolved.
    Unresolved,
    /// The request asked for the two joined (an evaluation's baseline).
    Asked,
}

impl JoinedBecause {
    /// Why, in words, for the CLI, the app's note and exports.
    pub fn explained(self) -> &'static str {
        match self {
            JoinedBecause::RepeatedEarlier => "the rewrite only repeated an earlier question",
            JoinedBecause::DroppedWords => "the rewrite left out words the follow-up asks about",
            JoinedBecause::Unresolved => {
                "the rewrite was the follow-up again, with what it refers to unresolved"
            }
            JoinedBecause::Asked => "joining was asked for instead of a rewrite",
        }
    }
}

impl Rewrite {
    /// The question the follow-up was searched and answered as, when the
    /// model's reply gave one.
    pub fn query(&self) -> Option<&str> {
        match self {
            Rewrite::Standalone { query } | Rewrite::Joined { query, .. } => Some(query),
            Rewrite::NotNeeded | Rewrite::FellBack { .. } | Rewrite::Off => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct ThreadSummary {
    pub id: i64,
    /// The first turn's question.
    pub title: String,
    pub turns: i64,
    /// The thread this one branched from: its turns up to the branch point
    /// come before this thread's own.
    pub forked_from: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// Where a new run goes: a thread of its own, the end of a thread, or a
/// new branch of one (Compare's follow-ups: one per method, each with the
/// same earlier turns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    NewThread,
    FollowUp(i64),
    Branch(i64),
}

/// A thread with every turn, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS, schemars::JsonSchema)]
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
    forked_from: Option<i64>,
    forked_after: Option<i64>,
    created_at: i64,
    updated_at: i64,
}

from_row!(SummaryRow {
    id,
    title,
    turns,
    forked_from,
    forked_after,
    created_at,
    updated_at
});

const SUMMARY_SQL: &str = "SELECT t.id, t.title, t.forked_from, t.forked_after, t.created_at, \
     t.updated_at, (SELECT count(*) FROM runs r WHERE r.thread_id = t.id) AS turns FROM threads t";

fn summary(r: &SummaryRow) -> ThreadSummary {
    ThreadSummary {
        id: r.id,
        title: r.title.clone(),
        turns: r.turns,
        forked_from: r.forked_from,
        created_at: r.created_at,
        updated_at: r.updated_at,
    }
}

impl Store {
    /// The most recently active threads first; with `text`, only threads
    /// with a turn whose question or answer contains it (case-insensitive
    /// for ASCII).
    pub async fn threads(&self, text: Option<&str>, limit: i64) -> Result<Vec<ThreadSummary>> {
        let sql = format!(
            "{SUMMARY_SQL} WHERE ?1 IS NULL OR EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = t.id \
             AND (instr(lower(r.question), lower(?1)) > 0 \
             OR instr(lower(COALESCE(r.answer, '')), lower(?1)) > 0)) \
             ORDER BY t.updated_at DESC, t.id DESC LIMIT ?2"
        );
        let text = text.map(str::trim).filter(|t| !t.is_empty());
        let rows: Vec<SummaryRow> = sqlx::query_as(&sql)
            .bind(text)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.iter().map(summary).collect())
    }

    /// The thread with its own turns, oldest first; `None` if there is none.
    pub async fn thread(&self, id: i64) -> Result<Option<Thread>> {
        Ok(self.thread_row(id).await?.map(|(row, runs)| Thread {
            summary: summary(&row),
            runs,
        }))
    }

    /// Every turn a new turn of thread `id` follows, oldest first: for a
    /// branch, the turns it branched after, then its own. `None` if there
    /// is no such thread.
    pub async fn conversation(&self, id: i64) -> Result<Option<Vec<RunRecord>>> {
        let Some((row, mut runs)) = self.thread_row(id).await? else {
            return Ok(None);
        };
        // A branch always names an older thread, so this ends.
        let (mut parent, mut after) = (row.forked_from, row.forked_after);
        while let Some(parent_id) = parent {
            let Some((row, parent_runs)) = self.thread_row(parent_id).await? else {
                break;
            };
            let mut before: Vec<RunRecord> = parent_runs
                .into_iter()
                .filter(|r| after.is_some_and(|after| r.id <= after))
                .collect();
            before.append(&mut runs);
            runs = before;
            (parent, after) = (row.forked_from, row.forked_after);
        }
        Ok(Some(runs))
    }

    /// Thread `id` as history shows it and a new turn reads it: its own
    /// summary, and every turn of its [`Store::conversation`]. `None` if
    /// there is no such thread.
    pub async fn whole_thread(&self, id: i64) -> Result<Option<Thread>> {
        let Some((row, _)) = self.thread_row(id).await? else {
            return Ok(None);
        };
        Ok(self.conversation(id).await?.map(|runs| Thread {
            summary: summary(&row),
            runs,
        }))
    }

    async fn thread_row(&self, id: i64) -> Result<Option<(SummaryRow, Vec<RunRecord>)>> {
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
        Ok(Some((row, runs.into_iter().map(run_from_row).collect())))
    }

    /// The thread a new run goes to, created unless the run follows up;
    /// `None` when the thread it follows up or branches from does not exist.
    pub(super) async fn place(
        tx: &mut sqlx::SqliteConnection,
        placement: Placement,
        title: &str,
    ) -> Result<Option<i64>> {
        let now = now_ms();
        let (forked_from, forked_after) = match placement {
            Placement::FollowUp(id) => {
                let touched = sqlx::query("UPDATE threads SET updated_at = ? WHERE id = ?")
                    .bind(now)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                return Ok((touched > 0).then_some(id));
            }
            Placement::NewThread => (None, None),
            Placement::Branch(parent) => {
                let last: Option<(Option<i64>,)> = sqlx::query_as(
                    "SELECT (SELECT max(id) FROM runs WHERE thread_id = t.id) \
                     FROM threads t WHERE t.id = ?",
                )
                .bind(parent)
                .fetch_optional(&mut *tx)
                .await?;
                match last {
                    Some((after,)) => (Some(parent), after),
                    None => return Ok(None),
                }
            }
        };
        let id = sqlx::query(
            "INSERT INTO threads(title, forked_from, forked_after, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(title)
        .bind(forked_from)
        .bind(forked_after)
        .bind(now)
        .bind(now)
        .execute(&mut *tx)
        .await?
        .last_insert_rowid();
        Ok(Some(id))
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
        let threads = store.threads(None, 10).await.unwrap();
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
                placement: super::Placement::NewThread,
                question: "Third?",
                method: "llm-only",
                scope: &Default::default(),
                params: &serde_json::json!({}),
                model: &serde_json::json!({}),
            })
            .await
            .unwrap()
            .unwrap();
        assert_eq!((started.run, started.thread), (3, 3));
        assert!(store.delete_thread(3).await.unwrap());
        assert!(store.thread(3).await.unwrap().is_none());
        assert!(store.delete_thread(1).await.unwrap());
        assert!(store.thread(1).await.unwrap().is_none());
        assert_eq!(store.threads(None, 10).await.unwrap().len(), 1);
    }
}
