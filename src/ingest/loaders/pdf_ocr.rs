//! The pages of a PDF that have no text layer (scans, photographed pages),
//! read with OCR one at a time: each page is rendered from a private
//! temporary copy of the file, read, and dropped before the next, so a
//! scanned book takes one page's memory however long it is.

use std::collections::BTreeMap;

use lopdf::{Document, Object, ObjectId};

use super::ocr::{self, OcrError};
use super::{LoadError, LoadOptions, OcrPage};

/// What OCR did for one PDF.
#[derive(Debug, Default)]
pub(super) struct PagesRead {
    pub pages: Vec<OcrPage>,
    /// Pages OCR could not read, with why; the rest of the file still counts.
    pub failed: Vec<(u32, String)>,
    /// Why OCR could not run at all (a missing program or language).
    pub unavailable: Option<String>,
}

impl PagesRead {
    /// A note for the document when some pages were not read.
    pub fn note(&self) -> Option<String> {
        if let Some(why) = &self.unavailable {
            return Some(format!("pages without a text layer were not read: {why}"));
        }
        let (first, reason) = self.failed.first()?;
        let numbers: Vec<String> = self.failed.iter().map(|(p, _)| p.to_string()).collect();
        Some(format!(
            "OCR could not read page{} {} (page {first}: {reason})",
            if numbers.len() == 1 { "" } else { "s" },
            numbers.join(", ")
        ))
    }
}

/// Fills each blank entry of `texts` (page text in page order) with what OCR
/// reads on that page.
pub(super) fn read_blank_pages(
    bytes: &[u8],
    doc: &Document,
    page_ids: &BTreeMap<u32, ObjectId>,
    texts: &mut [String],
    options: &LoadOptions,
) -> Result<PagesRead, LoadError> {
    let blank: Vec<u32> = page_ids
        .keys()
        .zip(texts.iter())
        .filter(|(_, text)| text.trim().is_empty())
        .map(|(&number, _)| number)
        .collect();
    let mut read = PagesRead::default();
    if blank.is_empty() {
        return Ok(read);
    }
    let copy = match private_copy(bytes) {
        Ok(copy) => copy,
        Err(e) => {
            read.unavailable = Some(format!("cannot write a temporary copy for OCR: {e}"));
            return Ok(read);
        }
    };
    let total = blank.len() as u32;
    let mut text_bytes = 0u64;
    for (done, &number) in blank.iter().enumerate() {
        if (options.interrupted)() {
            return Err(LoadError::Interrupted);
        }
        let size = page_ids.get(&number).and_then(|&id| media_box(doc, id));
        let outcome = ocr::rasterize_pdf_page(copy.path(), number, size, options.budget)
            .and_then(|(raster, dpi)| ocr::recognize(&raster, Some(dpi), &options.ocr));
        match outcome {
            Ok(recognized) => {
                if let Some(page) = recognized.into_iter().next() {
                    text_bytes += page.text.len() as u64;
                    if text_bytes > options.budget {
                        return Err(LoadError::OverBudget {
                            format: "pdf",
                            budget_mib: options.budget / (1024 * 1024),
                        });
                    }
                    if let Some(confidence) = page.confidence {
                        read.pages.push(OcrPage {
                            page: number,
                            confidence,
                        });
                    }
                    if let Some(slot) = texts.get_mut(number as usize - 1) {
                        *slot = page.text;
                    }
                }
            }
            Err(OcrError::Setup(why)) => {
                read.unavailable = Some(why);
                return Ok(read);
            }
            Err(OcrError::Page(why)) => read.failed.push((number, why)),
        }
        (options.on_ocr_page)(done as u32 + 1, total);
    }
    Ok(read)
}

/// The file's bytes in a temporary file only this user can read, for
/// `pdftoppm`, which renders from a path. It is deleted when dropped.
fn private_copy(bytes: &[u8]) -> std::io::Result<tempfile::NamedTempFile> {
    use std::io::Write;
    let mut file = tempfile::Builder::new()
        .prefix("folio-ocr-")
        .suffix(".pdf")
        .tempfile()?;
    file.write_all(bytes)?;
    file.flush()?;
    Ok(file)
}

/// The page's width and height in points, from its own or an inherited
/// /MediaBox.
fn media_box(doc: &Document, page: ObjectId) -> Option<(f64, f64)> {
    let mut dict = doc.get_dictionary(page).ok()?;
    for _ in 0..32 {
        if let Ok(bounds) = dict.get(b"MediaBox") {
            let bounds = match bounds {
                Object::Reference(id) => doc.get_object(*id).ok()?,
                other => other,
            };
            let numbers: Vec<f64> = bounds
                .as_array()
                .ok()?
                .iter()
                .filter_map(|n| {
                    n.as_float()
                        .ok()
                        .map(f64::from)
                        .or(n.as_i64().ok().map(|i| i as f64))
                })
                .collect();
            if let [x0, y0, x1, y1] = numbers[..] {
                return Some(((x1 - x0).abs(), (y1 - y0).abs()));
            }
            return None;
        }
        let parent = dict.get(b"Parent").ok()?.as_reference().ok()?;
        dict = doc.get_dictionary(parent).ok()?;
    }
    None
}
