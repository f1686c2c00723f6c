//! What is on disk under a watched root: the files Folio can read, with the
//! size and modification time that let unchanged files be skipped without
//! reading them, and the entries that could not be looked at, with a reason.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use walkdir::WalkDir;

use super::loaders::{Format, OcrSettings};
use super::skip::SkipRules;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    pub path: PathBuf,
    pub format: Format,
    pub size: u64,
    pub mtime_ns: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanError {
    pub path: PathBuf,
    pub error: String,
}

#[derive(Debug, Default)]
pub struct Scan {
    pub files: Vec<FileEntry>,
    pub errors: Vec<ScanError>,
}

pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Looks at one path that may or may not be a readable document. `None` means
/// Folio does not read this kind of file under these OCR settings (or it is
/// a directory).
pub fn inspect(path: &Path, ocr: &OcrSettings) -> Option<Result<FileEntry, ScanError>> {
    let format = Format::from_path(path).filter(|f| f.readable(ocr))?;
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => {
            return Some(Err(ScanError {
                path: path.to_path_buf(),
                error: format!("unreadable: {e}"),
            }))
        }
    };
    if meta.is_dir() {
        return None;
    }
    if !meta.is_file() {
        return Some(Err(ScanError {
            path: path.to_path_buf(),
            error: "not a regular file (a pipe, socket or device); skipped".into(),
        }));
    }
    Some(Ok(FileEntry {
        path: path.to_path_buf(),
        format,
        size: meta.len(),
        mtime_ns: mtime_ns(&meta),
    }))
}

pub fn scan(root: &Path, ocr: &OcrSettings) -> Scan {
    let mut out = Scan::default();
    let walker = WalkDir::new(root).follow_links(true).sort_by_file_name();
    let mut it = walker.into_iter();
    let mut skip = SkipRules::new(root);
    while let Some(entry) = it.next() {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let path = e.path().unwrap_or(root).to_path_buf();
                let error = match e.loop_ancestor() {
                    Some(ancestor) => format!("symlink loop: leads back to {}", ancestor.display()),
                    None => format!(
                        "unreadable: {}",
                        e.io_error()
                            .map(|io| io.to_string())
                            .unwrap_or(e.to_string())
                    ),
                };
                if Format::from_path(&path).is_some()
                    || e.loop_ancestor().is_some()
                    || e.depth() == 0
                {
                    out.errors.push(ScanError { path, error });
                }
                continue;
            }
        };
        if entry.depth() > 0 && skip.skips(entry.path(), entry.file_type().is_dir()) {
            if entry.file_type().is_dir() {
                it.skip_current_dir();
            }
            continue;
        }
        match inspect(entry.path(), ocr) {
            Some(Ok(f)) => out.files.push(f),
            Some(Err(e)) => out.errors.push(e),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_supported_files_and_skips_hidden_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "# A").unwrap();
        std::fs::write(dir.path().join("b.png"), [0u8, 1, 2]).unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/c.md"), "# hidden").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/d.txt"), "text").unwrap();
        std::fs::write(dir.path().join("e.zip"), [0u8, 1, 2]).unwrap();
        let names = |ocr: &OcrSettings| {
            let s = scan(dir.path(), ocr);
            assert!(s.errors.is_empty());
            s.files
                .iter()
                .map(|f| f.path.file_name().unwrap().to_string_lossy().to_string())
                .collect::<Vec<_>>()
        };
        // Images are documents only while OCR can read them.
        assert_eq!(names(&OcrSettings::default()), ["a.md", "b.png", "d.txt"]);
        let off = OcrSettings {
            enabled: false,
            ..OcrSettings::default()
        };
        assert_eq!(names(&off), ["a.md", "d.txt"]);
    }

    #[test]
    fn symlink_loops_and_dangling_links_are_reported_not_followed_forever() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(dir.path(), dir.path().join("sub/loop")).unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("missing.md"),
            dir.path().join("dangling.md"),
        )
        .unwrap();
        let s = scan(dir.path(), &OcrSettings::default());
        assert!(
            s.errors.iter().any(|e| e.error.starts_with("symlink loop")),
            "{:?}",
            s.errors
        );
        assert!(s
            .errors
            .iter()
            .any(|e| e.path.ends_with("dangling.md") && e.error.starts_with("unreadable")));
    }

    #[test]
    fn a_name_that_is_not_utf8_is_read_by_its_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let name = std::ffi::OsStr::from_bytes(b"caf\xe9.md");
        std::fs::write(dir.path().join(name), "# Café").unwrap();
        let s = scan(dir.path(), &OcrSettings::default());
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        assert_eq!(s.files[0].path, dir.path().join(name));
    }
}
