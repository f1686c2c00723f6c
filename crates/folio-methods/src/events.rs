//! Progress of one run as it happens: the CLI prints these, the app forwards
//! them to the UI. Method-specific progress (a slot filled, a route step)
//! travels as the method's trace so far, which the UI draws as it grows.

use serde::Serialize;

/// The step whose tokens are the answer in every method that streams one:
/// what a front end shows as the answer being written.
pub const ANSWER_STEP: &str = "answer";

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RunEvent {
    Started {
        run_id: i64,
        thread_id: i64,
        method: &'static str,
    },
    /// A follow-up's rewrite, before retrieval reads it.
    Rewritten {
        rewrite: folio_store::Rewrite,
    },
    Retrieved {
        query: String,
        passages: usize,
    },
    LlmStarted {
        step: &'static str,
    },
    Token {
        step: &'static str,
        text: String,
    },
    LlmFinished {
        step: &'static str,
        prompt_tokens: u32,
        completion_tokens: u32,
        wall_ms: u64,
    },
    /// The trace as the method last recorded it.
    Trace {
        trace: super::Trace,
    },
    Finished {
        run_id: i64,
        status: folio_store::RunStatus,
    },
}
