//! A saved index file mapped for serving, in huge pages where the system
//! offers them.
//!
//! A search at efSearch 512 visits thousands of nodes spread over the whole
//! file (532 MB at a million chunks). In 4 KiB pages nearly every visit
//! misses the TLB and walks the page tables. Mapped at a 2 MiB boundary with
//! `MADV_HUGEPAGE`, a file whose pages are read in by faults on the mapping
//! enters the page cache as 2 MiB folios (on filesystems with large folios:
//! ext4 from Linux 6.16, XFS from 5.18) and is mapped one page-table entry
//! per 2 MiB. On the 1M-chunk index of `folio bench scale`, interleaving
//! 200 queries between two copies in one process, search p50 was 0.76–0.80×
//! with 2 MiB pages what it was with 4 KiB pages (2026-11-28, 2-core
//! machine). The pages stay the file's: clean, shared and reclaimable, as
//! with usearch's own view. Where the kernel or filesystem cannot, the same
//! mapping is served in 4 KiB pages.
//!
//! Pages already cached in small folios stay small, so a freshly saved
//! file is dropped from the cache ([`drop_cached`]): its first reader brings
//! it back in huge pages.
//!
//! Off Unix the file is read into memory instead.

use std::fs::File;

/// A whole file, read-only, for as long as this lives.
pub struct Mapping {
    #[cfg(unix)]
    start: std::ptr::NonNull<libc::c_void>,
    #[cfg(unix)]
    len: usize,
    #[cfg(not(unix))]
    bytes: Vec<u8>,
}

// The mapping is read-only and never moves, so any thread may read it.
#[cfg(unix)]
unsafe impl Send for Mapping {}
#[cfg(unix)]
unsafe impl Sync for Mapping {}

/// The size of a page-table entry one level up from the smallest page:
/// 2 MiB on x86-64 and on ARM64 with 4 KiB pages.
#[cfg(unix)]
const HUGE_PAGE: usize = 2 << 20;

#[cfg(unix)]
impl Mapping {
    /// `file`, mapped at a huge-page boundary and advised for huge pages.
    pub fn new(file: &File) -> std::io::Result<Mapping> {
        use std::os::fd::AsRawFd as _;
        let len = usize::try_from(file.metadata()?.len())
            .map_err(|_| std::io::Error::other("the file is larger than memory"))?;
        if len == 0 {
            return Err(std::io::Error::other("the file is empty"));
        }
        // SAFETY: plain mmap/munmap calls on ranges this function reserved;
        // the file mapping replaces part of the reservation (MAP_FIXED) and
        // the rest of the reservation is released.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE).max(4096) as usize;
            let mapped = len.div_ceil(page) * page;
            let reserved = mapped + HUGE_PAGE;
            let region = libc::mmap(
                std::ptr::null_mut(),
                reserved,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if region == libc::MAP_FAILED {
                return Err(std::io::Error::last_os_error());
            }
            let region = region as usize;
            let aligned = region.next_multiple_of(HUGE_PAGE);
            let start = libc::mmap(
                aligned as *mut libc::c_void,
                mapped,
                libc::PROT_READ,
                libc::MAP_SHARED | libc::MAP_FIXED,
                file.as_raw_fd(),
                0,
            );
            if start == libc::MAP_FAILED {
                let e = std::io::Error::last_os_error();
                libc::munmap(region as *mut libc::c_void, reserved);
                return Err(e);
            }
            if aligned > region {
                libc::munmap(region as *mut libc::c_void, aligned - region);
            }
            let end = aligned + mapped;
            if region + reserved > end {
                libc::munmap(end as *mut libc::c_void, region + reserved - end);
            }
            advise_huge_pages(start, mapped);
            Ok(Mapping {
                start: std::ptr::NonNull::new_unchecked(start),
                len,
            })
        }
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `len` readable bytes are mapped at `start` until drop.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr() as *const u8, self.len) }
    }
}

#[cfg(unix)]
impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the range was mapped by `new` and nothing borrows it now.
        unsafe {
            libc::munmap(self.start.as_ptr(), self.len);
        }
    }
}

