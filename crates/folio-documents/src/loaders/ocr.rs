//! Optical character recognition: Tesseract reads PDF pages that have no text
//! layer (rasterised by poppler's `pdftoppm`) and image files.
//!
//! Both run as child processes, not linked libraries, for three reasons:
//! - a crash or a runaway allocation in leptonica or poppler on a hostile
//!   image ends a child held under an address-space limit, not Folio;
//! - nothing is compiled against Debian's C++ libtesseract, so the build
//!   stays as it is;
//! - the benchmark's baseline is the same `tesseract` binary, so the
//!   comparison measures only what Folio adds around it.
//!
//! The cost of a process start is shared by a batch of pages
//! ([`PAGES_PER_BATCH`]); an image file is one process.
//!
//! Memory: each raster handed to Tesseract is at most [`MAX_RASTER_BYTES`]
//! (and never more than the file's decompression budget); rasters go to
//! temporary files, Tesseract holds one at a time, and they are deleted
//! with their batch. The text OCR produces counts against the file's budget
//! like any decompressed text.
//!
//! Nothing here builds a command from document content: the programs and
//! flags are fixed, languages are checked to be plain names, and the only
//! paths are temporary files this module creates.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Whether OCR runs and in which languages (Tesseract's names, such as
/// `eng` or `deu`; each needs its `tesseract-ocr-<lang>` package).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(deny_unknown_fields, default)]
pub struct OcrSettings {
    pub enabled: bool,
    pub languages: Vec<String>,
}

impl Default for OcrSettings {
    fn default() -> Self {
        OcrSettings {
            enabled: true,
            languages: vec!["eng".to_owned()],
        }
    }
}

impl OcrSettings {
    /// Whether these settings can work with the languages Tesseract has
    /// (see [`installed_languages`]); the message says what to change.
    pub fn check(&self, installed: &[String]) -> Result<(), String> {
        if !self.enabled {
            return Ok(());
        }
        self.language_arg().map_err(|e| e.to_string())?;
        match self.languages.iter().find(|l| !installed.contains(l)) {
            Some(missing) => Err(format!(
                "{missing} is not installed for OCR; install tesseract-ocr-{missing}, or choose from {}",
                installed.join(", ")
            )),
            None => Ok(()),
        }
    }

    /// Tesseract's `-l` argument, after checking every name is a plain
    /// language name so none can be read as a flag.
    fn language_arg(&self) -> Result<String, OcrError> {
        if self.languages.is_empty() {
            return Err(OcrError::Setup(
                "no OCR language is set; name one, such as eng".to_owned(),
            ));
        }
        for language in &self.languages {
            let plain = !language.is_empty()
                && language.len() <= 32
                && language
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !plain {
                return Err(OcrError::Setup(format!(
                    "{language:?} is not an OCR language name (Tesseract's names look like eng, deu, chi_sim)"
                )));
            }
        }
        Ok(self.languages.join("+"))
    }
}

/// The languages Tesseract can read here, by its names (`osd`, its script
/// detector, is not a language and is left out).
pub fn installed_languages() -> Result<Vec<String>, OcrError> {
    let listed = run("tesseract", &["--list-langs".into()], None, 64 * 1024)?;
    Ok(String::from_utf8_lossy(&listed)
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != "osd")
        .map(str::to_owned)
        .collect())
}

/// Pages are rendered at this resolution, Tesseract's best for body text,
/// unless the page is so large the raster would pass [`MAX_RASTER_BYTES`].
pub const OCR_DPI: u32 = 300;

/// The largest raster handed to Tesseract: an 8-bit grey A3 page at 300 dpi
/// is 17 MiB. Larger pages are rendered at a lower resolution.
pub const MAX_RASTER_BYTES: u64 = 48 * 1024 * 1024;

/// Address space a child may take. Tesseract holds the raster a few times
/// over plus its models; poppler one raster and the document.
const CHILD_ADDRESS_SPACE: u64 = 2 * 1024 * 1024 * 1024;

/// A child that runs longer than this is killed and its pages given up (a
/// dense page takes Tesseract a few seconds on one core, a batch of eight
/// well under a minute).
const CHILD_TIMEOUT: Duration = Duration::from_secs(300);

