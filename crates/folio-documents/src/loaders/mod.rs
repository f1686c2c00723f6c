//! Turns a file's bytes into a [`StructureTree`]. One module per format; this
//! one picks the format from the extension and keeps the failure reasons typed
//! so a bad file becomes a per-file error with a reason, never a failed batch.

mod decode;
mod docx;
mod epub;
#[cfg(test)]
mod expansion_tests;
mod flow;
mod html;
mod html_table;
mod image;
mod markdown;
pub mod ocr;
pub mod ocr_log;
mod odt;
mod package;
mod pdf;
pub mod pdf_layout;
mod pdf_ocr;
mod pdf_streams;
mod pptx;
mod text;
pub mod vault;
mod xlsx;
mod xml;

use std::path::Path;

use serde::{Deserialize, Serialize};

use folio_core::choice::{Choice, UnknownChoice};

use super::structure_tree::{Span, StructureTree};
use crate::notes::NoteFacts;

pub use decode::{decode_text, Decoded};
pub use markdown::MARKDOWN_OPTIONS;
pub use ocr::OcrSettings;
pub use ocr_log::PageLog;
pub use pdf_layout::{PageLayout, PdfRect};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
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
    /// PNG, JPEG or TIFF, read by OCR.
    Image,
}

impl Format {
    /// The format a file is indexed as, or `None` for files Folio does not read
    /// (archives, media, …), which are left alone rather than reported.
    /// Images are read only while OCR is on (see [`Format::readable`]).
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
            "png" | "jpg" | "jpeg" | "tif" | "tiff" => Some(Format::Image),
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
            Format::Image => "image",
        }
    }

    /// The format a person names, by its name (`markdown`) or by one of its
    /// extensions (`md`), ignoring case.
    pub fn named(text: &str) -> Result<Format, UnknownChoice> {
        <Format as Choice>::parse(text).or_else(|e| {
            let ext = text.trim().trim_start_matches('.');
            Format::from_path(Path::new(&format!("file.{ext}"))).ok_or(e)
        })
    }

    /// Whether files of this format are indexed under these OCR settings:
    /// with OCR off an image is not a document, so it is left alone (and
    /// leaves the index if it was in it).
    pub fn readable(self, ocr: &OcrSettings) -> bool {
        self != Format::Image || ocr.enabled
    }
}

impl Choice for Format {
    const ALL: &'static [Format] = &[
        Format::Markdown,
        Format::Text,
        Format::Html,
        Format::Pdf,
        Format::Docx,
        Format::Pptx,
        Format::Xlsx,
        Format::Odt,
        Format::Epub,
        Format::Image,
    ];

    fn as_str(self) -> &'static str {
        Format::as_str(self)
    }
}

/// A parsed document. `note` records something the user should know even
/// though loading succeeded (for example a lossy decode).
#[derive(Debug, Clone)]
pub struct LoadedDocument {
    pub format: Format,
    pub tree: StructureTree,
    /// A note's aliases, tags and links (markdown's); empty for the rest.
    pub facts: NoteFacts,
    pub note: Option<String>,
    /// The pages OCR read, with how sure it was of each.
    pub ocr_pages: Vec<OcrPage>,
    /// For a PDF, where each page's text is drawn (index 0 is page 1);
    /// empty for other formats.
    pub layout: Vec<PageLayout>,
}

impl LoadedDocument {
    /// Where the text in `span` is drawn: one box per line, on its page.
    /// Empty when the format has no pages, or for a scanned page that is
    /// rotated (see `pdf_ocr.rs`).
    pub fn boxes(&self, span: &Span) -> Vec<PdfRect> {
        span.page
            .and_then(|page| self.layout.get(usize::try_from(page).ok()?.checked_sub(1)?))
            .map_or_else(Vec::new, |layout| layout.boxes(span.start, span.end))
    }
}

/// A page whose text came from OCR, and Tesseract's confidence in it (0–1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OcrPage {
    pub page: u32,
    pub confidence: f32,
}

/// What a binary format's loader returns besides its tree.
struct Parsed {
    tree: StructureTree,
    facts: NoteFacts,
    note: Option<String>,
    ocr_pages: Vec<OcrPage>,
    layout: Vec<PageLayout>,
}

impl From<StructureTree> for Parsed {
    fn from(tree: StructureTree) -> Self {
        Parsed {
            tree,
            facts: NoteFacts::default(),
            note: None,
            ocr_pages: Vec::new(),
            layout: Vec::new(),
        }
    }
}

/// What loading one file may spend, and how it reports and stops long work
/// (OCR reads a page in seconds; a scanned book takes hours).
pub struct LoadOptions<'a> {
    /// The bytes the file may decompress to (see [`DECOMPRESSION_FACTOR`]),
    /// and what it may expand into ([`crate::expansion`]).
    pub budget: u64,
    pub ocr: OcrSettings,
    /// Called after each page OCR reads, with the pages read and the pages
    /// it has to read in this file.
    pub on_ocr_page: &'a (dyn Fn(u32, u32) + Sync),
    /// Checked between OCR pages; when it says so the file stops with
    /// [`LoadError::Interrupted`].
    pub interrupted: &'a (dyn Fn() -> bool + Sync),
    /// Pages OCR read in this file before it was stopped, and where the
    /// pages read now are kept until the document is stored.
    pub resume: Option<&'a PageLog>,
}

