//! The engine's event bus. Long work reports through it; the CLI draws
//! progress bars from it and the desktop shell forwards it to the UI.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EngineEvent {
    JobProgress(JobProgress),
    DocumentIndexed { path: String, chunks: usize },
    DocumentFailed { path: String, error: String },
    DocumentRemoved { path: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct JobProgress {
    pub job_id: i64,
    pub kind: String,
    pub phase: JobPhase,
    pub done: u64,
    pub total: u64,
    pub failed: u64,
    pub rate: Option<f64>,
    pub eta_seconds: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "snake_case")]
pub enum JobPhase {
    Scanning,
    Indexing,
    Embedding,
    /// The information-gain graph's scorer at work.
    Scoring,
    Finished,
}

pub type EventSender = tokio::sync::broadcast::Sender<EngineEvent>;
