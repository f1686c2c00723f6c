//! Folio's engine: folders of documents kept indexed in SQLite (structure
//! trees, chunks, sqlite-vec vectors, FTS5) and searched. No GUI dependency;
//! the `folio` CLI and the desktop shell are thin layers over [`Library`].

pub mod config;
pub mod error;
pub mod eval;
pub mod export;
pub mod library;
pub mod model_check;
pub mod models;
#[cfg(test)]
mod testing;

// The layers below, for the front ends (the CLI, the desktop shell), which
// depend on the engine alone.
pub use folio_core::{allocator, atomic_file, choice, events, path_text, server_http, stats, text};
pub use folio_documents as documents;
pub use folio_embed as embed;
pub use folio_index::{graph, pipeline};
pub use folio_llm as llm;
pub use folio_llm::rubric;
pub use folio_methods as methods;
pub use folio_retrieve as retrieve;
pub use folio_store as store;

pub use config::Config;
pub use error::{Error, Result};
pub use library::Library;
