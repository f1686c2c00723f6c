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

use super::ocr::{self, OcrError, OcrWord, Recognized, PAGES_PER_BATCH};
use super::pdf_layout::{PageLayout, PdfRect, TextRun};
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

/// The pages of a PDF being read: text and layout in page order.
pub(super) struct Pages<'a> {
    pub texts: &'a mut [String],
    pub layouts: &'a mut [PageLayout],
}

/// Fills each blank page of `pages` with what OCR reads on it, and where.
/// Pages go to OCR in batches of consecutive pages, one batch per core at a
/// time; the results are taken in here, on the calling thread, which logs
/// them, reports progress and decides when to stop.
pub(super) fn read_blank_pages(
    bytes: &[u8],
    doc: &Document,
    page_ids: &BTreeMap<u32, ObjectId>,
    pages: &mut Pages,
    options: &LoadOptions,
) -> Result<PagesRead, LoadError> {
    let blank: Vec<u32> = page_ids
        .keys()
        .zip(pages.texts.iter())
        .filter(|(_, text)| text.trim().is_empty())
        .map(|(&number, _)| number)
        .collect();
    let geometry: BTreeMap<u32, Geometry> = blank
        .iter()
        .filter_map(|&number| Some((number, geometry(doc, *page_ids.get(&number)?)?)))
        .collect();
    let dpi =
        |number: u32| ocr::page_dpi(geometry.get(&number).map(Geometry::size), options.budget);
    let locate = |number: u32, words: &[OcrWord]| {
        geometry
            .get(&number)
            .map_or_else(PageLayout::default, |g| g.layout(words, dpi(number)))
    };
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
                let layout = locate(number, &before.words);
                progress.take(number, before.clone(), layout, pages, &mut read, options)?;
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
    let batches = batches(&todo, dpi);
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
                    Ok(recognized) => {
                        for (&number, page) in batch.pages.iter().zip(recognized) {
                            if let Some(log) = options.resume {
                                log.record(number, &page);
                            }
                            let layout = locate(number, &page.words);
                            progress.take(number, page, layout, pages, &mut read, options)?;
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
fn batches(todo: &[u32], dpi_of: impl Fn(u32) -> u32) -> Vec<Batch> {
    let mut out: Vec<Batch> = Vec::new();
    for &number in todo {
        let dpi = dpi_of(number);
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
        layout: PageLayout,
        pages: &mut Pages,
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
        let index = number as usize - 1;
        if let (Some(text), Some(slot)) = (pages.texts.get_mut(index), pages.layouts.get_mut(index))
        {
            *text = page.text;
            *slot = layout;
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

/// Where `pdftoppm` draws a page from: its media box (in points) and its
/// rotation, each the page's own or inherited.
#[derive(Debug, Clone, Copy)]
struct Geometry {
    llx: f64,
    ury: f64,
    width: f64,
    height: f64,
    rotate: i64,
}

impl Geometry {
    fn size(&self) -> (f64, f64) {
        (self.width, self.height)
    }

    /// OCR's words on a raster of this page at `dpi`, back in PDF user
    /// space. The raster of a rotated page is turned, so its words are left
    /// without boxes rather than put in the wrong place.
    fn layout(&self, words: &[OcrWord], dpi: u32) -> PageLayout {
        if self.rotate.rem_euclid(360) != 0 || dpi == 0 {
            return PageLayout::default();
        }
        let points = 72.0 / f64::from(dpi);
        let x = |px: u32| (self.llx + f64::from(px) * points) as f32;
        let y = |px: u32| (self.ury - f64::from(px) * points) as f32;
        let runs = words
            .iter()
            .map(|w| TextRun {
                start: w.start,
                end: w.end,
                rect: PdfRect {
                    x0: x(w.left),
                    y0: y(w.top.saturating_add(w.height)),
                    x1: x(w.left.saturating_add(w.width)),
                    y1: y(w.top),
                },
            })
            .collect();
        PageLayout { runs }
    }
}

/// A page's geometry, from its dictionary or the page tree above it.
fn geometry(doc: &Document, page: ObjectId) -> Option<Geometry> {
    let numbers = |object: &Object| -> Option<Vec<f64>> {
        let object = match object {
            Object::Reference(id) => doc.get_object(*id).ok()?,
            other => other,
        };
        Some(
            object
                .as_array()
                .ok()?
                .iter()
                .filter_map(|n| {
                    n.as_float()
                        .ok()
                        .map(f64::from)
                        .or(n.as_i64().ok().map(|i| i as f64))
                })
                .collect(),
        )
    };
    let [x0, y0, x1, y1] = numbers(inherited(doc, page, b"MediaBox")?)?[..] else {
        return None;
    };
    let rotate = inherited(doc, page, b"Rotate")
        .and_then(|r| r.as_i64().ok())
        .unwrap_or(0);
    Some(Geometry {
        llx: x0.min(x1),
        ury: y0.max(y1),
        width: (x1 - x0).abs(),
        height: (y1 - y0).abs(),
        rotate,
    })
}

/// The page's own value for `key`, or the nearest one up the page tree.
fn inherited<'a>(doc: &'a Document, page: ObjectId, key: &[u8]) -> Option<&'a Object> {
    let mut dict = doc.get_dictionary(page).ok()?;
    for _ in 0..32 {
        if let Ok(value) = dict.get(key) {
            return Some(value);
        }
        let parent = dict.get(b"Parent").ok()?.as_reference().ok()?;
        dict = doc.get_dictionary(parent).ok()?;
    }
    None
}
