//! Tells a crash from a kill in the reading log.
//!
//! A fault in Folio's own process (a segfault in a C library, an abort, a
//! stack overflow, an allocation that fails) raises a signal the process
//! can catch; a kill from outside (`kill -9`, the kernel's OOM killer)
//! cannot be caught. A handler for the fatal signals appends one line, `X`,
//! to every open reading log, then lets the signal take its usual course
//! (the handler that was there before, Rust's stack-overflow report
//! included, runs next). So a log that ends with a file read alone and an
//! `X` names the file that crashed Folio; one without was killed, and the
//! file gets one more try before it is blamed.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Once;

/// The line a crash leaves.
pub(crate) const CRASH_LINE: &[u8] = b"X\n";

const SIGNALS: [libc::c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGABRT,
    libc::SIGILL,
    libc::SIGFPE,
];

/// The open logs' descriptors (a process has one per data directory it
/// indexes, rarely more than two); -1 is a free slot.
static LOGS: [AtomicI32; 8] = [const { AtomicI32::new(-1) }; 8];

/// The handlers that were installed before ours, one per signal in
/// [`SIGNALS`], written once before ours is installed.
static mut PREVIOUS: [Option<libc::sigaction>; 5] = [None; 5];

static INSTALL: Once = Once::new();

/// Has crashes marked in the log open at `fd` from now on. A log that
/// does not fit is left unmarked: its crashes read as kills, which costs
/// a file one more read alone before it is set aside.
pub(crate) fn watch(fd: RawFd) {
    INSTALL.call_once(install);
    for slot in &LOGS {
        if slot
            .compare_exchange(-1, fd, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
    }
}

fn install() {
    for (i, &signal) in SIGNALS.iter().enumerate() {
        // SAFETY: sigaction with a zeroed struct and our handler is the
        // documented way to install one; PREVIOUS is written here, inside
        // the Once, before the handler that reads it can run.
        unsafe {
            let mut ours: libc::sigaction = std::mem::zeroed();
            ours.sa_sigaction = on_fatal_signal as *const () as usize;
            ours.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut ours.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, &ours, &mut previous) == 0 {
                (*std::ptr::addr_of_mut!(PREVIOUS))[i] = Some(previous);
            }
        }
    }
}

extern "C" fn on_fatal_signal(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    for slot in &LOGS {
        let fd = slot.load(Ordering::SeqCst);
        if fd >= 0 {
            // SAFETY: write(2) is async-signal-safe; the bytes are static.
            unsafe { libc::write(fd, CRASH_LINE.as_ptr().cast(), CRASH_LINE.len()) };
        }
    }
    let Some(i) = SIGNALS.iter().position(|&s| s == signal) else {
        return;
    };
    // SAFETY: PREVIOUS was written before this handler was installed.
    let previous = unsafe { (*std::ptr::addr_of!(PREVIOUS))[i] };
    match previous {
        Some(p) if p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN => {
            // SAFETY: calling the handler that was installed for this signal,
            // with the arguments the kernel gave ours, is what it expects.
            unsafe {
                if p.sa_flags & libc::SA_SIGINFO != 0 {
                    let handler: extern "C" fn(
                        libc::c_int,
                        *mut libc::siginfo_t,
                        *mut libc::c_void,
                    ) = std::mem::transmute(p.sa_sigaction);
                    handler(signal, info, context);
                } else {
                    let handler: extern "C" fn(libc::c_int) = std::mem::transmute(p.sa_sigaction);
                    handler(signal);
                }
            }
        }
        _ => {
            // SAFETY: back to the default action; returning re-runs the
            // faulting instruction (or abort re-raises), which now kills.
            unsafe { libc::signal(signal, libc::SIG_DFL) };
        }
    }
}

/// Stops marking the log open at `fd` (it is about to be closed).
pub(crate) fn forget(fd: RawFd) {
    for slot in &LOGS {
        let _ = slot.compare_exchange(fd, -1, Ordering::SeqCst, Ordering::SeqCst);
    }
}
