//! Why building the index stopped. The engine reports each kind as it
//! reports the same failure anywhere else (its `From<IndexError>`).

use folio_embed::EmbedError;
use folio_llm::prompts::PromptError;
use folio_llm::LlmError;
use folio_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// A build option out of range, in words the person can act on.
    #[error("{0}")]
    BadOption(String),
    #[error("background task failed: {0}")]
    Task(String),
    /// The reading log could not be written, so a file that crashed Folio
    /// could not be told apart on the next start: nothing is read.
    #[error("cannot record which files are being read in {dir}: {source}; check that the data directory is writable and has space")]
    ReadingLog {
        dir: std::path::PathBuf,
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, IndexError>;
