//! Collections: named, saved sets of folders that a question can be scoped
//! to. A collection keeps folder paths, not documents, so what it holds
//! follows the files: one moved out of its folders is no longer in it.

use serde::Serialize;

use super::scope::{Scope, ScopeError, MAX_NAME};
use super::{now_ms, Result, Store};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct Collection {
    pub name: String,
    /// Canonical folder paths, sorted.
    pub folders: Vec<String>,
    /// Indexed documents in its folders now.
    pub documents: i64,
}

/// The name as stored: trimmed, 1 to [`MAX_NAME`] characters, no control
/// characters (it is shown in lists and typed after `--collection`).
fn checked_name(name: &str) -> std::result::Result<&str, ScopeError> {
    let name = name.trim();
    let length = name.chars().count();
    if length == 0 || length > MAX_NAME || name.chars().any(char::is_control) {
        return Err(ScopeError::BadName);
    }
    Ok(name)
}

impl Store {
    /// Every collection by name, with its folders and how many indexed
    /// documents they hold.
    pub async fn collections(&self) -> Result<Vec<Collection>> {
        let mut collections = Vec::new();
        for name in self.collection_names().await? {
            let folders = self.collection_folders(&name).await?.unwrap_or_default();
            let documents = self.documents_in(&folders, &Scope::default()).await?.len() as i64;
            collections.push(Collection {
                name,
                folders,
                documents,
            });
        }
        Ok(collections)
    }

    pub async fn collection_names(&self) -> Result<Vec<String>> {
        Ok(
            sqlx::query_scalar("SELECT name FROM collections ORDER BY name COLLATE NOCASE")
                .fetch_all(&self.pool)
                .await?,
        )
    }

    /// The folders of collection `name`; `None` if there is no such collection.
    pub async fn collection_folders(&self, name: &str) -> Result<Option<Vec<String>>> {
        let Some(id): Option<i64> = sqlx::query_scalar("SELECT id FROM collections WHERE name = ?")
            .bind(name.trim())
            .fetch_optional(&self.pool)
            .await?
        else {
            return Ok(None);
        };
        Ok(Some(
            sqlx::query_scalar(
                "SELECT path FROM collection_folders WHERE collection_id = ? ORDER BY path",
            )
            .bind(id)
            .fetch_all(&self.pool)
            .await?,
        ))
    }

    /// Creates collection `name`, or replaces its folders if it exists.
    /// Each folder must hold indexed documents now, so a typo is caught
    /// when the collection is saved rather than when it is used.
    pub async fn save_collection(
        &self,
        name: &str,
        folders: &[String],
    ) -> std::result::Result<Collection, ScopeError> {
        let name = checked_name(name)?;
        let mut folders: Vec<String> = folders
            .iter()
            .map(|f| f.trim_end_matches('/').to_string())
            .filter(|f| !f.is_empty())
            .collect();
        folders.sort();
        folders.dedup();
        if folders.is_empty() {
            return Err(ScopeError::NoFolders);
        }
        for folder in &folders {
            if self.indexed_in(folder).await? == 0 {
                return Err(ScopeError::NotIndexed(folder.clone()));
            }
        }
        self.write_collection(name, &folders).await?;
        let documents = self.documents_in(&folders, &Scope::default()).await?.len() as i64;
        Ok(Collection {
            name: name.to_string(),
            folders,
            documents,
        })
    }

    /// Returns whether there was a collection of that name.
    pub async fn delete_collection(&self, name: &str) -> Result<bool> {
        let mut tx = self.begin_write().await?;
        let done = sqlx::query("DELETE FROM collections WHERE name = ?")
            .bind(name.trim())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }

    async fn write_collection(&self, name: &str, folders: &[String]) -> Result<()> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO collections(name, created_at) VALUES (?, ?) ON CONFLICT(name) DO NOTHING",
        )
        .bind(name)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        let id: i64 = sqlx::query_scalar("SELECT id FROM collections WHERE name = ?")
            .bind(name)
            .fetch_one(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM collection_folders WHERE collection_id = ?")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        for folder in folders {
            sqlx::query("INSERT INTO collection_folders(collection_id, path) VALUES (?, ?)")
                .bind(id)
                .bind(folder)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}
