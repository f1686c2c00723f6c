//! How the process's allocator is set up, by whichever front end starts it
//! (the CLI, the app), before any other thread exists.
//!
//! glibc gives a thread that finds the allocator busy an arena of its own,
//! up to eight per core, and a block freed in an arena stays there for that
//! arena's next allocation. Folio runs many threads that allocate (each
//! SQLite connection's worker, tokio's, the models'), and what each left
//! behind stayed resident: serving a 1M-chunk library, one arena per core
//! took resident memory from 1,150 MB to 1,094 MB (`folio bench scale`'s
//! serving process, 2-core machine, 2026-11-28).

/// Caps the allocator's arenas at one per core. Call it first in `main`:
/// glibc settles the cap when it makes its first extra arena.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cores = libc::c_int::try_from(cores).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt changes one of the allocator's settings; it is
        // called before any other thread runs.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, cores);
        }
    }
}
