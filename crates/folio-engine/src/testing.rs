//! Small libraries for the engine's tests: a real `Library` (store,
//! retrieval, prompts, the job runtime) over notes, asked with the scripted
//! model of `folio_llm::testing`.

use std::path::Path;

use tokio_util::sync::CancellationToken;

use crate::{Config, Library};
pub use folio_index::testing::ADA_NOTES;
pub use folio_llm::testing::*;
use folio_llm::Llm;
use folio_methods::runner::AskRequest;
use folio_methods::{EventSink, RunEvent};
use folio_store::RunRecord;

/// An empty library in `dir` with the built-in prompts.
pub async fn library(dir: &Path) -> Library {
    let mut config = Config::new(Some(dir.to_path_buf()), None);
    config.prompts_dir = dir.join("no-overrides");
    Library::open(config).await.unwrap()
}

/// A library in `dir` with `notes` (file name, text) written and indexed.
pub async fn library_with(dir: &Path, notes: &[(&str, &str)]) -> Library {
    let library = library(dir).await;
    let docs = dir.join("notes");
    std::fs::create_dir_all(&docs).unwrap();
    for (name, text) in notes {
        std::fs::write(docs.join(name), text).unwrap();
    }
    library.add(&[docs]).await.unwrap();
    library.jobs().run_pending().await.unwrap();
    library
}

/// Asks with `llm` and returns the stored run with every event it emitted.
pub async fn ask_with(
    library: &Library,
    llm: &dyn Llm,
    request: &AskRequest,
) -> (RunRecord, Vec<RunEvent>) {
    EventSink::recording(async |events| {
        let cancel = CancellationToken::new();
        library
            .ask_with(llm, request, events, &cancel)
            .await
            .unwrap()
    })
    .await
}
