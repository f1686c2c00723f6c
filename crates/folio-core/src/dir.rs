//! Whether this process may create files in a folder. A read-only mount or
//! a folder that belongs to someone else fails SQLite with "unable to open
//! database file"; asking the kernel says which it is.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Whether files can be created and written in `dir` (false for a folder
/// that does not exist). Root gets false on a read-only file system too.
pub fn writable(dir: &Path) -> bool {
    let Ok(path) = CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `path` is a valid NUL-terminated string; access(2) only reads it.
    unsafe { libc::access(path.as_ptr(), libc::W_OK) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_temporary_folder_is_writable_and_a_missing_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        assert!(writable(dir.path()));
        assert!(!writable(&dir.path().join("absent")));
    }
}
