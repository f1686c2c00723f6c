//! What measurements read about the database itself (where the bytes went,
//! how chunk ids are laid out, what SQLite holds in memory), and a
//! checkpoint that folds the WAL back into the file so its size can be
//! measured.

use super::{Result, Store};

/// Bytes SQLite has allocated in this process (every connection's page
/// cache included), from its own counter.
pub fn sqlite_heap_bytes() -> u64 {
    // SAFETY: a read of SQLite's global allocation counter, which it keeps
    // under its own lock.
    let used = unsafe { libsqlite3_sys::sqlite3_memory_used() };
    used.max(0) as u64
}

impl Store {
    /// Copies every WAL page into the database file and truncates the WAL.
    /// The number of frames the WAL held, or `None` when a reader held the
    /// WAL and the checkpoint could not finish. A TRUNCATE checkpoint
    /// reports zero frames once it has emptied the WAL, so a PASSIVE one
    /// copies and counts them first.
    pub async fn checkpoint_wal(&self) -> Result<Option<u64>> {
        let (_, frames, _): (i64, i64, i64) = sqlx::query_as("PRAGMA wal_checkpoint(PASSIVE)")
            .fetch_one(&self.pool)
            .await?;
        let (busy, _, _): (i64, i64, i64) = sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)")
            .fetch_one(&self.pool)
            .await?;
        Ok((busy == 0).then_some(frames.max(0) as u64))
    }

    /// Bytes of database pages per table and index, largest first.
    pub async fn table_sizes(&self) -> Result<Vec<(String, i64)>> {
        Ok(
            sqlx::query_as("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC")
                .fetch_all(&self.pool)
                .await?,
        )
    }

    /// The smallest and largest chunk id and the number of chunks.
    pub async fn chunk_id_range(&self) -> Result<(i64, i64, i64)> {
        Ok(
            sqlx::query_as("SELECT MIN(id), MAX(id), COUNT(*) FROM chunks")
                .fetch_one(&self.pool)
                .await?,
        )
    }
}
