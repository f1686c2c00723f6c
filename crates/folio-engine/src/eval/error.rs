//! Why an evaluation could not run. Input mistakes (a malformed line, a bad
//! method spec) name the file and line or the spec, so they can be fixed
//! without reading code; a question that fails to answer is not an error
//! here but a row of the results.

use std::path::PathBuf;

use super::manifest::Difference;
use folio_methods::MethodError;

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
    #[error(
        "{} holds another evaluation's results ({}); another --limit or other \
         --methods reuse its answers, anything else needs a new --out, or \
         --fresh to start over",
        out.display(),
        differences.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    Mismatch {
        out: PathBuf,
        differences: Vec<Difference>,
    },
    #[error(
        "{} holds answers but no eval.json saying what they answer (an older \
         folio wrote them); use a new --out, or --fresh to replace them",
        .0.display()
    )]
    NoManifest(PathBuf),
    #[error("{} has no eval.json: not a folder `folio eval --out` wrote", .0.display())]
    NotAnEvaluation(PathBuf),
    #[error(
        "{} is not there yet: the evaluation has not finished; start it again and it goes on where it stopped",
        .0.display()
    )]
    NoSummary(PathBuf),
    #[error(
        "{}: {}; it evaluated {specs} (name one as {}#SPEC)",
        dir.display(),
        given.as_ref().map_or("several methods".to_string(), |g| format!("no method spec `{g}`")),
        dir.display()
    )]
    NoSuchSpec {
        dir: PathBuf,
        given: Option<String>,
        specs: String,
    },
    #[error("{name} {message}")]
    BadSetting { name: &'static str, message: String },
    #[error("interrupted while {0}; the same evaluation started again goes on from here")]
    Interrupted(&'static str),
    #[error(transparent)]
    Engine(#[from] crate::Error),
}

pub type Result<T> = std::result::Result<T, EvalError>;
