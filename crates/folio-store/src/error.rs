//! Store failures. They are internal faults from the user's point of view
//! (disk full, corrupt database); user mistakes are caught before the store.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the index at {path}: {source}")]
    Open { path: PathBuf, source: sqlx::Error },
    #[error("cannot migrate the index schema: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error(
        "the disk holding the index is full: free some space, then run the same command \
         again (everything already indexed is kept)"
    )]
    DiskFull,
    #[error("index query failed: {0}")]
    Sql(sqlx::Error),
    #[error("stored data is inconsistent: {0}")]
    Corrupt(String),
}

impl From<sqlx::Error> for StoreError {
    /// A full disk is the one store failure a person can fix on the spot,
    /// so it gets words of its own instead of SQLite's code 13.
    fn from(e: sqlx::Error) -> StoreError {
        let full = match &e {
            sqlx::Error::Database(db) => db.code().as_deref() == Some(SQLITE_FULL),
            sqlx::Error::Io(io) => io.kind() == std::io::ErrorKind::StorageFull,
            _ => false,
        };
        if full {
            StoreError::DiskFull
        } else {
            StoreError::Sql(e)
        }
    }
}

/// SQLite's result code for "database or disk is full".
const SQLITE_FULL: &str = "13";

pub type Result<T> = std::result::Result<T, StoreError>;
