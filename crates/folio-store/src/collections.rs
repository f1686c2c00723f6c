//! Collections: named, saved sets of folders and tags that a question can
//! be scoped to. A collection keeps folder paths and tags, not documents,
//! so what it holds follows the files: one moved out of its folders, or a
//! note whose tag is taken off, is no longer in it.

use serde::Serialize;

use super::scope::{Scope, ScopeError, MAX_NAME};
use super::{now_ms, Result, Store};
use folio_documents::loaders::vault::normalize_tag;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct Collection {
    pub name: String,
    /// Canonical folder paths, sorted; none for anywhere in the library.
    pub folders: Vec<String>,
    /// Tags (without `#`), sorted: a document must carry one of them, or
    /// one nested under one; none for any document in its folders.
    pub tags: Vec<String>,
    /// Indexed documents in it now.
    pub documents: i64,
}

/// What a collection names, as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Members {
    pub folders: Vec<String>,
    pub tags: Vec<String>,
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
    /// Every collection by name, with what it names and how many indexed
    /// documents it holds.
    pub async fn collections(&self) -> Result<Vec<Collection>> {
        let mut collections = Vec::new();
        for name in self.collection_names().await? {
            let members = self.collection_members(&name).await?.unwrap_or_default();
            collections.push(self.described(name, members).await?);
        }
        Ok(collections)
    }

    async fn described(&self, name: String, members: Members) -> Result<Collection> {
        let documents = self
            .documents_in(&members.folders, &Scope::default(), &members.tags)
            .await?
            .len() as i64;
        Ok(Collection {
            name,
            folders: members.folders,
            tags: members.tags,
            documents,
        })
    }

    pub async fn collection_names(&self) -> Result<Vec<String>> {
        Ok(
            sqlx::query_scalar("SELECT name FROM collections ORDER BY name COLLATE NOCASE")
                .fetch_all(&self.pool)
                .await?,
        )
    }

    /// The folders and tags of collection `name`; `None` if there is no
    /// such collection.
    pub(crate) async fn collection_members(&self, name: &str) -> Result<Option<Members>> {
        let Some(id): Option<i64> = sqlx::query_scalar("SELECT id FROM collections WHERE name = ?")
            .bind(name.trim())
            .fetch_optional(&self.pool)
            .await?
        else {
            return Ok(None);
        };
        let folders = sqlx::query_scalar(
            "SELECT path FROM collection_folders WHERE collection_id = ? ORDER BY path",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        let tags = sqlx::query_scalar(
            "SELECT tag FROM collection_tags WHERE collection_id = ? ORDER BY tag",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        Ok(Some(Members { folders, tags }))
    }

    /// Creates collection `name`, or replaces what it names if it exists.
    /// Each folder must hold indexed documents now, and each tag be carried
    /// by one, so a typo is caught when the collection is saved rather than
    /// when it is used.
    pub async fn save_collection(
        &self,
        name: &str,
        folders: &[String],
        tags: &[String],
    ) -> std::result::Result<Collection, ScopeError> {
        let name = checked_name(name)?;
        let mut folders: Vec<String> = folders
            .iter()
            .map(|f| f.trim_end_matches('/').to_string())
            .filter(|f| !f.is_empty())
            .collect();
        folders.sort();
        folders.dedup();
        let mut tags = tags
            .iter()
            .filter(|t| !t.trim().is_empty())
            .map(|t| normalize_tag(t).ok_or_else(|| ScopeError::BadTag(t.trim().to_string())))
            .collect::<std::result::Result<Vec<String>, _>>()?;
        tags.sort();
        tags.dedup();
        if folders.is_empty() && tags.is_empty() {
            return Err(ScopeError::Empty);
        }
        for folder in &folders {
            if self.indexed_in(folder).await? == 0 {
                return Err(ScopeError::NotIndexed(folder.clone()));
            }
        }
        for tag in &tags {
            let tagged = Scope {
                tags: vec![tag.clone()],
                ..Scope::default()
            };
            if self.documents_in(&[], &tagged, &[]).await?.is_empty() {
                return Err(ScopeError::UnknownTag(tag.clone()));
            }
        }
        let members = Members { folders, tags };
        self.write_collection(name, &members).await?;
        Ok(self.described(name.to_string(), members).await?)
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

    async fn write_collection(&self, name: &str, members: &Members) -> Result<()> {
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
        for table in ["collection_folders", "collection_tags"] {
            sqlx::query(&format!("DELETE FROM {table} WHERE collection_id = ?"))
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        for folder in &members.folders {
            sqlx::query("INSERT INTO collection_folders(collection_id, path) VALUES (?, ?)")
                .bind(id)
                .bind(folder)
                .execute(&mut *tx)
                .await?;
        }
        for tag in &members.tags {
            sqlx::query("INSERT INTO collection_tags(collection_id, tag) VALUES (?, ?)")
                .bind(id)
                .bind(tag)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}
