//! How big the soak tests run: `crates/folio/tests/kill_loop.rs`,
//! `crates/folio/tests/load.rs`, `crates/folio/tests/hostile.rs` and
//! `crates/folio/tests/serve_load.rs`. At full size they take about forty
//! minutes between them, too much for every CI run, so by default (`cargo
//! test`, CI) they run at a smaller size that still checks every one of
//! their promises, and `FOLIO_SOAK=full` (what `scripts/soak.sh` sets) runs
//! them at the size docs/hardening.md quotes. The choice is made here
//! alone, so the tests cannot disagree about which size is running.
#![allow(dead_code)]

use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Soak {
    /// The default: what `cargo test` and CI run.
    Ci,
    /// `FOLIO_SOAK=full`: the size the soak tests were written for.
    Full,
}

impl Soak {
    /// The size `FOLIO_SOAK` asks for, printed so that a test's output says
    /// which one ran. A value other than `full` or `ci` is an error rather
    /// than the small size: a typo must not pass for a full run.
    pub fn from_env() -> Soak {
        let soak = match std::env::var("FOLIO_SOAK").as_deref() {
            Ok("full") => Soak::Full,
            Ok("ci") | Ok("") | Err(std::env::VarError::NotPresent) => Soak::Ci,
            other => panic!("FOLIO_SOAK={other:?}: expected `full` or `ci` (the default)"),
        };
        let said = soak.pick("CI (FOLIO_SOAK=full runs the full size)", "full");
        eprintln!("soak size: {said}");
        soak
    }

    /// The folder of HotpotQA passages and questions the soak tests read:
    /// at the CI size the repository's sample (samples/hotpotqa: 2,006
    /// passages, 3 questions); at the full size, whose load test ingests
    /// 8,000 passages, the whole set in `../shared/eval/hotpotqa` next to
    /// the checkout (8,094 passages, 200 questions), which the sample's
    /// first 2,000 passages and its questions begin. A missing one is an
    /// error that names it, never a smaller run.
    pub fn hotpotqa(self) -> PathBuf {
        match self {
            Soak::Ci => super::engine::samples().join("hotpotqa"),
            Soak::Full => {
                let shared = folio_engine::config::checkout().join("../shared/eval/hotpotqa");
                assert!(
                    shared.join("corpus.jsonl").is_file() && shared.join("dev.jsonl").is_file(),
                    "FOLIO_SOAK=full reads the whole HotpotQA corpus and its questions \
                     (corpus.jsonl, dev.jsonl) from {}, which is missing: the \
                     repository's sample (samples/hotpotqa) is too small for the full size; \
                     put the evaluation data at ../shared/eval next to the checkout, or run \
                     the CI size (FOLIO_SOAK unset)",
                    shared.display()
                );
                shared
            }
        }
    }

    /// `ci` at the CI size, `full` at the full size.
    pub fn pick<T>(self, ci: T, full: T) -> T {
        match self {
            Soak::Ci => ci,
            Soak::Full => full,
        }
    }
}

/// The seed of a test's kill points: `FOLIO_KILL_SEED` replays a failed
/// run's, otherwise the clock's nanoseconds.
pub fn kill_seed() -> u64 {
    std::env::var("FOLIO_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        })
}
