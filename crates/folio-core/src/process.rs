//! Whether a process that claimed work is still there. Work a dead process
//! owned (a job, a run, a file it was reading) is reported as interrupted
//! rather than forever running.

use std::path::Path;

/// Whether process `pid` exists (this one always does).
pub fn alive(pid: i64) -> bool {
    pid == std::process::id() as i64 || Path::new(&format!("/proc/{pid}")).exists()
}
