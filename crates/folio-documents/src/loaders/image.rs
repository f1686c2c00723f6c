//! Image files (PNG, JPEG, TIFF), read with OCR. Each image page (a TIFF
//! may have several) becomes a page of paragraphs under the file's name,
//! the same shape as a PDF without an outline.

use super::ocr::{self, MAX_RASTER_BYTES};
use super::pdf::assemble;
use super::{LoadError, LoadOptions, OcrPage, Parsed};

/// Leptonica holds a colour image at 4 bytes a pixel.
const BYTES_PER_PIXEL: u64 = 4;

pub(super) fn parse(
    bytes: &[u8],
    fallback_title: &str,
    options: &LoadOptions,
) -> Result<Parsed, LoadError> {
    let size = imagesize::blob_size(bytes).map_err(|e| LoadError::Corrupt {
        format: "image",
        reason: format!("not a PNG, JPEG or TIFF image Folio can measure ({e})"),
    })?;
    let pixels = (size.width as u64).saturating_mul(size.height as u64);
    let limit = options.budget.min(MAX_RASTER_BYTES);
    if pixels.saturating_mul(BYTES_PER_PIXEL) > limit {
        return Err(LoadError::Ocr(format!(
            "the image is {} × {} pixels, more than OCR reads at once ({} MiB decoded); scale it down to index it",
            size.width,
            size.height,
            limit / (1024 * 1024)
        )));
    }
    if (options.interrupted)() {
        return Err(LoadError::Interrupted);
    }
    let pages = ocr::recognize(bytes, None, &options.ocr)
        .map_err(|e| LoadError::Ocr(format!("OCR could not read the image: {e}")))?;
    (options.on_ocr_page)(1, 1);
    let text_bytes: u64 = pages.iter().map(|p| p.text.len() as u64).sum();
    if text_bytes > options.budget {
        return Err(LoadError::OverBudget {
            format: "image",
            budget_mib: options.budget / (1024 * 1024),
        });
    }
    if pages.iter().all(|p| p.text.trim().is_empty()) {
        return Err(LoadError::Empty {
            reason: "OCR found no text in the image".to_owned(),
        });
    }
    let ocr_pages = pages
        .iter()
        .enumerate()
        .filter_map(|(index, p)| {
            Some(OcrPage {
                page: index as u32 + 1,
                confidence: p.confidence?,
            })
        })
        .collect();
    let texts: Vec<String> = pages.into_iter().map(|p| p.text).collect();
    Ok(Parsed {
        tree: assemble(fallback_title, &texts, &[]),
        facts: Default::default(),
        note: None,
        ocr_pages,
        layout: Vec::new(),
    })
}
