//! Text embeddings, from the embedded model (fastembed over ONNX Runtime,
//! `onnx.rs`) or from an OpenAI-compatible server (`server.rs`), as
//! `[embedding] backend` says. One embedder per process. The embedded model
//! sits behind a mutex because an ONNX session already uses every core it
//! is given; a server takes requests in parallel. Either way someone waiting
//! (a query, a method comparing its own texts) goes first: bulk work
//! ([`Embedder::embed_bulk`], indexing) embeds a turn at a time and lets
//! waiting callers in between.

mod error;
mod onnx;
mod server;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use fastembed::TextEmbedding;
use serde::{Deserialize, Serialize};

pub use error::{EmbedError, Result};
use folio_core::choice::Choice;
use server::ServerEmbeddings;
pub use server::ServerSettings;

/// Where the embedding model's files live inside the model kit.
#[derive(Debug, Clone)]
pub struct EmbeddingModelFiles {
    pub onnx_runtime: PathBuf,
    pub model_dir: PathBuf,
}

/// The kit's embedding model, relative to the models folder.
pub const KIT_MODEL_DIR: &str = "all-minilm-l6-v2-int8";

/// The blake3 of the kit's `model.onnx` (scripts/kit.manifest pins its
/// sha256; `crates/folio/tests/common_faults.rs` checks the two agree).
/// Loading hashes the weights anyway, to name their vectors, so a kit model
/// damaged after setup is caught before it embeds anything: it would still
/// load, and make vectors under a new name for the whole library.
pub const KIT_MODEL_BLAKE3: &str =
    "b2a68b34a45c28477ee9619f6f1ed03064209e3c3dae66aac2cedc4ee59c286d";

impl EmbeddingModelFiles {
    /// ONNX Runtime comes from `ORT_DYLIB_PATH` or the kit; the model from
    /// `model_dir`.
    pub fn new(models_dir: &Path, model_dir: &Path) -> Self {
        EmbeddingModelFiles {
            onnx_runtime: std::env::var_os("ORT_DYLIB_PATH")
                .map(PathBuf::from)
                .unwrap_or_else(|| models_dir.join("onnxruntime/libonnxruntime.so.1.31.1")),
            model_dir: model_dir.to_path_buf(),
        }
    }
}

/// Texts per ONNX run. Batches are formed from length-sorted texts, so most
/// rows in a batch need little padding. Eight is as fast as 32 on CPU (the
/// matrices are already large at 256 tokens) and keeps ONNX Runtime's memory
/// arena, which grows to the largest batch it has seen, well under 1 GB.
pub const BATCH_SIZE: usize = 8;

/// Texts bulk work embeds per turn with the embedded model: a query
/// arriving behind it waits for at most this many (about a third of a second
/// on two cores).
const BULK_TURN: usize = 4 * BATCH_SIZE;

/// Which model embeds: `[embedding] backend` in `folio.toml`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "lowercase")]
pub enum EmbeddingBackend {
    /// The kit's ONNX model, inside the Folio process.
    #[default]
    Embedded,
    /// A server speaking OpenAI's `/v1/embeddings`.
    Openai,
}

impl Choice for EmbeddingBackend {
    const ALL: &'static [EmbeddingBackend] =
        &[EmbeddingBackend::Embedded, EmbeddingBackend::Openai];

    fn as_str(self) -> &'static str {
        match self {
            EmbeddingBackend::Embedded => "embedded",
            EmbeddingBackend::Openai => "openai",
        }
    }
}

/// Where an embedder's vectors come from, as the configuration resolved it.
#[derive(Debug, Clone)]
pub enum EmbeddingSource {
    Embedded(EmbeddingModelFiles),
    Server(ServerSettings),
}

/// Both boxed: each is large, and an embedder keeps its one backend for life.
enum Backend {
    Onnx(Box<Mutex<TextEmbedding>>),
    Server(Box<ServerEmbeddings>),
}

impl Backend {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        match self {
            Backend::Onnx(model) => model
                .lock()
                .map_err(|_| EmbedError::Inference("the embedding model panicked earlier".into()))?
                .embed(texts, Some(BATCH_SIZE))
                .map_err(|e| EmbedError::Inference(e.to_string())),
            Backend::Server(server) => server.embed(texts),
        }
    }

    fn note(&self) -> Option<&str> {
        match self {
            Backend::Onnx(_) => None,
            Backend::Server(server) => server.note(),
        }
    }

    fn bulk_turn(&self) -> usize {
        match self {
            Backend::Onnx(_) => BULK_TURN,
            Backend::Server(server) => server.turn(),
        }
    }
}

pub struct Embedder {
    backend: Backend,
    /// Callers of [`Embedder::embed`] waiting for or holding the model;
    /// bulk work starts no turn while there are any.
    urgent: Mutex<usize>,
    urgent_done: Condvar,
    name: String,
    dim: usize,
}

/// Counts one urgent caller for as long as it lives, panics included.
struct Urgent<'a>(&'a Embedder);

