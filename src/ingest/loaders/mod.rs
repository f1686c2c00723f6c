//! Turns a file's bytes into a [`StructureTree`]. One module per format; this
//! one picks the format from the extension and keeps the failure reasons typed
//! so a bad file becomes a per-file error with a reason, never a failed batch.

mod decode;
mod docx;
mod html;
mod markdown;
mod pdf;
mod text;

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::structure_tree::StructureTree;

pub use decode::{decode_text, Decoded};
pub use markdown::MARKDOWN_OPTIONS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Markdown,
    Text,
    Html,
    Pdf,
    Docx,
}

impl Format {
    /// The format a file is indexed as, or `None` for files Folio does not read
    /// (images, archives, …), which are left alone rather than reported.
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "md" | "markdown" | "mdown" | "mkd" => Some(Format::Markdown),
            "txt" | "text" => Some(Format::Text),
            "html" | "htm" | "xhtml" => Some(Format::Html),
            "pdf" => Some(Format::Pdf),
            "docx" => Some(Format::Docx),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Markdown => "markdown",
            Format::Text => "text",
            Format::Html => "html",
            Format::Pdf => "pdf",
            Format::Docx => "docx",
        }
    }
}

/// A parsed document. `note` records something the user should know even
/// though loading succeeded (for example a lossy decode).
#[derive(Debug, Clone)]
pub struct LoadedDocument {
    pub format: Format,
    pub tree: StructureTree,
    pub note: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("binary content in a {format} file (found NUL bytes); Folio indexes text, markdown, HTML, PDF and DOCX")]
    Binary { format: &'static str },
    #[error("corrupt or unsupported {format} file: {reason}")]
    Corrupt {
        format: &'static str,
        reason: String,
    },
    #[error("no text could be extracted ({reason})")]
    Empty { reason: String },
}

/// Parses `bytes` as `format`. `fallback_title` (usually the file stem) names
/// the root when the document has no title of its own.
pub fn load(
    format: Format,
    bytes: &[u8],
    fallback_title: &str,
) -> Result<LoadedDocument, LoadError> {
    match format {
        Format::Markdown => with_text(format, bytes, |t| markdown::parse(t, fallback_title)),
        Format::Text => with_text(format, bytes, |t| text::parse(t, fallback_title)),
        Format::Html => with_text(format, bytes, |t| html::parse(t, fallback_title)),
        Format::Pdf => pdf::parse(bytes, fallback_title).map(|tree| LoadedDocument {
            format,
            tree,
            note: None,
        }),
        Format::Docx => docx::parse(bytes, fallback_title).map(|tree| LoadedDocument {
            format,
            tree,
            note: None,
        }),
    }
}

/// Text formats share decoding: NUL bytes mean binary, anything not UTF-8 is
/// decoded with a detected legacy encoding and noted.
fn with_text(
    format: Format,
    bytes: &[u8],
    parse: impl FnOnce(&str) -> StructureTree,
) -> Result<LoadedDocument, LoadError> {
    let Decoded { text, note } = decode_text(bytes).ok_or(LoadError::Binary {
        format: format.as_str(),
    })?;
    Ok(LoadedDocument {
        format,
        tree: parse(&text),
        note,
    })
}
