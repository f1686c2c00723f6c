//! The engine's event bus, and the one type every long piece of work
//! reports its progress in ([`Progress`]): every job on the bus, a graph
//! build to its caller, an evaluation in its own events too. The
//! CLI draws progress bars from it and the desktop shell forwards it to the
//! UI.

use std::time::Duration;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EngineEvent {
    JobProgress(JobProgress),
    DocumentIndexed {
        path: String,
        chunks: usize,
    },
    DocumentFailed {
        path: String,
        error: String,
    },
    DocumentRemoved {
        path: String,
    },
    /// A file read page by page (OCR) got one page further.
    DocumentReading {
        path: String,
        progress: Progress,
    },
    /// An index made before int8 vectors is having its vectors converted,
    /// once, before its first search or indexing pass.
    VectorsUpgrading {
        progress: Progress,
    },
    /// A large library's approximate vector index is being built from the
    /// database (`reason`: why there was no usable one); sqlite-vec answers
    /// searches meanwhile.
    VectorIndexBuilding {
        progress: Progress,
        reason: String,
    },
    /// The library changed since the background runtime last looked, by
    /// any process (the CLI, another window, this one): what is shown of
    /// its documents, folders and jobs may be stale.
    LibraryChanged,
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct JobProgress {
    pub job_id: i64,
    pub kind: String,
    pub phase: JobPhase,
    #[serde(flatten)]
    #[ts(flatten)]
    pub progress: Progress,
}

/// How far a pass of long work has got.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    pub failed: u64,
    /// Items per second so far in this pass.
    pub rate: Option<f64>,
    /// Seconds left at this pass's pace so far.
    pub eta_seconds: Option<f64>,
}

impl Progress {
    /// `done` of `total` items (`failed` among them) after `elapsed` of
    /// this pass; the rate and the time left follow from them.
    pub fn after(done: u64, total: u64, failed: u64, elapsed: Duration) -> Progress {
        let secs = elapsed.as_secs_f64();
        let rate = (secs > 0.0 && done > 0).then(|| done as f64 / secs);
        Progress {
            done,
            total,
            failed,
            rate,
            eta_seconds: rate.map(|r| total.saturating_sub(done) as f64 / r),
        }
    }
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
    /// An evaluation's questions being answered.
    Answering,
    /// An evaluation's answers before the judge model.
    Judging,
    Finished,
}

pub type EventSender = tokio::sync::broadcast::Sender<EngineEvent>;
