//! Which model answers and how: the `[llm]` table of `folio.toml`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use folio_core::choice::Choice;
pub use folio_core::server_http::ApiKey;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// llama.cpp inside the Folio process, running a GGUF file.
    Embedded,
    /// Any server speaking the OpenAI chat-completions protocol (llama.cpp
    /// server, Ollama, vLLM, LM Studio, OpenAI).
    Openai,
}

impl Choice for Backend {
    const ALL: &'static [Backend] = &[Backend::Embedded, Backend::Openai];

    fn as_str(self) -> &'static str {
        match self {
            Backend::Embedded => "embedded",
            Backend::Openai => "openai",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LlmSettings {
    pub backend: Backend,
    /// For `embedded`, the GGUF file; for `openai`, the model name the server
    /// knows it by.
    pub model: String,
    /// For `openai`: the API root, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// For `openai`: sent as a bearer token when set.
    #[schemars(with = "Option<String>")]
    pub api_key: Option<ApiKey>,
    pub context_size: u32,
    pub temperature: f32,
    pub max_tokens: u32,
    /// CPU threads for the embedded model; all cores when unset.
    pub threads: Option<u32>,
    /// Layers offloaded to the GPU by the embedded model (needs the `cuda`
    /// build); 0 keeps everything on the CPU.
    pub gpu_layers: u32,
    pub timeout_secs: u64,
    /// For `openai`: requests the server is sent at once; more wait their
    /// turn. One by default: llama-cpp-python answers one at a time and
    /// cuts a stream short when another request arrives. Raise it for a
    /// server that serves several (llama.cpp's server with `-np`, vLLM).
    pub parallel: u32,
    /// For `embedded`: let a method's calls start from the prefix they
    /// share with a few earlier prompts kept in the model's cache, as
    /// llama.cpp's server does. Off by default: a prefix from the cache is
    /// computed in other batches, the last bits of the logits differ, and
    /// a small model decoding greedily then sometimes answers otherwise,
    /// so an answer would depend on what was asked before (an evaluation
    /// resumed after a crash would not give an uninterrupted run's answers).
    pub reuse_prefix: bool,
}

/// A language model of the offline kit, which `scripts/setup.sh` places
/// under `models/` (checked by sha256 there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KitModel {
    /// The name `folio models use` takes.
    pub name: &'static str,
    /// The GGUF file, relative to the models folder.
    pub file: &'static str,
    /// The model in words, as the upstream project names it.
    pub label: &'static str,
    /// The file's size in bytes.
    pub bytes: u64,
    /// What it is for.
    pub role: &'static str,
}

/// Qwen2.5-Coder-1.5B-Instruct (Apache-2.0), Q4_K_M: the default, the
/// smallest of the kit that answers the sample questions correctly.
pub const QWEN_1_5B: KitModel = KitModel {
    name: "qwen2.5-coder-1.5b",
    file: "qwen2.5-coder-1.5b-instruct/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    label: "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)",
    bytes: 1_117_320_768,
    role: "the default: answers correctly, about 3× slower than the 0.5B",
};

/// Qwen2.5-Coder-0.5B-Instruct (Apache-2.0), Q4_K_M: the faster choice.
pub const QWEN_0_5B: KitModel = KitModel {
    name: "qwen2.5-coder-0.5b",
    file: "qwen2.5-coder-0.5b-instruct/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    label: "Qwen2.5-Coder-0.5B-Instruct (Q4_K_M)",
    bytes: 491_400_064,
    role: "faster, weaker on knowledge the documents lack",
};

/// SmolLM2-135M-Instruct, Q4_1: answers nonsense, but fast; the tests that
/// check plumbing run on it.
pub const SMOLLM2: KitModel = KitModel {
    name: "smollm2-135m",
    file: "smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    label: "SmolLM2-135M-Instruct (Q4_1)",
    bytes: 98_362_432,
    role: "for tests of plumbing: fast, answers poorly",
};

/// The kit's models, the default first.
pub const KIT_MODELS: [KitModel; 3] = [QWEN_1_5B, QWEN_0_5B, SMOLLM2];

/// The model that answers when nothing else is configured.
pub const KIT_DEFAULT: KitModel = QWEN_1_5B;

impl KitModel {
    /// The kit model called `name` (see [`KitModel::name`]).
    pub fn named(name: &str) -> Option<KitModel> {
        KIT_MODELS.into_iter().find(|m| m.name == name)
    }

    /// Where the kit places it under `models_dir`.
    pub fn path(&self, models_dir: &Path) -> PathBuf {
        models_dir.join(self.file)
    }

    /// The kit model whose file `path` is, if it is one.
    pub fn at(models_dir: &Path, path: &Path) -> Option<KitModel> {
        KIT_MODELS.into_iter().find(|m| m.path(models_dir) == path)
    }
}

impl LlmSettings {
    /// These settings as they may be shown, printed or reported: a key, if
    /// any, reads [`ApiKey::SHOWN`].
    pub fn redacted(&self) -> LlmSettings {
        LlmSettings {
            api_key: self.api_key.as_ref().map(|_| ApiKey::new(ApiKey::SHOWN)),
            ..self.clone()
        }
    }

    /// The API key in words: [`ApiKey::SHOWN`], or `(none)`.
    pub fn api_key_shown(&self) -> &'static str {
        match self.api_key {
            Some(_) => ApiKey::SHOWN,
            None => "(none)",
        }
    }

    pub fn kit_default(models_dir: &Path) -> LlmSettings {
        LlmSettings {
            model: KIT_DEFAULT.path(models_dir).display().to_string(),
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
            parallel: 1,
            reuse_prefix: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-folio-unit-SECRET";

    fn keyed() -> LlmSettings {
        LlmSettings {
            backend: Backend::Openai,
            api_key: Some(ApiKey::new(KEY)),
            ..LlmSettings::default()
        }
    }

    #[test]
    fn debug_output_and_redacted_settings_never_hold_the_key() {
        let settings = keyed();
        let shown = settings.redacted();
        for text in [
            format!("{settings:?}"),
            format!("{shown:?}"),
            serde_json::to_string(&shown).unwrap(),
            toml::to_string(&shown).unwrap(),
        ] {
            assert!(!text.contains(KEY), "{text}");
            assert!(text.contains(ApiKey::SHOWN), "{text}");
        }
        assert_eq!(settings.api_key_shown(), ApiKey::SHOWN);
        assert_eq!(LlmSettings::default().api_key_shown(), "(none)");
        assert_eq!(LlmSettings::default().redacted().api_key, None);
    }

    #[test]
    fn folio_toml_keeps_the_key_itself() {
        let settings = keyed();
        let text = toml::to_string(&settings).unwrap();
        assert!(text.contains(&format!("api_key = \"{KEY}\"")), "{text}");
        assert_eq!(toml::from_str::<LlmSettings>(&text).unwrap(), settings);
    }
}
