//! The settings view: what the user can change from the app, read from and
//! written to `folio.toml` (the same file the CLI reads), with the API key
//! kept in the key store instead. Settings decide where Folio sends the
//! documents' text (the model server) and which files it opens and writes,
//! so changes that did not come from a file dialog are confirmed by the
//! person first, and a stored key only ever goes to the server it was
//! entered for.

use std::path::{Path, PathBuf};

use folio_engine::config::{config_file_path, default_models_dir, ConfigFile};
use folio_engine::documents::loaders::ocr::installed_languages;
use folio_engine::documents::loaders::OcrSettings;
use folio_engine::embed::EmbeddingBackend;
use folio_engine::llm::settings::{KitModel, KIT_DEFAULT, KIT_MODELS};
use folio_engine::llm::{ApiKey, Backend, LlmSettings};
use folio_engine::Config;
use serde::{Deserialize, Serialize};

use crate::ipc_error::IpcError;
use crate::path_grants::PathGrants;
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
    pub embedding_backend: EmbeddingBackend,
    pub embedding_model_dir: String,
    /// The `/v1/embeddings` server's API root and model id (`openai`).
    pub embedding_base_url: String,
    pub embedding_model: String,
    pub data_dir: String,
    pub config_file: String,
    /// The offline kit's models that are in place here, the default first,
    /// offered beside the models found elsewhere on the computer.
    pub kit_models: Vec<KitFile>,
    pub api_key_storage: ApiKeyStorage,
    pub ocr: OcrSettings,
    /// The languages Tesseract has here, to choose from.
    pub ocr_languages_installed: Vec<String>,
    /// Why OCR cannot run here (Tesseract missing), if it cannot.
    pub ocr_unavailable: Option<String>,
}

#[derive(Debug, Clone, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct SettingsInput {
    pub backend: Backend,
    pub model: String,
    pub base_url: String,
    /// `None` keeps the stored key; an empty string deletes it.
    #[ts(as = "Option<String>")]
    pub api_key: Option<ApiKey>,
    pub context_size: u32,
    pub temperature: f32,
    pub max_tokens: u32,
    pub embedding_backend: EmbeddingBackend,
    pub embedding_model_dir: String,
    pub embedding_base_url: String,
    pub embedding_model: String,
    pub data_dir: String,
    pub ocr: OcrSettings,
}

/// A model of the offline kit, where it lies on this computer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct KitFile {
    /// The model in words, as its makers name it.
    pub label: String,
    pub path: String,
    pub bytes: u64,
    /// What it is for, in words.
    pub role: String,
    /// Whether it answers when nothing else is configured.
    pub default: bool,
}

/// The kit's models whose files are in `models_dir`.
fn kit_files(models_dir: &Path) -> Vec<KitFile> {
    KIT_MODELS
        .into_iter()
        .filter(|m| m.path(models_dir).is_file())
        .map(|m| KitFile {
            label: m.label.to_string(),
            path: m.path(models_dir).display().to_string(),
            bytes: m.bytes,
            role: m.role.to_string(),
            default: m == KIT_DEFAULT,
        })
        .collect()
}

/// The model that answers, as the app names it to the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct AnsweringModel {
    /// In words: a kit model's label, else the GGUF file's name, else the
    /// name the server knows the model by.
    pub name: String,
    /// The server's API root, when a server answers.
    pub server: Option<String>,
    /// The GGUF file's size, when the model is a file here that can be read.
    pub bytes: Option<u64>,
    /// Whether it is one of the offline kit's models.
    pub kit: bool,
}

pub fn answering_model(config: &Config) -> AnsweringModel {
    let llm = &config.llm;
    match llm.backend {
        Backend::Embedded => {
            let path = Path::new(&llm.model);
            let kit = KitModel::at(&config.models_dir, path);
            let name = match (kit, path.file_name()) {
                (Some(kit), _) => kit.label.to_string(),
                (None, Some(file)) => file.to_string_lossy().into_owned(),
                (None, None) => llm.model.clone(),
            };
            AnsweringModel {
                name,
                server: None,
                bytes: std::fs::metadata(path).ok().map(|m| m.len()),
                kit: kit.is_some(),
            }
        }
        Backend::Openai => AnsweringModel {
            name: llm.model.clone(),
            server: Some(llm.base_url.clone()),
            bytes: None,
            kit: false,
        },
    }
}

