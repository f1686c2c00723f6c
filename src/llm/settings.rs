//! Which model answers and how: the `[llm]` table of `folio.toml`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::choice::Choice;
pub use crate::server_http::ApiKey;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
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
}

/// The kit's tiny model: fine for tests and a first run, weak at answering.
pub const KIT_MODEL: &str = "smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

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
            parallel: 1,
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
