//! The checkout Folio was built from, and the model kit in it: where a
//! build run from its clone finds `models/` (fetched by `scripts/setup.sh`),
//! `prompts/` and `samples/` without being told.

use std::path::{Path, PathBuf};

/// The checkout's root: every crate lives at `crates/<name>/` in it.
pub fn checkout() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("a crate sits two folders below the checkout")
}

/// `FOLIO_MODELS_DIR`, else the kit that `scripts/setup.sh` fetched into this
/// checkout's `models/`.
pub fn default_models_dir() -> PathBuf {
    std::env::var_os("FOLIO_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| checkout().join("models"))
}
