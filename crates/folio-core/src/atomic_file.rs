//! Replacing a file all at once: the new contents go to a temporary file in
//! the same directory, are synced, and are renamed over the target. A crash
//! leaves the old file or the new one, never half of either, and the file
//! has its final permissions from its first byte (an API key is never
//! readable by others, not even for a moment).

use std::io::Write;
use std::path::Path;

/// Writes `contents` to `path` with Unix permissions `mode`. The directory
/// must exist.
pub fn replace(path: &Path, contents: &[u8], mode: u32) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut file = tempfile::Builder::new()
        .prefix(".folio-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))
        .tempfile_in(dir)?;
    file.write_all(contents)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}
