//! The settings view: what the user can change from the app, read from and
//! written to `folio.toml` (the same file the CLI reads), with the API key
//! kept in the key store instead.

use std::path::{Path, PathBuf};

use folio::config::{config_file_path, ConfigFile};
use folio::llm::settings::KIT_MODEL;
use folio::llm::{Backend, LlmSettings};
use folio::Config;
use serde::{Deserialize, Serialize};

use crate::ipc_error::IpcError;
use crate::secrets::{ApiKeyStorage, Secrets};

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct SettingsView {
    pub backend: Backend,
    /// The GGUF file (embedded) or the server's model name (openai).
    pub model: String,
    pub base_url: String,
    pub has_api_key: bool,
    pub context_size: u32,
    pub temperature: f32,
    pub max_tokens: u32,
    pub embedding_model_dir: String,
    pub data_dir: String,
    pub config_file: String,
    /// The tiny model of the offline kit, to offer as the default.
    pub kit_model: String,
    pub api_key_storage: ApiKeyStorage,
}

#[derive(Debug, Clone, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct SettingsInput {
    pub backend: Backend,
    pub model: String,
    pub base_url: String,
    /// `None` keeps the stored key; an empty string deletes it.
    pub api_key: Option<String>,
    pub context_size: u32,
    pub temperature: f32,
    pub max_tokens: u32,
    pub embedding_model_dir: String,
    pub data_dir: String,
}

pub fn kit_model(config: &Config) -> PathBuf {
    config.models_dir.join(KIT_MODEL)
}

pub fn view(config: &Config, secrets: &Secrets) -> SettingsView {
    let llm = &config.llm;
    SettingsView {
        backend: llm.backend,
        model: llm.model.clone(),
        base_url: llm.base_url.clone(),
        has_api_key: llm.api_key.is_some(),
        context_size: llm.context_size,
        temperature: llm.temperature,
        max_tokens: llm.max_tokens,
        embedding_model_dir: config.embedding_model_dir.display().to_string(),
        data_dir: config.data_dir.display().to_string(),
        config_file: config_file_path().display().to_string(),
        kit_model: kit_model(config).display().to_string(),
        api_key_storage: secrets.storage().clone(),
    }
}

/// Catches settings that cannot work before anything is written, naming
/// the field and what to do.
fn validate(input: &SettingsInput) -> Result<(), IpcError> {
    match input.backend {
        Backend::Embedded => {
            let model = Path::new(input.model.trim());
            if !model.is_file() {
                return Err(IpcError::invalid_settings(format!(
                    "Model file: {} does not exist; choose a .gguf file",
                    model.display()
                )));
            }
        }
        Backend::Openai => {
            let url = input.base_url.trim();
            if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10 {
                return Err(IpcError::invalid_settings(
                    "Server URL: enter the API root, e.g. http://127.0.0.1:11434/v1",
                ));
            }
            if input.model.trim().is_empty() {
                return Err(IpcError::invalid_settings(
                    "Model: enter the name the server knows the model by, e.g. qwen2.5:7b-instruct",
                ));
            }
        }
    }
    if !(256..=1_048_576).contains(&input.context_size) {
        return Err(IpcError::invalid_settings(
            "Context size: between 256 and 1048576 tokens",
        ));
    }
    if !(0.0..=2.0).contains(&input.temperature) {
        return Err(IpcError::invalid_settings("Temperature: between 0 and 2"));
    }
    if !(1..=32_768).contains(&input.max_tokens) {
        return Err(IpcError::invalid_settings(
            "Max answer tokens: between 1 and 32768",
        ));
    }
    if !Path::new(input.embedding_model_dir.trim())
        .join("model.onnx")
        .is_file()
    {
        return Err(IpcError::invalid_settings(
            "Embedding model: the folder must hold model.onnx and its tokenizer files",
        ));
    }
    if !Path::new(input.data_dir.trim()).is_absolute() {
        return Err(IpcError::invalid_settings(
            "Data location: enter an absolute folder path",
        ));
    }
    Ok(())
}

/// Writes the settings to `folio.toml` and the key store. The engine is
/// restarted by the caller.
pub fn save(input: &SettingsInput, secrets: &Secrets) -> Result<(), IpcError> {
    validate(input)?;
    let path = config_file_path();
    let mut file = ConfigFile::read(&path)?;
    let previous = file.llm.take().unwrap_or_default();
    file.llm = Some(LlmSettings {
        backend: input.backend,
        model: input.model.trim().to_string(),
        base_url: input.base_url.trim().to_string(),
        // The key never goes into the file.
        api_key: None,
        context_size: input.context_size,
        temperature: input.temperature,
        max_tokens: input.max_tokens,
        ..previous
    });
    file.embedding.model_dir = Some(input.embedding_model_dir.trim().into());
    file.data_dir = Some(input.data_dir.trim().into());
    if let Some(key) = &input.api_key {
        secrets.store(key)?;
    }
    file.write(&path)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(dir: &Path) -> SettingsInput {
        let models = dir.join("emb");
        std::fs::create_dir_all(&models).unwrap();
        std::fs::write(models.join("model.onnx"), b"x").unwrap();
        SettingsInput {
            backend: Backend::Openai,
            model: "qwen".into(),
            base_url: "http://127.0.0.1:8080/v1".into(),
            api_key: None,
            context_size: 4096,
            temperature: 0.2,
            max_tokens: 512,
            embedding_model_dir: models.display().to_string(),
            data_dir: dir.join("data").display().to_string(),
        }
    }

    #[test]
    fn bad_fields_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let ok = input(dir.path());
        assert!(validate(&ok).is_ok());
        let cases = [
            (
                SettingsInput {
                    base_url: "localhost:8080".into(),
                    ..ok.clone()
                },
                "Server URL",
            ),
            (
                SettingsInput {
                    model: " ".into(),
                    ..ok.clone()
                },
                "Model",
            ),
            (
                SettingsInput {
                    backend: Backend::Embedded,
                    model: "/nope.gguf".into(),
                    ..ok.clone()
                },
                "Model file",
            ),
            (
                SettingsInput {
                    temperature: 3.0,
                    ..ok.clone()
                },
                "Temperature",
            ),
            (
                SettingsInput {
                    data_dir: "relative".into(),
                    ..ok.clone()
                },
                "Data location",
            ),
            (
                SettingsInput {
                    embedding_model_dir: "/nope".into(),
                    ..ok.clone()
                },
                "Embedding model",
            ),
        ];
        for (bad, field) in cases {
            let e = validate(&bad).unwrap_err();
            assert_eq!(e.code, "invalid_settings");
            assert!(e.message.starts_with(field), "{}", e.message);
        }
    }
}
