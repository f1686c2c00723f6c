//! The pages of a PDF that have no text layer (scans, photographed pages),
//! read with OCR a few at a time: each batch of pages is rendered from a
//! private temporary copy of the file to files on disk, read by Tesseract
//! one image at a time, and deleted before the next, so a scanned book takes
//! one page's memory per core however long it is.

use std::collections::BTreeMap;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use lopdf::{Document, Object, ObjectId};

use super::ocr::{self, OcrError, Recognized, PAGES_PER_BATCH};
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
/// reads on that page. Pages go to OCR in batches of consecutive pages, one
/// batch per core at a time; the results are taken in here, on the calling
/// thread, which logs them, reports progress and decides when to stop.
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
    let mut progress = Progress {
        done: 0,
        total: blank.len() as u32,
        text_bytes: 0,
    };
    let mut todo = Vec::new();
    for &number in &blank {
        match options.resume.and_then(|log| log.page(number)) {
            Some(before) => {
                progress.take(number, before.clone(), texts, &mut read, options)?;
            }
            None => todo.push(number),
        }
    }
    if todo.is_empty() {
        return Ok(read);
    }
    let copy = match private_copy(bytes) {
        Ok(copy) => copy,
        Err(e) => {
            read.unavailable = Some(format!("cannot write a temporary copy for OCR: {e}"));
            return Ok(read);
        }
    };
    let batches = batches(doc, page_ids, &todo, options.budget);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(batches.len());
    let next = AtomicUsize::new(0);
    let halt = AtomicBool::new(false);
    let (sender, results) = mpsc::channel::<(Batch, Result<Vec<Recognized>, OcrError>)>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let sender = sender.clone();
            let (next, halt, batches, path) = (&next, &halt, &batches, copy.path());
            scope.spawn(move || loop {
                if halt.load(Ordering::SeqCst) || (options.interrupted)() {
                    break;
                }
                let Some(batch) = batches.get(next.fetch_add(1, Ordering::SeqCst)) else {
                    break;
                };
                let outcome = read_batch(path, batch, options);
                if sender.send((batch.clone(), outcome)).is_err() {
                    break;
                }
            });
        }
        drop(sender);
        let outcome = (|| {
            for (batch, outcome) in results.iter() {
                match outcome {
                    Ok(pages) => {
                        for (&number, page) in batch.pages.iter().zip(pages) {
                            if let Some(log) = options.resume {
                                log.record(number, &page);
                            }
                            progress.take(number, page, texts, &mut read, options)?;
                        }
                    }
                    Err(OcrError::Setup(why)) => {
                        read.unavailable = Some(why);
                        return Ok(());
                    }
                    Err(OcrError::Page(why)) => {
                        for &number in &batch.pages {
                            read.failed.push((number, why.clone()));
                            progress.skip(options);
                        }
                    }
                }
            }
            if (options.interrupted)() && progress.done < progress.total {
                return Err(LoadError::Interrupted);
            }
            Ok(())
        })();
        // Whatever ended the loop, no worker starts another batch.
        halt.store(true, Ordering::SeqCst);
        outcome
    })?;
    read.failed.sort();
    read.pages.sort_by_key(|p| p.page);
    Ok(read)
}

/// Consecutive pages rendered at one resolution, read by one process each
/// of `pdftoppm` and `tesseract`.
#[derive(Debug, Clone)]
struct Batch {
    pages: Vec<u32>,
    dpi: u32,
}

/// `todo` (ascending page numbers) cut into batches of consecutive pages of
/// one resolution, at most [`PAGES_PER_BATCH`] each.
fn batches(
    doc: &Document,
    page_ids: &BTreeMap<u32, ObjectId>,
    todo: &[u32],
    budget: u64,
) -> Vec<Batch> {
    let mut out: Vec<Batch> = Vec::new();
    for &number in todo {
        let size = page_ids.get(&number).and_then(|&id| media_box(doc, id));
        let dpi = ocr::page_dpi(size, budget);
        match out.last_mut() {
            Some(batch)
                if batch.dpi == dpi
                    && batch.pages.len() < PAGES_PER_BATCH
                    && batch.pages.last() == Some(&(number - 1)) =>
            {
                batch.pages.push(number)
            }
            _ => out.push(Batch {
                pages: vec![number],
                dpi,
            }),
        }
    }
    out
}

/// Renders and reads one batch in a temporary folder of its own; a page the
/// renderer left out reads as a failure of that page alone.
fn read_batch(
    pdf: &Path,
    batch: &Batch,
    options: &LoadOptions,
) -> Result<Vec<Recognized>, OcrError> {
    let dir = tempfile::Builder::new()
        .prefix("folio-ocr-")
        .tempdir()
        .map_err(|e| OcrError::Setup(format!("cannot make a temporary folder for OCR: {e}")))?;
    let (first, last) = (batch.pages[0], batch.pages[batch.pages.len() - 1]);
    let rendered =
        ocr::rasterize_pdf_pages(pdf, first, last, batch.dpi, dir.path(), options.budget)?;
    if rendered.len() != batch.pages.len() {
        return Err(OcrError::Page(format!(
            "pages {first}–{last} did not all render within {} MiB",
            options.budget.min(ocr::MAX_RASTER_BYTES) / (1024 * 1024)
        )));
    }
    let files: Vec<PathBuf> = rendered.into_iter().map(|(_, file)| file).collect();
    ocr::recognize_files(&files, batch.dpi, &options.ocr)
}

/// The pages taken in so far, for progress and the text budget.
struct Progress {
    done: u32,
    total: u32,
    text_bytes: u64,
}

impl Progress {
    /// Puts a page's reading in place and reports it.
    fn take(
        &mut self,
        number: u32,
        page: Recognized,
        texts: &mut [String],
        read: &mut PagesRead,
        options: &LoadOptions,
    ) -> Result<(), LoadError> {
        self.text_bytes += page.text.len() as u64;
        if self.text_bytes > options.budget {
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
        self.skip(options);
        Ok(())
    }

    /// Reports a page as done, read or not.
    fn skip(&mut self, options: &LoadOptions) {
        self.done += 1;
        (options.on_ocr_page)(self.done, self.total);
    }
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