impl LoadOptions<'static> {
    /// A budget and nothing else: OCR off, no progress to report.
    pub fn budget(budget: u64) -> Self {
        LoadOptions {
            budget,
            ocr: OcrSettings {
                enabled: false,
                ..OcrSettings::default()
            },
            on_ocr_page: &|_, _| {},
            interrupted: &|| false,
            resume: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("binary content in a {format} file (found NUL bytes); Folio indexes text, markdown, HTML, PDF, DOCX, PPTX, XLSX, ODT, EPUB and (with OCR) images")]
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
    #[error("this {format} file expands to more than {budget_mib} MiB of text and structure ({DECOMPRESSION_FACTOR}× the file-size limit): it repeats one part many times, or it is a document to index with a larger --max-file-size")]
    Expanded {
        format: &'static str,
        budget_mib: u64,
    },
    #[error("{0}")]
    Ocr(String),
    /// Stopped between OCR pages by a pause, cancel or shutdown; the file is
    /// read again by the next pass.
    #[error("stopped before the file was read")]
    Interrupted,
}

/// What one file may decompress to, as a multiple of the file-size limit
/// (256 MiB at the default 64 MiB limit): a PDF's streams together, the
/// members of a zip-based document together, for a workbook the text made
/// from its cells, and for OCR the text it reads. Each image handed to OCR
/// is also held under it (and under [`ocr::MAX_RASTER_BYTES`]); images are
/// read one at a time, so they are bounded one by one rather than summed.
/// It bounds the memory one file can take while it loads.
pub const DECOMPRESSION_FACTOR: u64 = 4;

/// Parses `bytes` as `format`. `fallback_title` (usually the file stem) names
/// the root when the document has no title of its own. What the document
/// expands into (its text and structure) is held to the same budget as
/// what it decompresses to ([`crate::expansion`]).
pub fn load(
    format: Format,
    bytes: &[u8],
    fallback_title: &str,
    options: &LoadOptions,
) -> Result<LoadedDocument, LoadError> {
    let (loaded, over) = crate::expansion::within(options.budget, || {
        parse(format, bytes, fallback_title, options)
    });
    if over {
        // Whatever the loader made of the truncated file, this is why.
        return Err(LoadError::Expanded {
            format: format.as_str(),
            budget_mib: options.budget >> 20,
        });
    }
    loaded
}

fn parse(
    format: Format,
    bytes: &[u8],
    fallback_title: &str,
    options: &LoadOptions,
) -> Result<LoadedDocument, LoadError> {
    let budget = options.budget;
    match format {
        Format::Markdown => with_text(format, bytes, |t| markdown::parse(t, fallback_title)),
        Format::Text => with_text(format, bytes, |t| text::parse(t, fallback_title)),
        Format::Html => with_text(format, bytes, |t| html::parse(t, fallback_title)),
        Format::Pdf => structured(format, pdf::parse(bytes, fallback_title, options)),
        Format::Docx => structured(format, docx::parse(bytes, fallback_title, budget)),
        Format::Pptx => structured(format, pptx::parse(bytes, fallback_title, budget)),
        Format::Xlsx => structured(format, xlsx::parse(bytes, fallback_title, budget)),
        Format::Odt => structured(format, odt::parse(bytes, fallback_title, budget)),
        Format::Epub => structured(format, epub::parse(bytes, fallback_title, budget)),
        Format::Image => structured(format, image::parse(bytes, fallback_title, options)),
    }
}

fn structured(
    format: Format,
    parsed: Result<impl Into<Parsed>, LoadError>,
) -> Result<LoadedDocument, LoadError> {
    parsed.map(|parsed| {
        let Parsed {
            tree,
            facts,
            note,
            ocr_pages,
            layout,
        } = parsed.into();
        LoadedDocument {
            format,
            tree,
            facts,
            note,
            ocr_pages,
            layout,
        }
    })
}

/// Text formats share decoding: NUL bytes mean binary, anything not UTF-8 is
/// decoded with a detected legacy encoding and noted.
fn with_text<P: Into<Parsed>>(
    format: Format,
    bytes: &[u8],
    parse: impl FnOnce(&str) -> P,
) -> Result<LoadedDocument, LoadError> {
    let Decoded { text, note } = decode_text(bytes).ok_or(LoadError::Binary {
        format: format.as_str(),
    })?;
    let parsed: Parsed = parse(&text).into();
    // What decoding noted, then what parsing did (front matter it could
    // not read).
    let note = match (note, parsed.note) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    };
    Ok(LoadedDocument {
        format,
        tree: parsed.tree,
        facts: parsed.facts,
        note,
        ocr_pages: Vec::new(),
        layout: Vec::new(),
    })
}
