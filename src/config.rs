//! Where Folio keeps its index and finds its models, and the limits it applies
//! to input. Values come from the command line or `FOLIO_*` variables, with
//! defaults that work from a checkout after `scripts/setup.sh`.

use std::path::{Path, PathBuf};

use crate::embed::EmbeddingModelFiles;
use crate::ingest::chunker::ChunkSizes;
use crate::ingest::prepare::Limits;

pub const DEFAULT_MAX_FILE_SIZE: u64 = 64 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct Config {
    pub data_dir: PathBuf,
    pub models_dir: PathBuf,
    pub max_file_size: u64,
}

impl Config {
    /// `data_dir` falls back to `FOLIO_DATA_DIR`'s caller (clap reads the
    /// variable) and then to the platform data directory.
    pub fn new(data_dir: Option<PathBuf>, max_file_size: Option<u64>) -> Config {
        let data_dir = data_dir.unwrap_or_else(|| {
            dirs::data_dir().unwrap_or_else(|| PathBuf::from(".")).join("folio")
        });
        Config {
            data_dir,
            models_dir: default_models_dir(),
            max_file_size: max_file_size.unwrap_or(DEFAULT_MAX_FILE_SIZE),
        }
    }

    pub fn database_path(&self) -> PathBuf {
        self.data_dir.join("folio.sqlite")
    }

    pub fn embedding_files(&self) -> EmbeddingModelFiles {
        EmbeddingModelFiles::in_kit(&self.models_dir)
    }

    pub fn limits(&self) -> Limits {
        Limits { max_file_size: self.max_file_size, chunk_sizes: ChunkSizes::default() }
    }
}

/// `FOLIO_MODELS_DIR`, else the kit that `scripts/setup.sh` fetched into this
/// checkout's `models/`.
pub fn default_models_dir() -> PathBuf {
    std::env::var_os("FOLIO_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("models"))
}
