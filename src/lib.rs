//! Folio's engine: folders of documents kept indexed in SQLite (structure
//! trees, chunks, sqlite-vec vectors, FTS5) and searched. No GUI dependency;
//! the `folio` CLI and the desktop shell are thin layers over [`Library`].

pub mod allocator;
pub mod atomic_file;
pub mod choice;
pub mod config;
pub mod embed;
pub mod error;
pub mod eval;
pub mod events;
pub mod export;
pub mod graph;
pub mod ingest;
pub mod library;
pub mod llm;
pub mod methods;
pub mod model_check;
pub mod retrieve;
pub mod rubric;
pub mod server_http;
pub mod stats;
pub mod store;
pub mod text;

pub use config::Config;
pub use error::{Error, Result};
pub use library::Library;
