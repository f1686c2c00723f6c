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

use crate::scan::mtime_ns;

/// How many times a file that changes while it is read is read again.
const TRIES: u32 = 3;

/// A whole file as it was at one moment, and its size and mtime then.
#[derive(Debug)]
pub struct Settled {
    pub bytes: Vec<u8>,
    pub size: u64,
    pub mtime_ns: i64,
}

/// Why a file could not be read whole.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    /// Written to, truncated or replaced in place during every try.
    KeptChanging,
}

/// The whole file at `path`, read while nothing wrote to it: its size and
/// mtime, taken from the open file before and after the read, must agree,
/// or it is read again. A file replaced by a rename keeps the open one
/// whole (the new one has another mtime, so the next pass reads it); one
/// truncated or rewritten in place would otherwise be stored half old,
/// half new, under a size and mtime that say it is current.
pub fn read(path: &Path) -> Result<Settled, ReadError> {
    for _ in 0..TRIES {
        let mut file = open(path).map_err(ReadError::Io)?;
        let before = file.metadata().map_err(ReadError::Io)?;
        let mut bytes = Vec::with_capacity(before.len() as usize);
        file.read_to_end(&mut bytes).map_err(ReadError::Io)?;
        let after = file.metadata().map_err(ReadError::Io)?;
        let stamp = |m: &std::fs::Metadata| (m.len(), mtime_ns(m));
        if stamp(&before) == stamp(&after) && bytes.len() as u64 == after.len() {
            return Ok(Settled {
                bytes,
                size: after.len(),
                mtime_ns: mtime_ns(&after),
            });
        }
    }
    Err(ReadError::KeptChanging)
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
        assert_eq!(read(&path).unwrap().bytes, b"# Title\n\nSome words.");
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
        match read(&dir.path().join("gone.md")) {
            Err(ReadError::Io(e)) => assert_eq!(e.kind(), std::io::ErrorKind::NotFound),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_file_rewritten_in_place_while_read_is_never_read_torn() {
        // A writer truncates the file and writes one of two versions, over
        // and over; every read gives one version whole, with its size, or
        // says the file kept changing.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.md");
        let versions = [vec![b'a'; 1 << 20], vec![b'b'; 3 << 19]];
        std::fs::write(&path, &versions[0]).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (path, versions, stop) = (path.clone(), versions.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::fs::write(&path, &versions[i % 2]).unwrap();
                    i += 1;
                }
            })
        };
        let (mut whole, mut changing) = (0, 0);
        for _ in 0..300 {
            match read(&path) {
                Ok(read) => {
                    let first = read.bytes.first().copied();
                    assert!(
                        read.bytes.iter().all(|&b| Some(b) == first),
                        "a torn read of {} bytes",
                        read.bytes.len()
                    );
                    assert_eq!(read.size, read.bytes.len() as u64);
                    whole += 1;
                }
                Err(ReadError::KeptChanging) => changing += 1,
                Err(ReadError::Io(e)) => panic!("{e}"),
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        writer.join().unwrap();
        eprintln!("{whole} whole reads, {changing} that kept changing");
    }
}