/// Below this confidence a page is marked as doubtful wherever it is shown.
pub const LOW_CONFIDENCE: f64 = 0.6;

/// How a passage read by OCR is marked in search results and citations.
#[derive(
    Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
pub struct OcrMark {
    /// Tesseract's confidence in the page, 0–1.
    pub confidence: f64,
    /// Below [`LOW_CONFIDENCE`]: the text may be misread.
    pub doubtful: bool,
}

impl OcrMark {
    pub fn new(confidence: f64) -> OcrMark {
        OcrMark {
            confidence,
            doubtful: confidence < LOW_CONFIDENCE,
        }
    }
}

impl std::fmt::Display for OcrMark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let percent = (self.confidence * 100.0).round();
        if self.doubtful {
            write!(
                f,
                "read by OCR, {percent}% confident: the text may be misread"
            )
        } else {
            write!(f, "read by OCR, {percent}% confident")
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OcrError {
    /// OCR cannot run at all: a missing program or language, a bad setting.
    #[error("{0}")]
    Setup(String),
    /// This page or image could not be read; others may still be.
    #[error("{0}")]
    Page(String),
}

/// What Tesseract read on one page: paragraphs separated by blank lines,
/// its mean word confidence (0–1, weighted by word length), and where each
/// word is in the image.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Recognized {
    pub text: String,
    pub confidence: Option<f32>,
    #[serde(default)]
    pub words: Vec<OcrWord>,
}

/// A word Tesseract read: its bytes in the page's text, and its box in the
/// image in pixels from the top left.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct OcrWord {
    pub start: u32,
    pub end: u32,
    pub left: u32,
    pub top: u32,
    pub width: u32,
    pub height: u32,
}

/// How many pages one `pdftoppm` and one `tesseract` process take on.
/// Tesseract loads its models once per process, which takes as long as
/// reading a sparse page; eight pages to a process read such pages about
/// five times faster than a process each.
pub const PAGES_PER_BATCH: usize = 8;

/// Renders pages `first..=last` (1-based) of the PDF at `path` at `dpi` as
/// 8-bit grey PGM files in `dir`, and returns them by page number. A file
/// larger than `max_bytes` (a page whose size its media box did not tell)
/// is left out, so OCR never holds it.
pub fn rasterize_pdf_pages(
    path: &Path,
    first: u32,
    last: u32,
    dpi: u32,
    dir: &Path,
    max_bytes: u64,
) -> Result<Vec<(u32, PathBuf)>, OcrError> {
    let args: Vec<OsString> = vec![
        "-r".into(),
        dpi.to_string().into(),
        "-gray".into(),
        "-f".into(),
        first.to_string().into(),
        "-l".into(),
        last.to_string().into(),
        path.as_os_str().to_owned(),
        dir.join("p").into_os_string(),
    ];
    run("pdftoppm", &args, None, 64 * 1024)?;
    let listing = std::fs::read_dir(dir)
        .map_err(|e| OcrError::Page(format!("cannot list the rendered pages: {e}")))?;
    let mut pages = Vec::new();
    for entry in listing.flatten() {
        let name = entry.file_name();
        // pdftoppm names its files p-<page>.pgm, the page zero-padded.
        let page = name.to_str().and_then(|n| {
            n.strip_prefix("p-")?
                .strip_suffix(".pgm")?
                .parse::<u32>()
                .ok()
        });
        let small = entry
            .metadata()
            .is_ok_and(|m| m.len() <= max_bytes.saturating_add(64));
        if let (Some(page), true) = (page, small) {
            pages.push((page, entry.path()));
        }
    }
    pages.sort();
    Ok(pages)
}

/// Reads the page images `files` in one Tesseract process, one entry per
/// file in the same order (an image with no words reads as empty).
pub fn recognize_files(
    files: &[PathBuf],
    dpi: u32,
    settings: &OcrSettings,
) -> Result<Vec<Recognized>, OcrError> {
    let Some(dir) = files.first().and_then(|f| f.parent()) else {
        return Ok(Vec::new());
    };
    let list = dir.join("pages.txt");
    let mut names = String::new();
    for file in files {
        names.push_str(&file.to_string_lossy());
        names.push('\n');
    }
    std::fs::write(&list, names)
        .map_err(|e| OcrError::Page(format!("cannot write the page list: {e}")))?;
    let args: Vec<OsString> = vec![
        list.into_os_string(),
        "stdout".into(),
        "-l".into(),
        settings.language_arg()?.into(),
        "--psm".into(),
        "3".into(),
        "--dpi".into(),
        dpi.to_string().into(),
        "tsv".into(),
    ];
    let tsv = run("tesseract", &args, None, 64 * 1024 * 1024)?;
    let mut pages = parse_tsv(&String::from_utf8_lossy(&tsv));
    pages.resize(files.len(), Recognized::default());
    Ok(pages)
}

