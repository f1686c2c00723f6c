//! Reading a person's document without writing to their disk.
//!
//! On a filesystem mounted `relatime` (Linux's default), reading a file
//! whose access time is not newer than its change time, or is a day old,
//! rewrites its inode. Indexing reads every file of a folder, so that is an
//! inode write per document: on ext4, ingesting the HotpotQA corpus (8,094
//! files) made the disk write 70.2 MB with access times kept and 32.7 MB
//! mounted `noatime`, against the 32.0 MB the ingest itself wrote (2026-11-28,
//! `folio bench ingest write-amp` on a loop-mounted ext4). Where the system
//! allows it (the reader owns the file, or may act as its owner), the file is
//! opened with `O_NOATIME`; elsewhere it is read as usual.

use std::fs::File;
use std::io::Read as _;
use std::path::Path;

/// The whole file at `path`.
pub fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut file = open(path)?;
    let mut bytes = Vec::with_capacity(file.metadata().map_or(0, |m| m.len() as usize));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(target_os = "linux")]
fn open(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let without_atime = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOATIME)
        .open(path);
    match without_atime {
        // Not the file's owner: the kernel refuses the flag, not the read.
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => File::open(path),
        opened => opened,
    }
}

#[cfg(not(target_os = "linux"))]
fn open(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt as _;
    use std::time::Duration;

    fn accessed(path: &Path) -> (i64, i64) {
        let m = std::fs::metadata(path).unwrap();
        (m.atime(), m.atime_nsec())
    }

    /// Sets the access time two days before the modification time, so
    /// that any read the filesystem records must move it.
    fn age(path: &Path) {
        let modified = std::fs::metadata(path).unwrap().modified().unwrap();
        let file = File::options().write(true).open(path).unwrap();
        file.set_times(
            std::fs::FileTimes::new()
                .set_accessed(modified - Duration::from_secs(2 * 86_400))
                .set_modified(modified),
        )
        .unwrap();
    }

    #[test]
    fn reading_a_source_leaves_its_access_time_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("note.md");
        std::fs::write(&path, "# Title\n\nSome words.").unwrap();

        age(&path);
        let before = accessed(&path);
        assert_eq!(read(&path).unwrap(), b"# Title\n\nSome words.");
        assert_eq!(accessed(&path), before, "read() moved the access time");

        // The control: a plain read on the same file does move it, unless
        // this filesystem records no access times at all.
        age(&path);
        let aged = accessed(&path);
        std::fs::read(&path).unwrap();
        if accessed(&path) == aged {
            eprintln!(
                "this filesystem records no access times: the check above proves nothing here"
            );
        }
    }

    #[test]
    fn a_missing_file_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let e = read(&dir.path().join("gone.md")).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }
}
