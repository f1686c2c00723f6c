//! Watched roots. Removing a folder removes its documents and, through the
//! cascades and triggers in the schema, their nodes, chunks, vectors and FTS rows.

use serde::Serialize;

use super::{now_ms, Result, Store};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Folder {
    pub id: i64,
    pub path: String,
}

impl Store {
    /// Registers `path` (already canonical) and returns its id; adding a
    /// folder twice is harmless.
    pub async fn add_folder(&self, path: &str) -> Result<i64> {
        sqlx::query(
            "INSERT INTO folders(path, added_at) VALUES (?, ?) ON CONFLICT(path) DO NOTHING",
        )
        .bind(path)
        .bind(now_ms())
        .execute(&self.pool)
        .await?;
        Ok(sqlx::query_scalar("SELECT id FROM folders WHERE path = ?")
            .bind(path)
            .fetch_one(&self.pool)
            .await?)
    }

    pub async fn folders(&self) -> Result<Vec<Folder>> {
        let rows: Vec<(i64, String)> = sqlx::query_as("SELECT id, path FROM folders ORDER BY path")
            .fetch_all(&self.pool)
            .await?;
        Ok(rows
            .into_iter()
            .map(|(id, path)| Folder { id, path })
            .collect())
    }

    /// Returns whether a folder was registered under that path.
    pub async fn remove_folder(&self, path: &str) -> Result<bool> {
        let mut tx = self.pool.begin().await?;
        let done = sqlx::query("DELETE FROM folders WHERE path = ?")
            .bind(path)
            .execute(&mut *tx)
            .await?;
        super::vectors::bump_vectors_version(&mut tx).await?;
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }
}
