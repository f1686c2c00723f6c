//! Asking a small indexed library with a scripted model, for testing the
//! methods' control flow. The model is scripted (`folio_llm::testing`);
//! the store, retrieval, the indexing of the notes and the prompts are the
//! real ones (`folio_index::testing`), and a run is answered and stored by
//! the real runner, as `Library::ask` does.

use tokio_util::sync::CancellationToken;

use crate::runner::{ask, Answering, AskRequest};
use crate::{EventSink, MethodError, RunEvent, Trace};
use folio_core::checkout::default_models_dir;
pub use folio_index::testing::{Indexed, ADA_NOTES, ADA_QUESTION};
use folio_llm::calibration::Calibrations;
use folio_llm::prompts::{Prompt, Prompts};
pub use folio_llm::testing::*;
use folio_llm::{Llm, LlmSettings};
use folio_store::{RunRecord, Thread};

/// An empty library in `dir`.
pub async fn library(dir: &std::path::Path) -> Indexed {
    Indexed::open(dir).await
}

/// A library in `dir` with `notes` (file name, text) written and indexed.
pub async fn library_with(dir: &std::path::Path, notes: &[(&str, &str)]) -> Indexed {
    Indexed::with(dir, notes).await
}

/// The model settings a library with default settings has: the kit's.
pub fn settings() -> LlmSettings {
    LlmSettings::kit_default(&default_models_dir())
}

/// Where the library in `dir` keeps its models' calibrations.
pub fn calibrations(library: &Indexed) -> Calibrations {
    Calibrations::at(library.dir().join("calibrations.json"))
}

/// Asks with `llm`: the run, or why it was refused before one was stored.
pub async fn answer(
    library: &Indexed,
    llm: &dyn Llm,
    request: &AskRequest,
    events: &EventSink,
) -> Result<RunRecord, MethodError> {
    let steps: Vec<&'static Prompt> = crate::prompts().collect();
    let prompts = Prompts::load(None, &steps).unwrap();
    let settings = settings();
    let calibration = calibrations(library)
        .of(&settings)
        .map_err(|e| e.to_string());
    let answering = Answering {
        retrieval: library.retrieval(),
        store: library.store(),
        llm,
        settings: &settings,
        calibration: calibration
            .as_ref()
            .map(Option::as_ref)
            .map_err(String::as_str),
        prompts: &prompts,
    };
    let request = AskRequest {
        scope: request.scope.placed(),
        ..request.clone()
    };
    ask(&answering, &request, events, &CancellationToken::new()).await
}

/// Asks with `llm` a request that must be refused, and returns why.
pub async fn refused(library: &Indexed, llm: &dyn Llm, request: &AskRequest) -> MethodError {
    answer(library, llm, request, &EventSink::default())
        .await
        .unwrap_err()
}

/// Asks with `llm` and returns the stored run with every event it emitted.
pub async fn ask_with(
    library: &Indexed,
    llm: &dyn Llm,
    request: &AskRequest,
) -> (RunRecord, Vec<RunEvent>) {
    EventSink::recording(async |events| answer(library, llm, request, events).await.unwrap()).await
}

/// Thread `id` as history shows it.
pub async fn thread(library: &Indexed, id: i64) -> Thread {
    library.store().whole_thread(id).await.unwrap().unwrap()
}

/// The "How this answer was built" section an export of `run` writes.
pub fn exported(run: &RunRecord) -> String {
    let trace: Trace = serde_json::from_value(run.trace.clone().unwrap()).unwrap();
    let mut out = String::new();
    trace.write_markdown(&mut out, &[]);
    out
}
