//! The pages OCR has read in a file that is not stored yet, kept on disk so
//! that a scanned book stopped part way (pause, cancel, quit, kill -9)
//! resumes at the page it reached rather than at page 1.
//!
//! One append-only JSON-lines file per file content (its BLAKE3 hash) and
//! language setting, in a folder of the data directory. A line is written
//! and synced after each page; a line torn by a crash is ignored and that
//! page read again. The file goes once the document is stored (or failed),
//! and the folder is emptied after a pass that finished.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::ocr::{OcrSettings, Recognized};

#[derive(Debug, Serialize, Deserialize)]
struct Line {
    page: u32,
    #[serde(flatten)]
    read: Recognized,
}

/// The log of one file's OCR pages, open for appending.
pub struct PageLog {
    file: Mutex<File>,
    read: HashMap<u32, Recognized>,
}

impl PageLog {
    /// Opens (or starts) the log of the file whose content hashes to
    /// `hash`, read with `ocr`'s languages, under `dir`.
    pub fn open(dir: &Path, hash: &str, ocr: &OcrSettings) -> std::io::Result<PageLog> {
        std::fs::create_dir_all(dir)?;
        let path = log_path(dir, hash, ocr);
        let mut read = HashMap::new();
        if let Ok(existing) = File::open(&path) {
            for line in BufReader::new(existing).lines() {
                let Ok(line) = line else { break };
                // A torn last line (a crash mid-write) ends what is known.
                let Ok(entry) = serde_json::from_str::<Line>(&line) else {
                    break;
                };
                read.insert(entry.page, entry.read);
            }
        }
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        Ok(PageLog {
            file: Mutex::new(file),
            read,
        })
    }

    /// What OCR read on `page` before, if it got that far.
    pub fn page(&self, page: u32) -> Option<&Recognized> {
        self.read.get(&page)
    }

    /// Records a page just read. A failed write only costs the resume.
    pub fn record(&self, page: u32, recognized: &Recognized) {
        let line = Line {
            page,
            read: recognized.clone(),
        };
        let Ok(mut json) = serde_json::to_string(&line) else {
            return;
        };
        json.push('\n');
        if let Ok(mut file) = self.file.lock() {
            let _ = file
                .write_all(json.as_bytes())
                .and_then(|()| file.sync_data());
        }
    }

    /// Removes the log of a file that is now stored.
    pub fn forget(dir: &Path, hash: &str, ocr: &OcrSettings) {
        let _ = std::fs::remove_file(log_path(dir, hash, ocr));
    }

    /// Empties the folder once a pass has stored or failed every file.
    pub fn forget_all(dir: &Path) {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                if entry.path().extension().is_some_and(|e| e == "jsonl") {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
    }
}

/// `<hash>-<languages>.jsonl`: the hash is hex and the languages are
/// checked to be plain names before any page is read, so the name is ours.
fn log_path(dir: &Path, hash: &str, ocr: &OcrSettings) -> PathBuf {
    let languages: String = ocr
        .languages
        .join("+")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '+')
        .collect();
    let hash: String = hash.chars().filter(char::is_ascii_hexdigit).collect();
    dir.join(format!("{hash}-{languages}.jsonl"))
}

#[cfg(test)]
mod tests {
    use super::super::ocr::OcrWord;
    use super::*;

    fn page(text: &str) -> Recognized {
        Recognized {
            text: text.to_owned(),
            confidence: Some(0.9),
            words: vec![OcrWord {
                start: 0,
                end: 4,
                left: 10,
                top: 20,
                width: 30,
                height: 12,
            }],
        }
    }

    #[test]
    fn pages_read_before_a_crash_are_there_after_it_and_a_torn_line_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let ocr = OcrSettings::default();
        let log = PageLog::open(dir.path(), "ab12", &ocr).unwrap();
        log.record(1, &page("first"));
        log.record(2, &page("second"));
        drop(log);
        // A crash in the middle of the third page's line.
        let path = log_path(dir.path(), "ab12", &ocr);
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"{\"page\":3,\"te").unwrap();

        let log = PageLog::open(dir.path(), "ab12", &ocr).unwrap();
        assert_eq!(log.page(1), Some(&page("first")));
        assert_eq!(log.page(2), Some(&page("second")));
        assert_eq!(log.page(3), None);
        // Another language setting is another reading.
        let deu = OcrSettings {
            enabled: true,
            languages: vec!["deu".to_owned()],
        };
        assert_eq!(
            PageLog::open(dir.path(), "ab12", &deu).unwrap().page(1),
            None
        );

        PageLog::forget(dir.path(), "ab12", &ocr);
        assert!(!path.exists());
    }

    #[test]
    fn names_come_from_the_hash_and_language_names_only() {
        let ocr = OcrSettings {
            enabled: true,
            languages: vec!["../../etc".to_owned()],
        };
        let path = log_path(Path::new("/cache"), "../x/ab", &ocr);
        assert_eq!(path, Path::new("/cache/ab-etc.jsonl"));
    }
}