/// The resolution that keeps a page of `points` (1/72 inch) under
/// `max_bytes` of 8-bit grey, at most [`OCR_DPI`].
pub fn page_dpi(points: Option<(f64, f64)>, max_bytes: u64) -> u32 {
    let Some((width, height)) = points.filter(|(w, h)| *w > 0.0 && *h > 0.0) else {
        return OCR_DPI;
    };
    let at_full = width * height * (f64::from(OCR_DPI) / 72.0).powi(2);
    let cap = max_bytes.min(MAX_RASTER_BYTES) as f64;
    if at_full <= cap {
        return OCR_DPI;
    }
    let scaled = f64::from(OCR_DPI) * (cap / at_full).sqrt();
    (scaled.floor() as u32).max(1)
}

/// Reads `image` (any format leptonica knows: PGM, PNG, JPEG, TIFF, …).
/// A multi-page TIFF gives one entry per page.
pub fn recognize(
    image: &[u8],
    dpi: Option<u32>,
    settings: &OcrSettings,
) -> Result<Vec<Recognized>, OcrError> {
    let mut args: Vec<OsString> = vec![
        "stdin".into(),
        "stdout".into(),
        "-l".into(),
        settings.language_arg()?.into(),
        "--psm".into(),
        "3".into(),
    ];
    if let Some(dpi) = dpi {
        args.extend(["--dpi".into(), dpi.to_string().into()]);
    }
    args.push("tsv".into());
    let tsv = run("tesseract", &args, Some(image), 64 * 1024 * 1024)?;
    Ok(parse_tsv(&String::from_utf8_lossy(&tsv)))
}

/// Tesseract's TSV: one row per layout element, words at level 5 with
/// their block, paragraph and line numbers and a confidence (0–100).
fn parse_tsv(tsv: &str) -> Vec<Recognized> {
    struct Page {
        text: String,
        words: Vec<OcrWord>,
        paragraph: Option<(u32, u32)>,
        weighted: f64,
        letters: f64,
    }
    let mut pages: Vec<Page> = Vec::new();
    for row in tsv.lines().skip(1) {
        let cols: Vec<&str> = row.splitn(12, '\t').collect();
        if cols.len() < 12 || cols[0] != "5" {
            continue;
        }
        let number = |i: usize| cols[i].trim().parse::<u32>().unwrap_or(0);
        let word = cols[11].trim();
        if word.is_empty() {
            continue;
        }
        let page_index = number(1).saturating_sub(1) as usize;
        while pages.len() <= page_index.min(100_000) {
            pages.push(Page {
                text: String::new(),
                words: Vec::new(),
                paragraph: None,
                weighted: 0.0,
                letters: 0.0,
            });
        }
        let page = &mut pages[page_index.min(100_000)];
        let paragraph = Some((number(2), number(3)));
        if !page.text.is_empty() {
            page.text.push_str(if page.paragraph == paragraph {
                " "
            } else {
                "\n\n"
            });
        }
        page.paragraph = paragraph;
        let start = u32::try_from(page.text.len()).unwrap_or(u32::MAX);
        page.text.push_str(word);
        page.words.push(OcrWord {
            start,
            end: u32::try_from(page.text.len()).unwrap_or(u32::MAX),
            left: number(6),
            top: number(7),
            width: number(8),
            height: number(9),
        });
        if let Ok(confidence) = cols[10].trim().parse::<f64>() {
            if confidence >= 0.0 {
                let letters = word.chars().count() as f64;
                page.weighted += confidence.min(100.0) * letters;
                page.letters += letters;
            }
        }
    }
    pages
        .into_iter()
        .map(|page| Recognized {
            confidence: (page.letters > 0.0).then(|| (page.weighted / page.letters / 100.0) as f32),
            text: page.text,
            words: page.words,
        })
        .collect()
}

