//! The embedded model: fastembed over ONNX Runtime, loaded dynamically from
//! the model kit (never downloaded).

use std::path::Path;
use std::sync::OnceLock;

use fastembed::{
    InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
};

use super::{EmbedError, EmbeddingModelFiles, Result, KIT_MODEL_BLAKE3, KIT_MODEL_DIR};

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

/// The model in `files` and the name its vectors are stored under, which
/// identifies it by its weights, so a different file means new vectors.
pub(super) fn load(files: &EmbeddingModelFiles) -> Result<(TextEmbedding, String)> {
    let env = onnx_runtime(&files.onnx_runtime)?;
    let dir = &files.model_dir;
    let onnx = read(dir, "model.onnx", "embedding model (model.onnx)")?;
    let label = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    let digest = blake3::hash(&onnx).to_hex();
    if label == KIT_MODEL_DIR && digest.as_str() != KIT_MODEL_BLAKE3 {
        return Err(EmbedError::Damaged {
            path: dir.join("model.onnx"),
            reason: "its bytes are not the ones the kit placed".into(),
        });
    }
    let name = format!("{label}@{}", &digest[..12]);
    let tokenizer = TokenizerFiles {
        tokenizer_file: read(dir, "tokenizer.json", "tokenizer.json")?,
        config_file: read(dir, "config.json", "model config.json")?,
        special_tokens_map_file: read(dir, "special_tokens_map.json", "special_tokens_map.json")?,
        tokenizer_config_file: read(dir, "tokenizer_config.json", "tokenizer_config.json")?,
    };
    let model = UserDefinedEmbeddingModel::new(onnx, tokenizer).with_pooling(Pooling::Mean);
    let options = InitOptionsUserDefined::new()
        .with_environment(env)
        .with_execution_providers(execution_providers())
        .with_max_length(256);
    let model = TextEmbedding::try_new_from_user_defined(model, options).map_err(|e| {
        EmbedError::Damaged {
            path: dir.join("model.onnx"),
            reason: format!("ONNX Runtime cannot read it: {e}"),
        }
    })?;
    Ok((model, name))
}

#[cfg(feature = "cuda")]
fn execution_providers() -> Vec<ort::ep::ExecutionProviderDispatch> {
    vec![ort::ep::CUDA::default().build()]
}

#[cfg(not(feature = "cuda"))]
fn execution_providers() -> Vec<ort::ep::ExecutionProviderDispatch> {
    Vec::new()
}
