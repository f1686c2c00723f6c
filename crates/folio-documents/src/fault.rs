//! Fault injection, compiled only into test builds (the `fault-injection`
//! feature, which only dev-dependencies turn on): makes the process die the
//! ways a real bug in a loader or a C library kills it, while it works on a
//! named file, so crash quarantine can be tested through the real binaries.
//!
//! `FOLIO_FAULT=<stage>:<kind>:<file name>`, where the stage is `read` (the
//! loader) or `embed` (the embedding of the file's chunks) and the kind is
//! `abort`, `stack` (overflows the stack), `segv` (writes through a null
//! pointer), `memory` (reserves memory until the address-space limit,
//! which must be set, makes an allocation fail), `kill` (SIGKILL at once,
//! as a person's `kill -9`) or `oom` (SIGKILL after two seconds, as the
//! OOM killer stops a process that has been filling memory).
//!
//! One kind does not kill: `hold` says `FOLIO_FAULT: holding <name>` on
//! stderr once the file's bytes are read, then stops the process (SIGSTOP)
//! until whoever runs it continues it, so a test can have another process
//! commit a newer read of the file first.

use std::path::Path;

/// Where in a file's work the fault strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Read,
    Embed,
}

/// Dies as `FOLIO_FAULT` says if it names this stage and `path`'s file name.
pub fn strike(stage: Stage, path: &Path) {
    let Ok(spec) = std::env::var("FOLIO_FAULT") else {
        return;
    };
    let mut parts = spec.splitn(3, ':');
    let (Some(at), Some(kind), Some(name)) = (parts.next(), parts.next(), parts.next()) else {
        panic!("FOLIO_FAULT is <stage>:<kind>:<file name>, not {spec:?}");
    };
    let stage_name = match stage {
        Stage::Read => "read",
        Stage::Embed => "embed",
    };
    if at != stage_name || path.file_name().is_none_or(|n| n != name) {
        return;
    }
    match kind {
        "abort" => std::process::abort(),
        "stack" => {
            std::hint::black_box(overflow(0));
        }
        "segv" => unsafe { std::ptr::null_mut::<u64>().write_volatile(1) },
        "memory" => exhaust(),
        "kill" => kill_self(),
        "hold" => {
            eprintln!("FOLIO_FAULT: holding {name}");
            // SAFETY: raise(3) on this process; SIGCONT resumes it.
            unsafe { libc::raise(libc::SIGSTOP) };
        }
        "oom" => {
            std::thread::sleep(std::time::Duration::from_secs(2));
            kill_self();
        }
        other => panic!("FOLIO_FAULT: unknown kind {other:?}"),
    }
}

fn kill_self() {
    // SAFETY: kill(2) on this process; SIGKILL cannot be caught.
    unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
}

/// Recurses until the stack's guard page stops it: on purpose.
#[inline(never)]
#[allow(unconditional_recursion)]
fn overflow(depth: u64) -> u64 {
    let frame = std::hint::black_box([depth; 512]);
    overflow(depth + 1) + frame[depth as usize % 512]
}

fn exhaust() -> ! {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0;
    assert!(
        ok && limit.rlim_cur != libc::RLIM_INFINITY,
        "FOLIO_FAULT=…:memory needs an address-space limit (ulimit -v), or it would take the machine's memory"
    );
    // Reserved, not touched: the limit is reached without the machine
    // lending the memory.
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        hoard.push(Vec::with_capacity(64 << 20));
        std::hint::black_box(&hoard);
    }
}
