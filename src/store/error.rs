//! Store failures. They are internal faults from the user's point of view
//! (disk full, corrupt database); user mistakes are caught before the store.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the index at {path}: {source}")]
    Open { path: PathBuf, source: sqlx::Error },
    #[error("cannot migrate the index schema: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("index query failed: {0}")]
    Sql(#[from] sqlx::Error),
    #[error("stored data is inconsistent: {0}")]
    Corrupt(String),
}

pub type Result<T> = std::result::Result<T, StoreError>;
