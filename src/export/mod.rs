//! Markdown export of a run: the question, the answer, its sources as links
//! to the files, and a readable account of how the answer was built. The
//! answer and the documents are untrusted text, so HTML in them is escaped:
//! a viewer that renders HTML shows it as text.

mod markdown;

use std::path::{Path, PathBuf};

pub use markdown::render;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{0} is a directory; give a file name such as answer.md")]
    IsDirectory(PathBuf),
    #[error("the folder {0} does not exist")]
    NoParent(PathBuf),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Writes `contents` to exactly `path`: through a temporary file beside it
/// that is renamed over `path`, so a crash never leaves half a file and
/// nothing is written anywhere else.
pub fn write_file(path: &Path, contents: &str) -> Result<PathBuf, ExportError> {
    if path.is_dir() {
        return Err(ExportError::IsDirectory(path.to_path_buf()));
    }
    let parent = match path.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => return Err(ExportError::NoParent(path.to_path_buf())),
    };
    if !parent.is_dir() {
        return Err(ExportError::NoParent(parent.to_path_buf()));
    }
    // Readable like any file the person saves, not private like a temp file.
    crate::atomic_file::replace(path, contents.as_bytes(), 0o644).map_err(|source| {
        ExportError::Write {
            path: path.to_path_buf(),
            source,
        }
    })?;
    Ok(path.to_path_buf())
}
