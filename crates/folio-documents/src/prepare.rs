//! The CPU half of indexing one file: read it, hash it, parse it into a
//! structure tree and cut it into chunks. Every failure becomes a value with a
//! reason; nothing here touches the database or the embedding model. The
//! one thing written is OCR's page log, so a long OCR read resumes.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use super::chunker::{chunk, ChunkPlan, ChunkSizes};
use super::loaders::{
    load, Format, LoadError, LoadOptions, OcrPage, OcrSettings, PageLog, DECOMPRESSION_FACTOR,
};
use super::notes::NoteFacts;
use super::scan::FileEntry;
use super::source_file::{self, ReadError};
use super::structure_tree::StructureTree;

#[derive(Debug, Clone)]
pub struct Limits {
    pub max_file_size: u64,
    pub chunk_sizes: ChunkSizes,
    pub ocr: OcrSettings,
    /// Where the pages OCR has read are kept until their document is
    /// stored (see [`PageLog`]); `None` reads a stopped file from page 1.
    pub ocr_pages_dir: Option<PathBuf>,
    /// Chunks an indexing pass gathers into one commit (see
    /// `pipeline::COMMIT_CHUNKS`, the default).
    pub commit_chunks: usize,
}

/// How preparing a file reports and stops its long work (OCR, page by page).
pub struct Reading<'a> {
    /// Pages read so far in this file, and pages it has to read.
    pub on_page: &'a (dyn Fn(u32, u32) + Sync),
    /// Whether to stop between pages; the file is then left for a later pass.
    pub interrupted: &'a (dyn Fn() -> bool + Sync),
}

#[derive(Debug)]
pub enum Prepared {
    Index {
        entry: FileEntry,
        hash: String,
        note: Option<String>,
        tree: StructureTree,
        facts: NoteFacts,
        chunks: Vec<ChunkPlan>,
        ocr_pages: Vec<OcrPage>,
    },
    /// Content identical to what is stored; only the timestamp moved.
    Unchanged {
        entry: FileEntry,
    },
    Failed {
        entry: FileEntry,
        error: String,
    },
    /// Deleted between the scan and the read: treated as a removal.
    Vanished {
        entry: FileEntry,
    },
    /// Stopped part way (a pause, cancel or shutdown during OCR); nothing is
    /// written, so the next pass reads the file again.
    Interrupted {
        entry: FileEntry,
    },
}

impl Prepared {
    /// The text it holds until it is embedded and stored: its tree's and
    /// its chunks' (a chunk's vector, made later, is about as large again).
    pub fn held_bytes(&self) -> u64 {
        match self {
            Prepared::Index { tree, chunks, .. } => {
                let nodes: usize = tree.nodes().iter().map(|n| n.text.len()).sum();
                let chunks: usize = chunks.iter().map(|c| c.text.len()).sum();
                (nodes + chunks) as u64
            }
            _ => 0,
        }
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

pub fn prepare(
    entry: FileEntry,
    stored_hash: Option<&str>,
    limits: &Limits,
    reading: &Reading,
) -> Prepared {
    let too_big = |size: u64| {
        format!(
            "file is {}, over the {} limit; raise it with --max-file-size or FOLIO_MAX_FILE_SIZE",
            mib(size),
            mib(limits.max_file_size)
        )
    };
    if entry.size > limits.max_file_size {
        let error = too_big(entry.size);
        return Prepared::Failed { entry, error };
    }
    let mut entry = entry;
    let bytes = match source_file::read(&entry.path) {
        // What is stored says which version of the file was read, so a
        // change after the scan is seen as such by the next pass.
        Ok(read) => {
            (entry.size, entry.mtime_ns) = (read.size, read.mtime_ns);
            read.bytes
        }
        Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Prepared::Vanished { entry }
        }
        Err(ReadError::Io(e)) => {
            return Prepared::Failed {
                entry,
                error: format!("unreadable: {e}"),
            }
        }
        Err(ReadError::KeptChanging) => {
            return Prepared::Failed {
                entry,
                error: "it changed each time it was read; it is read again at its next change"
                    .to_owned(),
            }
        }
    };
    if bytes.len() as u64 > limits.max_file_size {
        let error = too_big(bytes.len() as u64);
        return Prepared::Failed { entry, error };
    }
    let hash = blake3::hash(&bytes).to_hex().to_string();
    if stored_hash == Some(hash.as_str()) {
        return Prepared::Unchanged { entry };
    }
    let title = entry
        .path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A loader bug on one hostile file must fail that file, not the batch.
    // Only a PDF reads many pages one by one; an image is one OCR call.
    let resume = match (&limits.ocr_pages_dir, entry.format) {
        (Some(dir), Format::Pdf) if limits.ocr.enabled => {
            PageLog::open(dir, &hash, &limits.ocr).ok()
        }
        _ => None,
    };
    let options = LoadOptions {
        budget: limits.max_file_size.saturating_mul(DECOMPRESSION_FACTOR),
        ocr: limits.ocr.clone(),
        on_ocr_page: reading.on_page,
        interrupted: reading.interrupted,
        resume: resume.as_ref(),
    };
    #[cfg(feature = "fault-injection")]
    super::fault::strike(super::fault::Stage::Read, &entry.path);
    let loaded = catch_unwind(AssertUnwindSafe(|| {
        load(entry.format, &bytes, &title, &options)
    }));
    // The tree holds the text now; the file's bytes would only add their
    // size to the peak while chunking.
    drop(bytes);
    match loaded {
        Ok(Ok(doc)) => {
            let mut chunks = chunk(&doc.tree, limits.chunk_sizes);
            for chunk in &mut chunks {
                chunk.boxes = doc.boxes(&chunk.span);
            }
            Prepared::Index {
                entry,
                hash,
                note: doc.note,
                tree: doc.tree,
                facts: doc.facts,
                chunks,
                ocr_pages: doc.ocr_pages,
            }
        }
        Ok(Err(LoadError::Interrupted)) => Prepared::Interrupted { entry },
        Ok(Err(e)) => Prepared::Failed {
            entry,
            error: e.to_string(),
        },
        Err(_) => {
            let error = format!(
                "the {} parser crashed on this file; it was skipped",
                entry.format.as_str()
            );
            Prepared::Failed { entry, error }
        }
    }
}