/// Runs `program` with `args`, feeding it `input`, and returns its
/// standard output, which may not pass `max_output` bytes. The child runs
/// under an address-space limit and a time limit, and is killed as soon as
/// its output passes the limit.
fn run(
    program: &'static str,
    args: &[OsString],
    input: Option<&[u8]>,
    max_output: u64,
) -> Result<Vec<u8>, OcrError> {
    let mut command = Command::new(program);
    command
        .args(args)
        // One thread per child: Folio already reads one file per core.
        .env("OMP_THREAD_LIMIT", "1")
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    limit_address_space(&mut command);
    let mut child = command.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => OcrError::Setup(missing_program(program)),
        _ => OcrError::Setup(format!("cannot start {program}: {e}")),
    })?;
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let (ended, out, err) = std::thread::scope(|scope| {
        if let (Some(bytes), Some(mut stdin)) = (input, stdin) {
            // A child that stops reading early closes the pipe; its exit
            // status then says what went wrong.
            scope.spawn(move || stdin.write_all(bytes));
        }
        let reader = scope.spawn(move || read_capped(stdout, max_output + 1));
        let errors = scope.spawn(move || read_capped(stderr, 4096));
        let ended = supervise(&mut child, || reader.is_finished());
        (
            ended,
            reader.join().unwrap_or_default(),
            errors.join().unwrap_or_default(),
        )
    });
    if out.len() as u64 > max_output {
        return Err(OcrError::Page(format!(
            "{program} produced more than {} MiB; skipped",
            max_output / (1024 * 1024)
        )));
    }
    match ended {
        Ended::Exited(status) if status.success() => Ok(out),
        Ended::Exited(status) => Err(failure(program, status, &err)),
        Ended::TimedOut => Err(OcrError::Page(format!(
            "{program} took more than {} s; skipped",
            CHILD_TIMEOUT.as_secs()
        ))),
        Ended::Lost(e) => Err(OcrError::Page(format!("lost track of {program}: {e}"))),
    }
}

fn read_capped(source: Option<impl Read>, cap: u64) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(source) = source {
        // A read error ends the output; the exit status says the rest.
        let _ = source.take(cap).read_to_end(&mut out);
    }
    out
}

enum Ended {
    Exited(std::process::ExitStatus),
    TimedOut,
    Lost(std::io::Error),
}

