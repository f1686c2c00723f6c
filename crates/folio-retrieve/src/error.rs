//! Why retrieval failed: the store, the embedding model, or the graph walk.
//! All are faults of the machine or the index, never of the question.

use folio_embed::EmbedError;
use folio_store::StoreError;

use super::ann::AnnError;
use super::ppr::PprError;

#[derive(Debug, thiserror::Error)]
pub enum RetrieveError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error("the graph walk failed: {0}")]
    Walk(#[from] PprError),
    #[error(transparent)]
    Ann(#[from] AnnError),
    #[error("background task failed: {0}")]
    Task(String),
}

pub type Result<T> = std::result::Result<T, RetrieveError>;
