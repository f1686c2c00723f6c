//! Files on disk read into documents: scanning folders, loading each format
//! into a structure tree, chunking, and [`prepare`], which does all of it
//! for one file without touching a database. Indexing what this reads (the
//! pipeline, the watcher) is the engine's (`folio-engine`'s `library`).

pub mod chunker;
pub mod expansion;
#[cfg(feature = "fault-injection")]
pub mod fault;
pub mod loaders;
pub mod notes;
pub mod prepare;
pub mod scan;
pub mod skip;
pub mod structure_tree;
pub mod table;

mod source_file;
