//! The engine's error type. User mistakes (a path that does not exist, a
//! document that is not indexed) are kept apart from internal faults so the
//! edges can word them differently.

use std::path::PathBuf;

use crate::config::ConfigError;
use crate::export::ExportError;
use folio_embed::EmbedError;
use folio_llm::calibration::CalibrationError;
use folio_llm::discovery::ChoiceError;
use folio_llm::prompts::PromptError;
use folio_llm::LlmError;
use folio_methods::crp_rag::calibrate::CalibrateError;
use folio_methods::MethodError;
use folio_retrieve::RetrieveError;
use folio_store::{ScopeError, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0} does not exist")]
    NotFound(PathBuf),
    #[error("{0} is not indexed; add it (or its folder) with `folio add`")]
    NotIndexed(PathBuf),
    #[error("{0} is not a watched folder; `folio status` lists them")]
    NotWatched(PathBuf),
    #[error("{0} is not indexed as a PDF, so it has no pages to show; open its text instead")]
    NotPdf(PathBuf),
    #[error("{path} is now {:.1} MiB, over the {:.1} MiB file-size limit; raise it with --max-file-size or FOLIO_MAX_FILE_SIZE", *.size as f64 / 1048576.0, *.limit as f64 / 1048576.0)]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    #[error("cannot create the data directory {path}: {source}")]
    DataDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error("file watching failed: {0}")]
    Watch(String),
    #[error("background task failed: {0}")]
    Task(String),
    #[error("cannot record which files are being read in {dir}: {source}; check that the data directory is writable and has space")]
    ReadingLog {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} is not in a watched folder; `folio status` lists them")]
    NotInLibrary(PathBuf),
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error(transparent)]
    Prompt(#[from] PromptError),
    #[error(transparent)]
    Method(#[from] MethodError),
    #[error("there is no run {0}; `folio runs` lists them")]
    RunNotFound(i64),
    #[error("there is no indexed document {0}")]
    DocumentNotFound(i64),
    #[error("there is no passage {0}; it may have been re-indexed since it was cited")]
    PassageNotFound(i64),
    #[error("run {0} is still being answered; cancel it first")]
    RunInProgress(i64),
    #[error("there is no unfinished job {0}; `folio status` lists the jobs")]
    JobNotFound(i64),
    #[error("job {job} is running in process {pid}; wait for it to end, or cancel it first")]
    JobRunning { job: i64, pid: i64 },
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error("{0}")]
    BadOption(String),
    #[error("the graph walk failed: {0}")]
    Walk(#[from] folio_retrieve::ppr::PprError),
    #[error(transparent)]
    Scope(#[from] ScopeError),
    #[error(transparent)]
    Choice(#[from] ChoiceError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Calibrate(#[from] CalibrateError),
    #[error(transparent)]
    Calibration(#[from] CalibrationError),
}

impl Error {
    /// Whether the user can fix this by changing what they asked for.
    pub fn is_user_error(&self) -> bool {
        match self {
            Error::NotFound(_)
            | Error::NotIndexed(_)
            | Error::NotWatched(_)
            | Error::NotInLibrary(_)
            | Error::NotPdf(_)
            | Error::TooLarge { .. }
            | Error::RunNotFound(_)
            | Error::DocumentNotFound(_)
            | Error::PassageNotFound(_)
            | Error::RunInProgress(_)
            | Error::JobNotFound(_)
            | Error::JobRunning { .. }
            | Error::BadOption(_) => true,
            Error::Export(e) => !matches!(e, ExportError::Write { .. }),
            Error::Method(e) => e.is_user_error(),
            Error::Scope(e) => e.is_user_error(),
            Error::Choice(_) | Error::Calibrate(CalibrateError::NoLogprobs { .. }) => true,
            _ => false,
        }
    }
}

/// An indexing or graph-building failure is reported as the same failure
/// anywhere else in the engine.
impl From<folio_index::IndexError> for Error {
    fn from(e: folio_index::IndexError) -> Error {
        use folio_index::IndexError;
        match e {
            IndexError::Store(e) => Error::Store(e),
            IndexError::Embed(e) => Error::Embed(e),
            IndexError::Llm(e) => Error::Llm(e),
            IndexError::Prompt(e) => Error::Prompt(e),
            IndexError::BadOption(e) => Error::BadOption(e),
            IndexError::Task(e) => Error::Task(e),
            IndexError::ReadingLog { dir, source } => Error::ReadingLog { dir, source },
        }
    }
}

/// A retrieval failure keeps the words and the kind it had before the
/// retrieval service existed, so the CLI and the app report it the same way.
impl From<RetrieveError> for Error {
    fn from(e: RetrieveError) -> Error {
        match e {
            RetrieveError::Store(e) => Error::Store(e),
            RetrieveError::Embed(e) => Error::Embed(e),
            RetrieveError::Walk(e) => Error::Walk(e),
            RetrieveError::Task(e) => Error::Task(e),
            RetrieveError::Ann(e) => Error::Task(e.to_string()),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
