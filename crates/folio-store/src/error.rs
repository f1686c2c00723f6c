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
    #[error(
        "the index at {0} cannot be written: its folder is read-only, or not yours. Make it \
         writable, or point --data-dir at another folder; nothing in it was changed"
    )]
    ReadOnly(PathBuf),
    /// A write refused after the index was opened: the folder became
    /// read-only under a running process.
    #[error(
        "the index cannot be written any more: its folder became read-only. Make it writable \
         again, then run the same command (everything already indexed is kept)"
    )]
    BecameReadOnly,
    #[error("index query failed: {0}")]
    Sql(sqlx::Error),
    #[error("stored data is inconsistent: {0}")]
    Corrupt(String),
}

impl From<sqlx::Error> for StoreError {
    /// A full disk and a folder that became read-only are the store
    /// failures a person can fix on the spot, so they get words of their
    /// own instead of SQLite's codes 13 and 8.
    fn from(e: sqlx::Error) -> StoreError {
        let code = match &e {
            sqlx::Error::Database(db) => db.code().map(|c| c.into_owned()),
            _ => None,
        };
        match (&e, code.as_deref()) {
            (_, Some(SQLITE_FULL)) => StoreError::DiskFull,
            (sqlx::Error::Io(io), _) if io.kind() == std::io::ErrorKind::StorageFull => {
                StoreError::DiskFull
            }
            (_, Some(SQLITE_READONLY)) => StoreError::BecameReadOnly,
            (sqlx::Error::Io(io), _) if io.kind() == std::io::ErrorKind::ReadOnlyFilesystem => {
                StoreError::BecameReadOnly
            }
            _ => StoreError::Sql(e),
        }
    }
}

/// SQLite's result code for "database or disk is full".
const SQLITE_FULL: &str = "13";
/// SQLite's result code for "attempt to write a readonly database" (and
/// its extended codes, which SQLite reports as the primary one here).
const SQLITE_READONLY: &str = "8";

pub type Result<T> = std::result::Result<T, StoreError>;

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use sqlx::sqlite::SqliteConnectOptions;
    use sqlx::ConnectOptions;

    use super::*;

    /// A write SQLite refuses as read-only (what a folder remounted
    /// read-only under a running process gives) gets its own words.
    #[tokio::test]
    async fn a_write_refused_as_read_only_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite");
        let mut writer = SqliteConnectOptions::from_str("sqlite:")
            .unwrap()
            .filename(&path)
            .create_if_missing(true)
            .connect()
            .await
            .unwrap();
        sqlx::query("CREATE TABLE t(x)")
            .execute(&mut writer)
            .await
            .unwrap();
        let mut reader = SqliteConnectOptions::from_str("sqlite:")
            .unwrap()
            .filename(&path)
            .read_only(true)
            .connect()
            .await
            .unwrap();
        let refused = sqlx::query("INSERT INTO t VALUES (1)")
            .execute(&mut reader)
            .await
            .unwrap_err();
        let error = StoreError::from(refused);
        assert!(matches!(error, StoreError::BecameReadOnly), "{error:?}");
        assert!(error.to_string().contains("its folder became read-only"));
    }
}
