//! A small library on disk for the tests of this crate and the crates above
//! it (with the `testing` feature): notes written to a folder and indexed by
//! the real pipeline into a real store with the kit's embedding model. No
//! `Library` and no job runtime: what sits above them is tested above them.

use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

use crate::pipeline::{Ingestor, PassSummary, Root, COMMIT_CHUNKS, INGEST_JOB};
use folio_core::checkout::default_models_dir;
use folio_documents::chunker::ChunkSizes;
use folio_documents::prepare::Limits;
use folio_embed::{EmbeddingModelFiles, EmbeddingSource, KIT_MODEL_DIR};
use folio_retrieve::{CopyLimits, CopySettings, RetrievalService};
use folio_store::{JobState, Store};

/// Three short notes a two-hop question needs two of.
pub const ADA_NOTES: &[(&str, &str)] = &[
    ("ada.md", "# Ada Lovelace\n\nAda Lovelace was born in London in 1815. She wrote the first published algorithm for the Analytical Engine.\n"),
    ("babbage.md", "# Charles Babbage\n\nCharles Babbage designed the Analytical Engine, a mechanical general-purpose computer, in 1837.\n"),
    ("london.md", "# London\n\nLondon is the capital of England and lies on the River Thames.\n"),
];
pub const ADA_QUESTION: &str =
    "Where was the woman who wrote the first algorithm for the Analytical Engine born?";

/// A store in a folder and the retrieval over it.
pub struct Indexed {
    store: Store,
    retrieval: RetrievalService,
    dir: PathBuf,
}

/// The kit's embedding model, as a library with default settings has it.
pub fn kit_embedding() -> EmbeddingSource {
    let models = default_models_dir();
    EmbeddingSource::Embedded(EmbeddingModelFiles::new(
        &models,
        &models.join(KIT_MODEL_DIR),
    ))
}

impl Indexed {
    /// An empty library in `dir`.
    pub async fn open(dir: &Path) -> Indexed {
        let store = Store::open(&dir.join("folio.sqlite")).await.unwrap();
        let (events, _) = tokio::sync::broadcast::channel(64);
        let copy = CopySettings {
            dir: dir.join("vector-index"),
            limits: CopyLimits::default(),
        };
        Indexed {
            retrieval: RetrievalService::new(store.clone(), kit_embedding(), copy, events),
            store,
            dir: dir.to_path_buf(),
        }
    }

    /// A library in `dir` with `notes` (file name, text) written to
    /// `dir/notes` and indexed.
    pub async fn with(dir: &Path, notes: &[(&str, &str)]) -> Indexed {
        let indexed = Indexed::open(dir).await;
        let folder = dir.join("notes");
        std::fs::create_dir_all(&folder).unwrap();
        for (name, text) in notes {
            std::fs::write(folder.join(name), text).unwrap();
        }
        let path = std::fs::canonicalize(&folder).unwrap();
        indexed
            .store
            .add_folder(&path.to_string_lossy())
            .await
            .unwrap();
        indexed.reconcile_all().await;
        indexed
    }

    /// The folder the library's files live in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn retrieval(&self) -> &RetrievalService {
        &self.retrieval
    }

    /// Brings the index up to date with every folder on disk, as the
    /// ingestion job does.
    pub async fn reconcile_all(&self) -> PassSummary {
        let roots: Vec<Root> = self
            .store
            .folders()
            .await
            .unwrap()
            .into_iter()
            .map(|f| Root {
                folder_id: f.id,
                path: PathBuf::from(f.path),
            })
            .collect();
        let job = self
            .store
            .create_job(INGEST_JOB, &serde_json::Value::Null, JobState::Queued)
            .await
            .unwrap();
        let (embedder, space) = self.retrieval.model().await.unwrap();
        let (events, _) = tokio::sync::broadcast::channel(64);
        let ingestor = Ingestor {
            store: self.store.clone(),
            embedder: embedder.clone(),
            space: space.clone(),
            limits: Limits {
                max_file_size: 64 * 1024 * 1024,
                chunk_sizes: ChunkSizes::default(),
                ocr: Default::default(),
                ocr_pages_dir: Some(self.dir.join("ocr-pages")),
                commit_chunks: COMMIT_CHUNKS,
            },
            events,
            reading: crate::quarantine::ReadingLog::shared(self.dir.join("reading")),
            stop: CancellationToken::new(),
        };
        ingestor.reconcile(&roots, job).await.unwrap()
    }
}
