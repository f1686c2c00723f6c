//! From files on disk to indexed documents: scanning, loading into structure
//! trees, chunking and the indexing pipeline. The watcher that keeps the
//! index current runs jobs, so it lives with them in `library`.

pub mod chunker;
pub mod loaders;
pub mod pipeline;
pub mod prepare;
pub mod scan;
pub mod structure_tree;

mod source_file;
