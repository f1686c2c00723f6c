//! Which model answers and how: the `[llm]` table of `folio.toml`.

use std::path::Path;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// llama.cpp inside the Folio process, running a GGUF file.
    Embedded,
    /// Any server speaking the OpenAI chat-completions protocol (llama.cpp
    /// server, Ollama, vLLM, LM Studio, OpenAI).
    Openai,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlmSettings {
    pub backend: Backend,
    /// For `embedded`, the GGUF file; for `openai`, the model name the server
    /// knows it by.
    pub model: String,
    /// For `openai`: the API root, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// For `openai`: sent as a bearer token when set.
    pub api_key: Option<String>,
    pub context_size: u32,
    pub temperature: f32,
    pub max_tokens: u32,
    /// CPU threads for the embedded model; all cores when unset.
    pub threads: Option<u32>,
    /// Layers offloaded to the GPU by the embedded model (needs the `cuda`
    /// build); 0 keeps everything on the CPU.
    pub gpu_layers: u32,
    pub timeout_secs: u64,
}

/// The kit's tiny model: fine for tests and a first run, weak at answering.
pub const KIT_MODEL: &str = "smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

impl LlmSettings {
    pub fn kit_default(models_dir: &Path) -> LlmSettings {
        LlmSettings {
            model: models_dir.join(KIT_MODEL).display().to_string(),
            ..LlmSettings::default()
        }
    }
}

impl Default for LlmSettings {
    fn default() -> Self {
        LlmSettings {
            backend: Backend::Embedded,
            model: String::new(),
            base_url: "http://127.0.0.1:8080/v1".to_string(),
            api_key: None,
            context_size: 4096,
            temperature: 0.2,
            max_tokens: 512,
            threads: None,
            gpu_layers: 0,
            timeout_secs: 300,
        }
    }
}