/// Waits for `child`, killing it past [`CHILD_TIMEOUT`] or once
/// `output_done` says its output stopped being read while it still runs
/// (the reader hit its cap, so the child would block on a full pipe).
fn supervise(child: &mut Child, output_done: impl Fn() -> bool) -> Ended {
    let deadline = Instant::now() + CHILD_TIMEOUT;
    let mut output_seen_done = None;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ended::Exited(status),
            Ok(None) => {}
            Err(e) => return Ended::Lost(e),
        }
        let now = Instant::now();
        if output_done() {
            // A child closes its output just before it exits; give it a
            // moment before deciding it is stuck.
            let since = *output_seen_done.get_or_insert(now);
            if now.duration_since(since) > Duration::from_secs(5) {
                return kill(child, Ended::TimedOut);
            }
        }
        if now >= deadline {
            return kill(child, Ended::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn kill(child: &mut Child, why: Ended) -> Ended {
    let _ = child.kill();
    let _ = child.wait();
    why
}

fn failure(program: &str, status: std::process::ExitStatus, stderr: &[u8]) -> OcrError {
    let said = String::from_utf8_lossy(stderr);
    let said = said.trim();
    if program == "tesseract" && said.contains("Failed loading language") {
        return OcrError::Setup(format!(
            "an OCR language is not installed ({}); install its tesseract-ocr-<language> package, or change the OCR languages",
            said.lines().next().unwrap_or(said)
        ));
    }
    let last = said.lines().last().unwrap_or("no message");
    OcrError::Page(format!("{program} failed ({status}): {last}"))
}

fn missing_program(program: &str) -> String {
    let package = if program == "pdftoppm" {
        "poppler-utils"
    } else {
        "tesseract-ocr and tesseract-ocr-eng"
    };
    format!(
        "OCR needs {program}, which is not installed; install {package} (scripts/setup.sh does), or turn OCR off"
    )
}

/// Caps the child's address space, so a hostile image makes the child fail
/// an allocation instead of taking the machine's memory.
fn limit_address_space(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe and touches only the child,
    // between fork and exec; nothing else runs in the closure.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: CHILD_ADDRESS_SPACE as libc::rlim_t,
                rlim_max: CHILD_ADDRESS_SPACE as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsv_words_become_paragraphs_with_a_length_weighted_confidence() {
        let tsv = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n\
                   1\t1\t0\t0\t0\t0\t0\t0\t100\t100\t-1\t\n\
                   5\t1\t1\t1\t1\t1\t40\t50\t120\t30\t90\tHello\n\
                   5\t1\t1\t1\t2\t1\t40\t90\t44\t30\t60\tto\n\
                   5\t1\t1\t2\t1\t1\t0\t0\t1\t1\t-1\t \n\
                   5\t1\t2\t1\t1\t1\t0\t0\t1\t1\t30\tend\n\
                   5\t2\t1\t1\t1\t1\t0\t0\t1\t1\t95\tnext\n";
        let pages = parse_tsv(tsv);
        assert_eq!(pages.len(), 2);
        assert_eq!(pages[0].text, "Hello to\n\nend");
        let expected = (90.0 * 5.0 + 60.0 * 2.0 + 30.0 * 3.0) / 10.0 / 100.0;
        assert!((pages[0].confidence.unwrap() - expected).abs() < 1e-6);
        assert_eq!(pages[1].text, "next");
        let word = |start, end, left, top, width| OcrWord {
            start,
            end,
            left,
            top,
            width,
            height: 30,
        };
        assert_eq!(
            pages[0].words[..2],
            [word(0, 5, 40, 50, 120), word(6, 8, 40, 90, 44)]
        );
        assert_eq!(&pages[0].text[10..13], "end");
        assert_eq!((pages[0].words[2].start, pages[0].words[2].end), (10, 13));
    }

    #[test]
    fn a_page_with_no_words_has_no_confidence() {
        let pages = parse_tsv("level\n1\t1\t0\t0\t0\t0\t0\t0\t1\t1\t-1\t\n");
        assert!(pages.is_empty());
    }

    #[test]
    fn large_pages_are_rendered_at_a_lower_resolution() {
        let letter = Some((612.0, 792.0));
        assert_eq!(page_dpi(letter, u64::MAX), OCR_DPI);
        assert_eq!(page_dpi(None, u64::MAX), OCR_DPI);
        // A 200-inch square poster would be 3.6 GB at 300 dpi.
        let poster = Some((14_400.0, 14_400.0));
        let dpi = page_dpi(poster, u64::MAX);
        let bytes = (200.0 * f64::from(dpi)).powi(2);
        assert!(bytes <= MAX_RASTER_BYTES as f64, "{dpi} dpi");
        assert!(page_dpi(letter, 1024 * 1024) < OCR_DPI);
    }

    #[test]
    fn settings_name_a_missing_language_and_its_package() {
        let installed = vec!["eng".to_owned(), "deu".to_owned()];
        let mut settings = OcrSettings {
            enabled: true,
            languages: vec!["eng".to_owned(), "fra".to_owned()],
        };
        let error = settings.check(&installed).unwrap_err();
        assert!(error.contains("install tesseract-ocr-fra"), "{error}");
        settings.languages.pop();
        assert_eq!(settings.check(&installed), Ok(()));
        // Off, nothing needs to be installed.
        settings.enabled = false;
        assert_eq!(settings.check(&[]), Ok(()));
    }

    #[test]
    fn languages_are_names_not_flags() {
        let with = |languages: &[&str]| OcrSettings {
            enabled: true,
            languages: languages.iter().map(|s| s.to_string()).collect(),
        };
        assert_eq!(
            with(&["eng", "chi_sim"]).language_arg().unwrap(),
            "eng+chi_sim"
        );
        for bad in [&["--tessdata-dir"][..], &["eng deu"], &[""], &[]] {
            assert!(
                matches!(with(bad).language_arg(), Err(OcrError::Setup(_))),
                "{bad:?}"
            );
        }
    }
}