pub fn view(config: &Config, secrets: &Secrets) -> SettingsView {
    let llm = &config.llm;
    let (ocr_languages_installed, ocr_unavailable) = match installed_languages() {
        Ok(languages) => (languages, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    SettingsView {
        backend: llm.backend,
        model: llm.model.clone(),
        base_url: llm.base_url.clone(),
        has_api_key: llm.api_key.is_some(),
        context_size: llm.context_size,
        temperature: llm.temperature,
        max_tokens: llm.max_tokens,
        embedding_backend: config.embedding_backend,
        embedding_model_dir: config.embedding_model_dir.display().to_string(),
        embedding_base_url: config.embedding_server.base_url.clone(),
        embedding_model: config.embedding_server.model.clone(),
        data_dir: config.data_dir.display().to_string(),
        config_file: config_file_path().display().to_string(),
        kit_models: kit_files(&config.models_dir),
        api_key_storage: secrets.storage().clone(),
        ocr: config.ocr.clone(),
        ocr_languages_installed,
        ocr_unavailable,
    }
}

/// Catches settings that cannot work before anything is written (or asked),
/// naming the field and what to do.
pub fn validate(input: &SettingsInput) -> Result<(), IpcError> {
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
            if !is_api_root(&input.base_url) {
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
    match input.embedding_backend {
        EmbeddingBackend::Embedded => {
            if !Path::new(input.embedding_model_dir.trim())
                .join("model.onnx")
                .is_file()
            {
                return Err(IpcError::invalid_settings(
                    "Embedding model: the folder must hold model.onnx and its tokenizer files",
                ));
            }
        }
        EmbeddingBackend::Openai => {
            if !is_api_root(&input.embedding_base_url) {
                return Err(IpcError::invalid_settings(
                    "Embedding server URL: enter the API root, e.g. http://127.0.0.1:8080/v1",
                ));
            }
            if input.embedding_model.trim().is_empty() {
                return Err(IpcError::invalid_settings(
                    "Embedding model id: enter the name the server knows the embedding model by, e.g. nomic-embed-text",
                ));
            }
        }
    }
    if !Path::new(input.data_dir.trim()).is_absolute() {
        return Err(IpcError::invalid_settings(
            "Data location: enter an absolute folder path",
        ));
    }
    if input.ocr.enabled {
        let installed = installed_languages()
            .map_err(|e| IpcError::invalid_settings(format!("OCR languages: {e}")))?;
        input
            .ocr
            .check(&installed)
            .map_err(|e| IpcError::invalid_settings(format!("OCR languages: {e}")))?;
    }
    Ok(())
}

/// Whether `url` looks like a server's API root (a scheme and a host).
fn is_api_root(url: &str) -> bool {
    let url = url.trim();
    (url.starts_with("http://") || url.starts_with("https://")) && url.len() >= 10
}

/// What saving `input` would change that the person has not chosen in a
/// dialog, in words for a confirmation: a new model server (it will be sent
/// questions and passages of the documents), or files and folders typed
/// rather than picked. `current` is the configuration in use, if it loads.
/// What Folio offered itself is not typed: the kit's model files, and the
/// files and loopback servers it found this session (granted as it listed
/// them, `commands::settings::found_models`).
pub fn unconfirmed_changes(
    input: &SettingsInput,
    current: Option<&Config>,
    grants: &PathGrants,
) -> Vec<String> {
    let mut changes = Vec::new();
    let base_url = input.base_url.trim();
    let server_changed = current.is_none_or(|c| {
        c.llm.backend != Backend::Openai || !same_server(&c.llm.base_url, base_url)
    });
    if input.backend == Backend::Openai && server_changed && !grants.server_found(base_url) {
        changes.push(format!(
            "send your questions and passages of your documents to the model server {base_url}"
        ));
    }
    let embedding_url = input.embedding_base_url.trim();
    let embedding_server_changed = current.is_none_or(|c| {
        c.embedding_backend != EmbeddingBackend::Openai
            || !same_server(&c.embedding_server.base_url, embedding_url)
    });
    if input.embedding_backend == EmbeddingBackend::Openai && embedding_server_changed {
        changes.push(format!(
            "send the text of every document, and your questions, to the embedding server {embedding_url}"
        ));
    }
    let mut paths = vec![
        (
            "use the embedding model in",
            PathBuf::from(input.embedding_model_dir.trim()),
            current.map(|c| c.embedding_model_dir.clone()),
        ),
        (
            "keep its index in",
            PathBuf::from(input.data_dir.trim()),
            current.map(|c| c.data_dir.clone()),
        ),
    ];
    let models_dir = current.map_or_else(default_models_dir, |c| c.models_dir.clone());
    let model = PathBuf::from(input.model.trim());
    if input.backend == Backend::Embedded && KitModel::at(&models_dir, &model).is_none() {
        paths.insert(
            0,
            (
                "load the model file",
                model,
                current
                    .filter(|c| c.llm.backend == Backend::Embedded)
                    .map(|c| PathBuf::from(&c.llm.model)),
            ),
        );
    }
    for (what, path, now) in paths {
        let changed = now.as_deref() != Some(path.as_path());
        if changed && !grants.ungranted(std::slice::from_ref(&path)).is_empty() {
            changes.push(format!("{what} {}", path.display()));
        }
    }
    changes
}

/// The key to send when listing the models at `base_url`: the one typed,
/// or the stored one when it was entered for that same server.
pub fn key_for(
    base_url: &str,
    typed: Option<ApiKey>,
    current: Option<&LlmSettings>,
    stored: Option<ApiKey>,
) -> Option<ApiKey> {
    typed.or_else(|| {
        current
            .filter(|c| same_server(&c.base_url, base_url))
            .and(stored)
    })
}

/// Whether two server URLs name the same API root, a trailing slash aside.
fn same_server(a: &str, b: &str) -> bool {
    a.trim().trim_end_matches('/') == b.trim().trim_end_matches('/')
}

/// A stored key is sent only to the server it was entered for: moving to
/// another server with the key left as it is would hand it to a server the
/// person never gave it to.
fn check_key_follows_server(
    input: &SettingsInput,
    previous: &LlmSettings,
    key_stored: bool,
) -> Result<(), IpcError> {
    let moved = !same_server(&input.base_url, &previous.base_url);
    if input.backend == Backend::Openai && moved && key_stored && input.api_key.is_none() {
        return Err(IpcError::invalid_settings(format!(
            "API key: the stored key was entered for {}; enter it again to use it with {}, or clear it",
            previous.base_url,
            input.base_url.trim()
        )));
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
    check_key_follows_server(input, &previous, secrets.load().is_some())?;
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
    file.embedding.backend = input.embedding_backend;
    file.embedding.model_dir = Some(input.embedding_model_dir.trim().into());
    file.embedding.base_url = Some(input.embedding_base_url.trim().into());
    file.embedding.model = Some(input.embedding_model.trim().into());
    file.data_dir = Some(input.data_dir.trim().into());
    file.ocr = Some(input.ocr.clone());
    if let Some(key) = &input.api_key {
        secrets.store(key)?;
    }
    file.write(&path)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use folio_engine::llm::settings::{QWEN_0_5B, SMOLLM2};

    use super::*;

    #[test]
    fn listing_models_sends_the_stored_key_only_to_its_server() {
        let current = LlmSettings {
            backend: Backend::Openai,
            base_url: "http://127.0.0.1:8080/v1".into(),
            ..LlmSettings::default()
        };
        let key = |k: &str| Some(ApiKey::new(k));
        let exposed = |k: Option<ApiKey>| k.map(|k| k.expose().to_string());
        assert_eq!(
            exposed(key_for(
                "http://127.0.0.1:8080/v1/",
                None,
                Some(&current),
                key("stored")
            )),
            Some("stored".into())
        );
        assert_eq!(
            exposed(key_for(
                "http://elsewhere:8080/v1",
                None,
                Some(&current),
                key("stored")
            )),
            None,
            "another server never gets the stored key"
        );
        assert_eq!(
            exposed(key_for(
                "http://elsewhere:8080/v1",
                key("typed"),
                Some(&current),
                key("stored")
            )),
            Some("typed".into())
        );
    }

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
            embedding_backend: EmbeddingBackend::Embedded,
            embedding_model_dir: models.display().to_string(),
            embedding_base_url: "http://127.0.0.1:8081/v1".into(),
            embedding_model: String::new(),
            data_dir: dir.join("data").display().to_string(),
            ocr: OcrSettings::default(),
        }
    }

    #[test]
    fn a_stored_key_goes_only_to_the_server_it_was_entered_for() {
        let dir = tempfile::tempdir().unwrap();
        let previous = LlmSettings {
            backend: Backend::Openai,
            base_url: "http://127.0.0.1:8080/v1".into(),
            ..LlmSettings::default()
        };
        let same = input(dir.path());
        assert!(check_key_follows_server(&same, &previous, true).is_ok());
        let moved = SettingsInput {
            base_url: "https://elsewhere.example/v1".into(),
            ..same.clone()
        };
        let e = check_key_follows_server(&moved, &previous, true).unwrap_err();
        assert!(e.message.starts_with("API key"), "{}", e.message);
        assert!(check_key_follows_server(&moved, &previous, false).is_ok());
        let retyped = SettingsInput {
            api_key: Some(ApiKey::new("sk-new")),
            ..moved
        };
        assert!(check_key_follows_server(&retyped, &previous, true).is_ok());
    }

    #[test]
    fn a_new_server_and_typed_paths_need_confirming_picked_ones_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let typed = input(dir.path());
        let grants = PathGrants::default();
        let all = unconfirmed_changes(&typed, None, &grants);
        assert_eq!(all.len(), 3, "{all:?}");
        assert!(all[0].contains("http://127.0.0.1:8080/v1"), "{all:?}");

        let mut current = Config::new(Some(typed.data_dir.clone().into()), None);
        current.llm.backend = Backend::Openai;
        current.llm.base_url = "http://127.0.0.1:8080/v1/".into();
        current.embedding_model_dir = typed.embedding_model_dir.clone().into();
        assert_eq!(
            unconfirmed_changes(&typed, Some(&current), &grants),
            Vec::<String>::new(),
            "nothing changed"
        );

        let model = dir.path().join("picked.gguf");
        grants.grant(&model);
        let embedded = SettingsInput {
            backend: Backend::Embedded,
            model: model.display().to_string(),
            data_dir: dir.path().join("typed-data").display().to_string(),
            ..typed
        };
        let changes = unconfirmed_changes(&embedded, Some(&current), &grants);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert!(changes[0].contains("typed-data"), "{changes:?}");
    }

    #[test]
    fn the_kit_files_and_what_folio_found_need_no_confirming() {
        let dir = tempfile::tempdir().unwrap();
        let typed = input(dir.path());
        let mut current = Config::new(Some(typed.data_dir.clone().into()), None);
        current.embedding_model_dir = typed.embedding_model_dir.clone().into();
        current.models_dir = dir.path().join("models");
        let grants = PathGrants::default();

        let kit = SettingsInput {
            backend: Backend::Embedded,
            model: QWEN_0_5B.path(&current.models_dir).display().to_string(),
            ..typed.clone()
        };
        assert_eq!(
            unconfirmed_changes(&kit, Some(&current), &grants),
            Vec::<String>::new()
        );
        let lookalike = SettingsInput {
            model: QWEN_0_5B
                .path(&dir.path().join("elsewhere"))
                .display()
                .to_string(),
            ..kit.clone()
        };
        let changes = unconfirmed_changes(&lookalike, Some(&current), &grants);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert!(changes[0].starts_with("load the model file"), "{changes:?}");

        let changes = unconfirmed_changes(&typed, Some(&current), &grants);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert!(changes[0].contains("model server"), "{changes:?}");
        grants.grant_server("http://127.0.0.1:8080/v1/");
        assert_eq!(
            unconfirmed_changes(&typed, Some(&current), &grants),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_answering_model_is_named_by_its_label_its_file_or_its_server() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::new(Some(dir.path().join("data")), None);
        config.models_dir = dir.path().join("models");
        let kit = SMOLLM2.path(&config.models_dir);
        std::fs::create_dir_all(kit.parent().unwrap()).unwrap();
        std::fs::write(&kit, b"GGUF").unwrap();
        config.llm.backend = Backend::Embedded;
        config.llm.model = kit.display().to_string();
        assert_eq!(
            answering_model(&config),
            AnsweringModel {
                name: "SmolLM2-135M-Instruct (Q4_1)".into(),
                server: None,
                bytes: Some(4),
                kit: true,
            }
        );

        let own = dir.path().join("mine.Q8_0.gguf");
        std::fs::write(&own, b"GGUF and more").unwrap();
        config.llm.model = own.display().to_string();
        assert_eq!(
            answering_model(&config),
            AnsweringModel {
                name: "mine.Q8_0.gguf".into(),
                server: None,
                bytes: Some(13),
                kit: false,
            }
        );
        config.llm.model = dir.path().join("gone.gguf").display().to_string();
        assert_eq!(answering_model(&config).bytes, None);

        config.llm.backend = Backend::Openai;
        config.llm.model = "qwen2.5:7b".into();
        config.llm.base_url = "http://127.0.0.1:11434/v1".into();
        assert_eq!(
            answering_model(&config),
            AnsweringModel {
                name: "qwen2.5:7b".into(),
                server: Some("http://127.0.0.1:11434/v1".into()),
                bytes: None,
                kit: false,
            }
        );
    }

    #[test]
    fn only_the_kit_files_in_place_are_offered() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(kit_files(dir.path()), Vec::<KitFile>::new());
        for model in [QWEN_0_5B, KIT_DEFAULT] {
            let path = model.path(dir.path());
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, b"GGUF").unwrap();
        }
        let offered = kit_files(dir.path());
        let labels: Vec<(&str, bool)> = offered
            .iter()
            .map(|k| (k.label.as_str(), k.default))
            .collect();
        assert_eq!(
            labels,
            [(KIT_DEFAULT.label, true), (QWEN_0_5B.label, false)],
            "the default first, SmolLM2 absent"
        );
        assert_eq!(offered[0].bytes, KIT_DEFAULT.bytes);
    }

    #[test]
    fn a_new_embedding_server_needs_confirming_once() {
        let dir = tempfile::tempdir().unwrap();
        let typed = input(dir.path());
        let mut current = Config::new(Some(typed.data_dir.clone().into()), None);
        current.llm.backend = Backend::Openai;
        current.embedding_model_dir = typed.embedding_model_dir.clone().into();
        let grants = PathGrants::default();
        let to_server = SettingsInput {
            embedding_backend: EmbeddingBackend::Openai,
            embedding_model: "nomic-embed-text".into(),
            ..typed
        };
        let changes = unconfirmed_changes(&to_server, Some(&current), &grants);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert!(
            changes[0].contains("embedding server http://127.0.0.1:8081/v1"),
            "{changes:?}"
        );
        current.embedding_backend = EmbeddingBackend::Openai;
        current.embedding_server.base_url = "http://127.0.0.1:8081/v1/".into();
        assert_eq!(
            unconfirmed_changes(&to_server, Some(&current), &grants),
            Vec::<String>::new()
        );
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
            (
                SettingsInput {
                    embedding_backend: EmbeddingBackend::Openai,
                    embedding_base_url: "127.0.0.1:8081".into(),
                    embedding_model: "nomic-embed-text".into(),
                    ..ok.clone()
                },
                "Embedding server URL",
            ),
            (
                SettingsInput {
                    embedding_backend: EmbeddingBackend::Openai,
                    embedding_model: " ".into(),
                    ..ok.clone()
                },
                "Embedding model id",
            ),
        ];
        for (bad, field) in cases {
            let e = validate(&bad).unwrap_err();
            assert_eq!(e.code, "invalid_settings");
            assert!(e.message.starts_with(field), "{}", e.message);
        }
    }
}
