//! Building what retrieval reads, as background work: the indexing pipeline
//! ([`pipeline`]: files read by `folio-documents`, embedded, committed whole
//! to the store, with [`quarantine`] setting aside a file that crashes
//! it) and the information-gain graph ([`graph`]: chunks graded
//! against their neighbours by the model). The engine's job runtime runs
//! both; the methods read what they build and never build it.

mod crash_signal;
mod error;
pub mod graph;
pub mod pipeline;
pub mod quarantine;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use error::{IndexError, Result};
