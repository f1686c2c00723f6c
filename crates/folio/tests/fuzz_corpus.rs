//! Replays every committed fuzz input through the fuzz harness: the
//! minimised corpora in `fuzz/corpus/<target>/` and the reproducers of past
//! findings in `fuzz/regressions/<target>/`. The harness asserts each
//! parser's invariants, so this keeps every finding fixed on stable Rust,
//! with no fuzzer installed (`fuzz/run.sh` runs the fuzzers themselves).

#[path = "../../../fuzz/harness.rs"]
mod harness;

use std::collections::BTreeSet;
use std::fs;
use std::panic::catch_unwind;
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    folio_engine::config::checkout().join("fuzz")
}

/// The files in `dir`, none if it does not exist.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("readable folder entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn every_fuzz_target_is_replayed() {
    let targets: BTreeSet<String> = inputs(&fuzz_dir().join("fuzz_targets"))
        .iter()
        .filter_map(|path| Some(path.file_stem()?.to_str()?.to_string()))
        .collect();
    let replayed: BTreeSet<String> = harness::TARGETS
        .iter()
        .map(|(name, _)| name.to_string())
        .collect();
    assert_eq!(targets, replayed);
}

#[test]
fn committed_fuzz_inputs_keep_their_invariants() {
    let fuzz = fuzz_dir();
    let mut failed = Vec::new();
    for (target, check) in harness::TARGETS {
        let corpus = inputs(&fuzz.join("corpus").join(target));
        assert!(!corpus.is_empty(), "fuzz/corpus/{target} is empty");
        let regressions = inputs(&fuzz.join("regressions").join(target));
        for path in corpus.iter().chain(&regressions) {
            let data = fs::read(path).expect("readable fuzz input");
            // The harness panics on a broken invariant; the panic message
            // is printed, and every failing file is listed at the end.
            if catch_unwind(|| check(&data)).is_err() {
                failed.push(path.display().to_string());
            }
        }
    }
    assert!(
        failed.is_empty(),
        "fuzz inputs that break an invariant:\n{}",
        failed.join("\n")
    );
}
