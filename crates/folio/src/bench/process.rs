//! Measuring processes from the kernel's own accounts, so nothing a process
//! does can hide its cost: a child run to its end with its peak resident
//! memory (`wait4`'s `ru_maxrss`), and this process's resident memory now
//! and at its peak (`/proc/self/status`).

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context as _, Result};

/// This program, to run again as a child. On Linux it is the running image
/// itself (`/proc/self/exe`), so a benchmark that runs for an hour still
/// starts the binary it began with after a rebuild replaced the file.
pub fn this_program() -> Result<PathBuf> {
    let running = PathBuf::from("/proc/self/exe");
    if running.exists() {
        return Ok(running);
    }
    std::env::current_exe().context("locating this program")
}

/// A child process that ran to its end.
pub struct Exited {
    pub stdout: Vec<u8>,
    pub seconds: f64,
    pub peak_rss_bytes: u64,
    /// Its exit status; `None` if a signal ended it.
    pub code: Option<i32>,
}

impl Exited {
    /// `self`, or an error naming `what` unless it exited with status 0.
    pub fn succeeded(self, what: &str) -> Result<Exited> {
        match self.code {
            Some(0) => Ok(self),
            Some(code) => bail!("{what} failed (exit status {code})"),
            None => bail!("{what} was killed by a signal"),
        }
    }
}

/// Runs `command` with stdin closed and stdout read as it goes (stderr as
/// the caller set it), and waits for it with `wait4`.
pub fn run_measured(command: &mut Command) -> Result<Exited> {
    let program = command.get_program().to_string_lossy().into_owned();
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {program}"))?;
    let mut stdout = Vec::new();
    if let Some(mut pipe) = child.stdout.take() {
        pipe.read_to_end(&mut stdout)
            .with_context(|| format!("reading what {program} printed"))?;
    }
    let pid = libc::pid_t::try_from(child.id()).context("a child pid fits pid_t")?;
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills in; zeroes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own child, not yet waited for (the Child handle is
    // never waited on); status and usage are valid for writes.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if waited != pid {
        bail!("waiting for {program}: {}", std::io::Error::last_os_error());
    }
    Ok(Exited {
        stdout,
        seconds: started.elapsed().as_secs_f64(),
        // Linux reports ru_maxrss in KiB.
        peak_rss_bytes: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
    })
}

/// This process's resident memory in bytes.
pub struct Resident {
    pub now: u64,
    pub peak: u64,
    /// Of `now`, pages of mapped files (models, the approximate index):
    /// clean ones the kernel may drop and read again.
    pub file: u64,
    /// Of `file`, pages mapped 2 MiB at a time (the approximate index on a
    /// filesystem with large folios).
    pub file_huge: u64,
}

/// VmRSS, VmHWM and RssFile from `/proc/self/status`, FilePmdMapped from
/// `/proc/self/smaps_rollup`.
pub fn resident() -> Result<Resident> {
    let read =
        |file: &str| std::fs::read_to_string(file).with_context(|| format!("reading {file}"));
    let (status, rollup) = (read("/proc/self/status")?, read("/proc/self/smaps_rollup")?);
    Ok(Resident {
        now: kib_field(&status, "VmRSS:")?,
        peak: kib_field(&status, "VmHWM:")?,
        file: kib_field(&status, "RssFile:")?,
        file_huge: kib_field(&rollup, "FilePmdMapped:")?,
    })
}

/// The line `key` of a `/proc` listing in KiB, as bytes.
fn kib_field(listing: &str, key: &str) -> Result<u64> {
    listing
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kib| kib * 1024)
        .with_context(|| format!("no {key} in the listing"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_s_output_status_and_peak_memory_are_measured() {
        let mut ok = Command::new("sh");
        ok.args(["-c", "echo hello"]);
        let done = run_measured(&mut ok).unwrap().succeeded("sh").unwrap();
        assert_eq!(done.stdout, b"hello\n");
        assert!(done.peak_rss_bytes > 0);

        let mut failing = Command::new("sh");
        failing.args(["-c", "exit 3"]);
        let done = run_measured(&mut failing).unwrap();
        assert_eq!(done.code, Some(3));
        assert!(done.succeeded("sh").is_err());
    }

    #[test]
    fn this_process_is_resident() {
        let memory = resident().unwrap();
        assert!(memory.now > 0 && memory.peak >= memory.now);
        assert!(memory.file_huge <= memory.file && memory.file <= memory.now);
    }
}
