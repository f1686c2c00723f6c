//! Text embeddings with fastembed over ONNX Runtime, loaded dynamically from
//! the model kit (never downloaded). One model per process, shared behind a
//! mutex because an ONNX session already uses every core it is given.
//! Someone waiting (a query, a method comparing its own texts) goes first:
//! bulk work ([`Embedder::embed_bulk`], indexing) takes the model a few
//! batches at a time and lets waiting callers in between.

mod error;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

use fastembed::{
    InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
};

pub use error::{EmbedError, Result};

/// Where the embedding model's files live inside the model kit.
#[derive(Debug, Clone)]
pub struct EmbeddingModelFiles {
    pub onnx_runtime: PathBuf,
    pub model_dir: PathBuf,
}

/// The kit's embedding model, relative to the models folder.
pub const KIT_MODEL_DIR: &str = "all-minilm-l6-v2-int8";

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

/// Texts bulk work embeds per turn with the model: a query arriving behind
/// it waits for at most this many (about a third of a second on two cores).
const BULK_TURN: usize = 4 * BATCH_SIZE;

pub struct Embedder {
    model: Mutex<TextEmbedding>,
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

static ORT: OnceLock<std::result::Result<ort::environment::Environment, String>> = OnceLock::new();

/// ONNX Runtime may be loaded only once per process; later calls reuse it.
fn onnx_runtime(path: &Path) -> Result<ort::environment::Environment> {
    ORT.get_or_init(|| {
        if !path.exists() {
            return Err("file not found; run scripts/setup.sh or set ORT_DYLIB_PATH".to_string());
        }
        ort::init_from(path)
            .map_err(|e| e.to_string())?
            .with_name("folio")
            .build()
            .map_err(|e| e.to_string())
    })
    .clone()
    .map_err(|reason| EmbedError::Runtime {
        path: path.to_path_buf(),
        reason,
    })
}

fn read(dir: &Path, file: &str, what: &'static str) -> Result<Vec<u8>> {
    let path = dir.join(file);
    std::fs::read(&path).map_err(|_| EmbedError::MissingFile { what, path })
}

impl Embedder {
    pub fn load(files: &EmbeddingModelFiles) -> Result<Embedder> {
        let env = onnx_runtime(&files.onnx_runtime)?;
        let dir = &files.model_dir;
        let onnx = read(dir, "model.onnx", "embedding model (model.onnx)")?;
        let label = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        let name = format!("{label}@{}", &blake3::hash(&onnx).to_hex()[..12]);
        let tokenizer = TokenizerFiles {
            tokenizer_file: read(dir, "tokenizer.json", "tokenizer.json")?,
            config_file: read(dir, "config.json", "model config.json")?,
            special_tokens_map_file: read(
                dir,
                "special_tokens_map.json",
                "special_tokens_map.json",
            )?,
            tokenizer_config_file: read(dir, "tokenizer_config.json", "tokenizer_config.json")?,
        };
        let model = UserDefinedEmbeddingModel::new(onnx, tokenizer).with_pooling(Pooling::Mean);
        let options = InitOptionsUserDefined::new()
            .with_environment(env)
            .with_execution_providers(execution_providers())
            .with_max_length(256);
        let mut model = TextEmbedding::try_new_from_user_defined(model, options)
            .map_err(|e| EmbedError::Model(e.to_string()))?;
        let probe = model
            .embed(["dimension probe"], None)
            .map_err(|e| EmbedError::Model(e.to_string()))?;
        let dim = probe.first().map(Vec::len).unwrap_or(0);
        if dim == 0 {
            return Err(EmbedError::Model(
                "the model produced an empty vector".into(),
            ));
        }
        Ok(Embedder {
            model: Mutex::new(model),
            urgent: Mutex::new(0),
            urgent_done: Condvar::new(),
            name,
            dim,
        })
    }

    /// Identifies the model by its weights, so a different file means new vectors.
    pub fn name(&self) -> &str {
        &self.name
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
        self.in_length_order(texts, BULK_TURN, || {
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
            vectors.extend(
                self.model
                    .lock()
                    .map_err(|_| {
                        EmbedError::Inference("the embedding model panicked earlier".into())
                    })?
                    .embed(part, Some(BATCH_SIZE))
                    .map_err(|e| EmbedError::Inference(e.to_string()))?,
            );
        }
        let mut out = vec![Vec::new(); texts.len()];
        for (v, &i) in vectors.into_iter().zip(&order) {
            out[i] = v;
        }
        Ok(out)
    }
}

#[cfg(feature = "cuda")]
fn execution_providers() -> Vec<ort::ep::ExecutionProviderDispatch> {
    vec![ort::ep::CUDA::default().build()]
}

#[cfg(not(feature = "cuda"))]
fn execution_providers() -> Vec<ort::ep::ExecutionProviderDispatch> {
    Vec::new()
}