impl<'a> Urgent<'a> {
    fn new(embedder: &'a Embedder) -> Self {
        *lock(&embedder.urgent) += 1;
        Urgent(embedder)
    }
}

impl Drop for Urgent<'_> {
    fn drop(&mut self) {
        let mut waiting = lock(&self.0.urgent);
        *waiting -= 1;
        if *waiting == 0 {
            self.0.urgent_done.notify_all();
        }
    }
}

/// The vector of a one-text call.
fn only(mut vectors: Vec<Vec<f32>>) -> Result<Vec<f32>> {
    vectors
        .pop()
        .ok_or_else(|| EmbedError::Inference("no vector returned".into()))
}

/// The counter stays right even if a holder panicked.
fn lock(count: &Mutex<usize>) -> MutexGuard<'_, usize> {
    count
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Embedder {
    /// The model `source` names, after one probe text shows it works and
    /// how long its vectors are.
    pub fn load(source: &EmbeddingSource) -> Result<Embedder> {
        let (backend, name) = match source {
            EmbeddingSource::Embedded(files) => {
                let (model, name) = onnx::load(files)?;
                (Backend::Onnx(Box::new(Mutex::new(model))), name)
            }
            EmbeddingSource::Server(settings) => {
                let server = ServerEmbeddings::connect(settings)?;
                let name = server.name();
                (Backend::Server(Box::new(server)), name)
            }
        };
        let dim = backend
            .embed(&["dimension probe"])?
            .first()
            .map(Vec::len)
            .unwrap_or(0);
        if dim == 0 {
            return Err(EmbedError::Model(
                "the model produced an empty vector".into(),
            ));
        }
        Ok(Embedder {
            backend,
            urgent: Mutex::new(0),
            urgent_done: Condvar::new(),
            name,
            dim,
        })
    }

    /// What the stored vectors are labelled with: the embedded model's
    /// weights, or the server's model id. A different name re-embeds.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How the model is used where it differs from the settings (a server
    /// sent one text a request because it mixes up batches), for `folio
    /// models`.
    pub fn note(&self) -> Option<&str> {
        self.backend.note()
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Unit vectors, one per text, in input order, for someone waiting:
    /// ahead of bulk work, which finishes at most its current turn first.
    pub fn embed<S: AsRef<str> + Send + Sync>(&self, texts: &[S]) -> Result<Vec<Vec<f32>>> {
        let _urgent = Urgent::new(self);
        self.in_length_order(texts, texts.len().max(1), || {})
    }

    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        only(self.embed(&[text])?)
    }

    /// [`Embedder::embed`] on a blocking thread, for async code: a caller
    /// waiting for the model must not hold an executor thread, or progress
    /// events and every other task on it stall too.
    pub async fn embed_off_executor(self: &Arc<Self>, texts: Vec<String>) -> Result<Vec<Vec<f32>>> {
        let embedder = self.clone();
        tokio::task::spawn_blocking(move || embedder.embed(&texts))
            .await
            .map_err(|e| EmbedError::Inference(format!("the embedding task failed: {e}")))?
    }

    /// [`Embedder::embed_one`] for async code (see [`Embedder::embed_off_executor`]).
    pub async fn embed_one_off_executor(self: &Arc<Self>, text: &str) -> Result<Vec<f32>> {
        only(self.embed_off_executor(vec![text.to_string()]).await?)
    }

    /// Like [`Embedder::embed`], for work nobody waits on (indexing): the
    /// texts are embedded a turn at a time, and before each turn the
    /// callers of `embed` that are waiting go first.
    pub fn embed_bulk<S: AsRef<str> + Send + Sync>(&self, texts: &[S]) -> Result<Vec<Vec<f32>>> {
        self.in_length_order(texts, self.backend.bulk_turn(), || {
            let mut waiting = lock(&self.urgent);
            while *waiting > 0 {
                waiting = self
                    .urgent_done
                    .wait(waiting)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
            }
        })
    }

    /// Embeds `texts` sorted by length (so a batch needs little padding),
    /// `turn` texts per hold of the model, calling `before_turn` before
    /// each; returns the vectors in input order.
    fn in_length_order<S: AsRef<str>>(
        &self,
        texts: &[S],
        turn: usize,
        before_turn: impl Fn(),
    ) -> Result<Vec<Vec<f32>>> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].as_ref().len());
        let sorted: Vec<&str> = order.iter().map(|&i| texts[i].as_ref()).collect();
        let mut vectors = Vec::with_capacity(texts.len());
        for part in sorted.chunks(turn) {
            before_turn();
            let part = self.backend.embed(part)?;
            if part.iter().any(|v| v.len() != self.dim) {
                return Err(EmbedError::Inference(format!(
                    "the model returned vectors of another length than its {}",
                    self.dim
                )));
            }
            vectors.extend(part);
        }
        let mut out = vec![Vec::new(); texts.len()];
        for (v, &i) in vectors.into_iter().zip(&order) {
            out[i] = v;
        }
        Ok(out)
    }
}
