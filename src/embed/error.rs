//! Embedding failures: a missing or broken model kit is the user's to fix
//! (the message says how); inference errors are internal.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("{what} not found at {path}; run scripts/setup.sh to fetch the offline model kit, or point FOLIO_MODELS_DIR at it")]
    MissingFile { what: &'static str, path: PathBuf },
    #[error("cannot load ONNX Runtime from {path}: {reason}")]
    Runtime { path: PathBuf, reason: String },
    #[error("cannot load the embedding model: {0}")]
    Model(String),
    #[error("embedding failed: {0}")]
    Inference(String),
}

pub type Result<T> = std::result::Result<T, EmbedError>;
