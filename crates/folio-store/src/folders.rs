//! Watched roots. Removing a folder removes its documents and, through the
//! cascades and triggers in the schema, their nodes, chunks, vectors and FTS rows.

use serde::Serialize;

use super::{now_ms, Result, Store};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Folder {
    pub id: i64,
    pub path: String,
}

/// A watched root with how much of it is indexed and how much failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct FolderSummary {
    pub id: i64,
    pub path: String,
    pub documents: i64,
    pub errors: i64,
    /// Gone from the disk (an unmounted drive, a moved folder): its
    /// documents are kept until it is back or removed. The store cannot
    /// know; the engine fills it in.
    pub missing: bool,
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

    pub async fn folder_summaries(&self) -> Result<Vec<FolderSummary>> {
        let rows: Vec<(i64, String, i64, i64)> = sqlx::query_as(
            "SELECT f.id, f.path, COALESCE(SUM(d.status = 'indexed'), 0), COALESCE(SUM(d.status = 'error'), 0) \
             FROM folders f LEFT JOIN documents d ON d.folder_id = f.id GROUP BY f.id ORDER BY f.path",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(id, path, documents, errors)| FolderSummary {
                id,
                path,
                documents,
                errors,
                missing: false,
            })
            .collect())
    }

    /// Returns whether a folder was registered under that path.
    pub async fn remove_folder(&self, path: &str) -> Result<bool> {
        let mut tx = self.begin_write().await?;
        let done = sqlx::query("DELETE FROM folders WHERE path = ?")
            .bind(path)
            .execute(&mut *tx)
            .await?;
        super::vectors::bump_vectors_version(&mut tx).await?;
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }
}
