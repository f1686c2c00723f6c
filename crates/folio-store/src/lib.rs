//! The SQLite index: one database file in WAL mode holding folders, documents,
//! structure trees, chunks, their vectors (sqlite-vec) and BM25 index (FTS5),
//! the information-gain graph, and persisted jobs. Writers commit whole
//! documents only, so a crash never leaves a half-indexed document behind.

mod collections;
mod diagnostics;
mod documents;
mod error;
mod folders;
mod fts;
mod fts_rank;
mod gain;
mod jobs;
mod migrations;
mod notes;
pub mod quantize;
mod rows;
mod runs;
mod scope;
mod settings;
mod summaries;
mod threads;
mod vector_log;
mod vectors;

use std::path::Path;
use std::str::FromStr;
use std::sync::Once;
use std::time::Duration;

use folio_core::dir;
use sqlx::migrate::MigrateError;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{Sqlite, Transaction};

pub use collections::Collection;
pub use diagnostics::sqlite_heap_bytes;
pub use documents::{
    set_aside_error, BatchProgress, ChunkRecord, ChunkWrite, DocumentPage, DocumentRecord,
    DocumentWrite, IndexCounts, NodeRecord, PassageBoxes, StatNow, StoredChunk,
};
pub use error::{Result, StoreError};
pub use folders::{Folder, FolderSummary};
pub use fts::CountedQuery;
pub use gain::{BuildCost, GainEdge, NodeScoring, NodeWritten, RubricStatus};
pub use jobs::{Job, JobState};
pub use notes::{Backlink, LinkEnd, LinkedChunk, NoteLinks, OutgoingLink, TagCount};
pub use quantize::to_blob as vector_blob;
pub use runs::{CutOff, LlmCallRow, NewRun, RunOutcome, RunRecord, RunStatus, StartedRun};
pub use scope::{place, Day, DocumentSet, NotADay, Scope, ScopeError};
pub use threads::{
    JoinedBecause, LeftOut, LeftOutReason, Placement, Rewrite, Thread, ThreadSummary, Turn,
};
pub use vector_log::{LogPosition, VectorChanges};
pub use vectors::VectorSpace;

#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
    /// What BM25's term counting has found, shared by the store's clones.
    term_counts: std::sync::Arc<fts::TermCounts>,
}

static REGISTER_EXTENSIONS: Once = Once::new();

/// sqlite-vec is linked statically and Folio's FTS5 ranking function
/// ([`fts_rank`]) is compiled in; both are registered as auto extensions
/// before the first connection opens, so every pooled connection has them.
fn register_extensions() {
    REGISTER_EXTENSIONS.call_once(|| {
        // SAFETY: both entry points have the signature SQLite expects of an
        // extension entry point; registration happens once, before any
        // connection exists.
        unsafe {
            #[allow(clippy::missing_transmute_annotations)]
            libsqlite3_sys::sqlite3_auto_extension(Some(std::mem::transmute(
                sqlite_vec::sqlite3_vec_init as *const (),
            )));
            libsqlite3_sys::sqlite3_auto_extension(Some(fts_rank::register));
        }
    });
}

/// How often opening an index that another process is creating at the
/// same moment is tried again, and how long apart.
const OPEN_TRIES: u32 = 10;
/// What SQLite may keep in memory in this process, all connections together.
const SQLITE_HEAP_LIMIT_BYTES: u64 = 32 << 20;
/// WAL pages after which a commit checkpoints (see `open_once`).
pub const WAL_AUTOCHECKPOINT_PAGES: u64 = 10_000;
const OPEN_RETRY: Duration = Duration::from_millis(200);

/// Whether opening failed only because another process was creating the
/// same fresh index: SQLite reports its switch to WAL as busy, and sqlx's
/// migrator takes no lock on SQLite, so the loser of the race runs the
/// first migration again and fails with "table already exists" once the
/// winner commits. Trying again sees what the winner made.
fn lost_a_race(e: &StoreError) -> bool {
    match e {
        StoreError::Open {
            source: sqlx::Error::Database(db),
            ..
        } => matches!(db.code().as_deref(), Some("5" | "6")),
        StoreError::Migrate(MigrateError::ExecuteMigration(..) | MigrateError::Execute(_)) => true,
        _ => false,
    }
}

impl Store {
    pub async fn open(path: &Path) -> Result<Store> {
        register_extensions();
        let mut tries = 1;
        loop {
            match Store::open_once(path).await {
                Err(e) if tries < OPEN_TRIES && lost_a_race(&e) => {
                    tries += 1;
                    tokio::time::sleep(OPEN_RETRY).await;
                }
                opened => return opened,
            }
        }
    }

    async fn open_once(path: &Path) -> Result<Store> {
        let open_err = |source| match path.parent().is_some_and(|dir| !dir::writable(dir)) {
            true => StoreError::ReadOnly(path.to_path_buf()),
            false => StoreError::Open {
                path: path.to_path_buf(),
                source,
            },
        };
        let options = SqliteConnectOptions::from_str("sqlite:")
            .map_err(open_err)?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(30))
            .pragma("cache_size", "-32768")
            // Process-wide: SQLite gives back cached pages rather than grow
            // past this, so four connections' caches (32 MiB each) cannot
            // together hold 128 MiB. Serving a 1M-chunk library, SQLite held
            // 107 MB without it (`folio bench scale`, 2026-11-28); a cache
            // miss reads the page from the kernel's cache instead.
            .pragma("soft_heap_limit", SQLITE_HEAP_LIMIT_BYTES.to_string())
            // A checkpoint copies each page the WAL holds once, however
            // many commits rewrote it: checkpointing every 10,000 pages
            // (40 MB of WAL) rather than SQLite's 1,000 took the HotpotQA
            // ingest from 11.5× its input written to about 10.5×.
            .pragma("wal_autocheckpoint", WAL_AUTOCHECKPOINT_PAGES.to_string());
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(open_err)?;
        migrations::migrator().await?.run(&pool).await?;
        Ok(Store {
            pool,
            term_counts: Default::default(),
        })
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// A transaction that writes. It takes the write lock when it begins
    /// (`BEGIN IMMEDIATE`, waiting up to the busy timeout): a deferred one
    /// that reads first must upgrade later, and SQLite refuses that upgrade
    /// at once with SQLITE_BUSY whenever another connection is writing (a
    /// graph build died that way beside an ingestion).
    pub(crate) async fn begin_write(&self) -> Result<Transaction<'static, Sqlite>> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two processes opening one fresh index race through the migrations;
    /// two pools in one process race the same way.
    #[tokio::test(flavor = "multi_thread")]
    async fn stores_opened_at_once_on_a_fresh_index_both_open() {
        for _ in 0..10 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("folio.sqlite");
            let (a, b) = tokio::join!(Store::open(&path), Store::open(&path));
            a.unwrap();
            b.unwrap();
        }
    }
}