#[cfg(target_os = "linux")]
unsafe fn advise_huge_pages(start: *mut libc::c_void, len: usize) {
    // Advice only: a kernel without transparent huge pages refuses it, and
    // the mapping serves in small pages.
    unsafe {
        libc::madvise(start, len, libc::MADV_HUGEPAGE);
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
unsafe fn advise_huge_pages(_start: *mut libc::c_void, _len: usize) {}

#[cfg(not(unix))]
impl Mapping {
    pub fn new(file: &File) -> std::io::Result<Mapping> {
        use std::io::Read as _;
        let mut bytes = Vec::new();
        (&*file).read_to_end(&mut bytes)?;
        Ok(Mapping { bytes })
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// Evicts `file`'s cached pages, which must be clean (synced), so that the
/// next reader through a [`Mapping`] brings them in as huge pages.
#[cfg(target_os = "linux")]
pub fn drop_cached(file: &File) {
    use std::os::fd::AsRawFd as _;
    // Advice only: where it is refused, the file is served as cached.
    // SAFETY: a valid descriptor; the call changes no memory of ours.
    unsafe {
        libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    }
}

#[cfg(not(target_os = "linux"))]
pub fn drop_cached(_file: &File) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::Write as _;

    /// On the disk the crate builds on: `/tmp` may be tmpfs, whose pages
    /// are the file itself and cannot be dropped.
    fn on_disk() -> tempfile::TempDir {
        let target = concat!(env!("CARGO_MANIFEST_DIR"), "/../../target");
        std::fs::create_dir_all(target).unwrap();
        tempfile::tempdir_in(target).unwrap()
    }

    /// Pages of `file` in the page cache, counted through a fresh mapping.
    fn cached_pages(path: &std::path::Path) -> usize {
        let mapping = Mapping::new(&File::open(path).unwrap()).unwrap();
        let page = 4096;
        let pages = mapping.len.div_ceil(page);
        let mut resident = vec![0u8; pages];
        // SAFETY: the vector has one byte per page of the mapped range.
        let rc =
            unsafe { libc::mincore(mapping.start.as_ptr(), mapping.len, resident.as_mut_ptr()) };
        assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
        resident.iter().filter(|b| **b & 1 == 1).count()
    }

    #[test]
    fn a_file_is_mapped_whole_at_a_huge_page_boundary_advised_for_huge_pages() {
        let dir = on_disk();
        let path = dir.path().join("index.bin");
        let content: Vec<u8> = (0..3 * HUGE_PAGE + 5).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &content).unwrap();
        let mapping = Mapping::new(&File::open(&path).unwrap()).unwrap();
        assert_eq!(mapping.bytes(), &content[..]);
        let start = mapping.start.as_ptr() as usize;
        assert_eq!(start % HUGE_PAGE, 0);

        // A kernel built without transparent huge pages refuses the advice.
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            return;
        }
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let entry = smaps
            .lines()
            .skip_while(|l| !l.starts_with(&format!("{start:x}-")))
            .find_map(|l| l.strip_prefix("VmFlags:"))
            .expect("the mapping is listed in /proc/self/smaps");
        assert!(
            entry.split_whitespace().any(|f| f == "hg"),
            "VmFlags:{entry}"
        );
    }

    #[test]
    fn a_dropped_file_leaves_the_page_cache_and_reads_back_the_same() {
        let dir = on_disk();
        let path = dir.path().join("index.bin");
        let content: Vec<u8> = (0..HUGE_PAGE + 3).map(|i| (i % 253) as u8).collect();
        let mut written = File::create(&path).unwrap();
        written.write_all(&content).unwrap();
        written.sync_all().unwrap();
        assert!(cached_pages(&path) > 0, "just written, so cached");

        drop_cached(&written);
        assert_eq!(cached_pages(&path), 0);
        let read = Mapping::new(&File::open(&path).unwrap()).unwrap();
        assert_eq!(read.bytes(), &content[..]);
    }
}
