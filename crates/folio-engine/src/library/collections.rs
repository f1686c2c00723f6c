//! Named sets of folders and tags a question can be scoped to, as
//! [`Library::collections`] hands them out.

use std::path::PathBuf;

use super::Library;
use crate::error::Result;
use folio_store::{Collection, ScopeError};

impl Library {
    /// Saved collections of folders and tags.
    pub fn collections(&self) -> Collections<'_> {
        Collections { library: self }
    }
}

/// The collections of one library, as [`Library::collections`] hands them
/// out.
#[derive(Clone, Copy)]
pub struct Collections<'a> {
    library: &'a Library,
}

impl<'a> Collections<'a> {
    /// Every collection, by name.
    pub async fn list(self) -> Result<Vec<Collection>> {
        Ok(self.library.store.collections().await?)
    }

    /// Saves collection `name` as `folders` (each named as
    /// [`Library::place`] names it) and `tags`, replacing what it held.
    pub async fn save(
        self,
        name: &str,
        folders: &[PathBuf],
        tags: &[String],
    ) -> Result<Collection> {
        let folders: Vec<String> = folders.iter().map(|f| Library::place(f)).collect();
        Ok(self
            .library
            .store
            .save_collection(name, &folders, tags)
            .await?)
    }

    pub async fn delete(self, name: &str) -> Result<()> {
        let store = &self.library.store;
        if store.delete_collection(name).await? {
            return Ok(());
        }
        Err(ScopeError::UnknownCollection {
            name: name.to_string(),
            known: store.collection_names().await?,
        }
        .into())
    }
}
