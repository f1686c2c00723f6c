//! Embedding failures: a missing or broken model kit, or an embedding server
//! that is down, refuses or answers nonsense, is the user's to fix (the
//! message says how); inference errors are internal.

use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("{what} not found at {path}; run scripts/setup.sh to fetch the offline model kit, or point FOLIO_MODELS_DIR at it")]
    MissingFile { what: &'static str, path: PathBuf },
    #[error("cannot load ONNX Runtime from {path}: {reason}")]
    Runtime { path: PathBuf, reason: String },
    #[error("cannot load the embedding model: {0}")]
    Model(String),
    #[error("the embedding model at {path} is damaged ({reason}): run scripts/setup.sh to place the kit's again, or point [embedding] model_dir at a good copy; nothing in the library was changed")]
    Damaged { path: PathBuf, reason: String },
    #[error("embedding failed: {0}")]
    Inference(String),
    #[error("{0}")]
    Config(String),
    #[error("the embedding server at {url} cannot be reached ({reason}); start it, or change [embedding] base_url in folio.toml or Settings")]
    ServerDown { url: String, reason: String },
    #[error("the embedding server at {url} answered {status}: {message}")]
    ServerAnswered {
        url: String,
        status: u16,
        message: String,
    },
    #[error("the embedding server at {url} sent a reply that is not embeddings: {reason}")]
    ServerReply { url: String, reason: String },
    #[error("the embedding server at {url} did not answer within {limit:?}; raise [embedding] timeout_secs or lower batch")]
    ServerTimeout { url: String, limit: Duration },
}

pub type Result<T> = std::result::Result<T, EmbedError>;
