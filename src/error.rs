//! The engine's error type. User mistakes (a path that does not exist, a
//! document that is not indexed) are kept apart from internal faults so the
//! edges can word them differently.

use std::path::PathBuf;

use crate::embed::EmbedError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0} does not exist")]
    NotFound(PathBuf),
    #[error("{0} is not indexed; add it (or its folder) with `folio add`")]
    NotIndexed(PathBuf),
    #[error("{0} is not a watched folder; `folio status` lists them")]
    NotWatched(PathBuf),
    #[error("cannot create the data directory {path}: {source}")]
    DataDir { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error("file watching failed: {0}")]
    Watch(String),
    #[error("background task failed: {0}")]
    Task(String),
}

impl Error {
    /// Whether the user can fix this by changing what they asked for.
    pub fn is_user_error(&self) -> bool {
        matches!(self, Error::NotFound(_) | Error::NotIndexed(_) | Error::NotWatched(_))
    }
}

pub type Result<T> = std::result::Result<T, Error>;
