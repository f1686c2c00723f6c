//! What measurements read about the database itself (where the bytes went,
//! how chunk ids are laid out), and a checkpoint that folds the WAL back into
//! the file so its size can be measured.

use super::{Result, Store};

impl Store {
    /// Copies every WAL page into the database file and truncates the WAL.
    /// `false` when a reader held the WAL and the checkpoint could not finish.
    pub async fn checkpoint_wal(&self) -> Result<bool> {
        let (busy, _, _): (i64, i64, i64) = sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)")
            .fetch_one(&self.pool)
            .await?;
        Ok(busy == 0)
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
