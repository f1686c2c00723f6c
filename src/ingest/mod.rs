//! From files on disk to indexed documents: scanning, loading into structure
//! trees, chunking, the indexing pipeline and the watcher that keeps it current.

pub mod chunker;
pub mod loaders;
pub mod pipeline;
pub mod prepare;
pub mod scan;
pub mod structure_tree;
pub mod watcher;
