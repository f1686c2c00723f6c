//! How far the information-gain graph covers the library, per rubric, and
//! what building it has cost: `folio graph status` and the app's graph panel.

use serde::Serialize;

use folio_store::Job;
pub use folio_store::{BuildCost, RubricStatus};

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct GraphStatus {
    /// Chunks with a vector from the active embedding model: the nodes a
    /// complete graph has.
    pub chunks: i64,
    /// One entry per rubric that has been built (or is being built).
    pub rubrics: Vec<RubricStatus>,
    /// Graph jobs, newest first.
    pub jobs: Vec<Job>,
}
