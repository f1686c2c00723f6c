//! Turns a file's bytes into a [`StructureTree`]. One module per format; this
//! one picks the format from the extension and keeps the failure reasons typed
//! so a bad file becomes a per-file error with a reason, never a failed batch.

mod decode;
mod docx;
mod epub;
mod flow;
mod html;
mod markdown;
mod odt;
mod package;
mod pdf;
mod pdf_streams;
mod pptx;
mod text;
mod xlsx;
mod xml;

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
    Pptx,
    Xlsx,
    Odt,
    Epub,
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
            "pptx" => Some(Format::Pptx),
            "xlsx" => Some(Format::Xlsx),
            "odt" => Some(Format::Odt),
            "epub" => Some(Format::Epub),
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
            Format::Pptx => "pptx",
            Format::Xlsx => "xlsx",
            Format::Odt => "odt",
            Format::Epub => "epub",
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
    #[error("binary content in a {format} file (found NUL bytes); Folio indexes text, markdown, HTML, PDF, DOCX, PPTX, XLSX, ODT and EPUB")]
    Binary { format: &'static str },
    #[error("corrupt or unsupported {format} file: {reason}")]
    Corrupt {
        format: &'static str,
        reason: String,
    },
    #[error("no text could be extracted ({reason})")]
    Empty { reason: String },
    #[error("this {format} file decompresses to more than {budget_mib} MiB ({DECOMPRESSION_FACTOR}× the file-size limit): a compression bomb, or a document to index with a larger --max-file-size")]
    OverBudget {
        format: &'static str,
        budget_mib: u64,
    },
}

/// What one file may decompress to, as a multiple of the file-size limit:
/// a PDF's streams together, the members of a zip-based document together,
/// and for a workbook the text made from its cells (256 MiB at the default 64 MiB limit). It bounds the memory one file can take while it loads.
pub const DECOMPRESSION_FACTOR: u64 = 4;

/// Parses `bytes` as `format`. `fallback_title` (usually the file stem) names
/// the root when the document has no title of its own; `budget` bounds the
/// bytes a compressed format may decompress to (see [`DECOMPRESSION_FACTOR`]).
pub fn load(
    format: Format,
    bytes: &[u8],
    fallback_title: &str,
    budget: u64,
) -> Result<LoadedDocument, LoadError> {
    match format {
        Format::Markdown => with_text(format, bytes, |t| markdown::parse(t, fallback_title)),
        Format::Text => with_text(format, bytes, |t| text::parse(t, fallback_title)),
        Format::Html => with_text(format, bytes, |t| html::parse(t, fallback_title)),
        Format::Pdf => structured(format, pdf::parse(bytes, fallback_title, budget)),
        Format::Docx => structured(format, docx::parse(bytes, fallback_title, budget)),
        Format::Pptx => structured(format, pptx::parse(bytes, fallback_title, budget)),
        Format::Xlsx => structured(format, xlsx::parse(bytes, fallback_title, budget)),
        Format::Odt => structured(format, odt::parse(bytes, fallback_title, budget)),
        Format::Epub => structured(format, epub::parse(bytes, fallback_title, budget)),
    }
}

/// A binary format's tree, which carries no note.
fn structured(
    format: Format,
    tree: Result<StructureTree, LoadError>,
) -> Result<LoadedDocument, LoadError> {
    tree.map(|tree| LoadedDocument {
        format,
        tree,
        note: None,
    })
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
