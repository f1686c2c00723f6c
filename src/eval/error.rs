//! Why an evaluation could not run. Input mistakes (a malformed line, a bad
//! method spec) name the file and line or the spec, so they can be fixed
//! without reading code; a question that fails to answer is not an error
//! here but a row of the results.

use std::path::PathBuf;

use crate::methods::MethodError;

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}: {message}", path.display())]
    BadLine {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{} holds no questions", .0.display())]
    NoQuestions(PathBuf),
    #[error("method spec `{spec}`: {message}")]
    BadSpec { spec: String, message: String },
    #[error("method spec `{spec}`: {source}")]
    Method { spec: String, source: MethodError },
    #[error(transparent)]
    Engine(#[from] crate::Error),
}

pub type Result<T> = std::result::Result<T, EvalError>;
