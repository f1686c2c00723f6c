//! iG²RAG's information-gain graph (docs/methods.md, iG²RAG): chunks are nodes;
//! the language model grades how much each chunk's nearest neighbours add
//! to it, giving weighted directed edges. Built and kept up to date by a
//! background job; `retrieve::gain_walk` walks it at question time by
//! Personalized PageRank.

mod build;
mod neighbours;
mod scorer;
mod status;
#[cfg(test)]
mod tests;

pub use build::{BuildProgress, GraphBuild, GraphBuildOptions, DEFAULT_NEIGHBOURS, MAX_NEIGHBOURS};
pub use folio_llm::rubric::{GainClass, Grade, Rubric};
pub use scorer::parse_grades;
pub use status::{BuildCost, GraphStatus, RubricStatus};

/// The kind of the graph's jobs in the jobs table.
pub const GRAPH_JOB: &str = "gain-graph";
