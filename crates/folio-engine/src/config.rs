//! Where Folio keeps its index and finds its models, which language model
//! answers, and the limits it applies to input. Values come from the command
//! line, `FOLIO_*` variables and `folio.toml` in the platform config directory,
//! in that order of precedence, with defaults that work from a checkout after
//! `scripts/setup.sh`.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use folio_core::choice::Choice;
use folio_documents::chunker::ChunkSizes;
use folio_documents::loaders::OcrSettings;
use folio_documents::prepare::Limits;
use folio_embed::{EmbeddingBackend, EmbeddingModelFiles, EmbeddingSource, ServerSettings};
use folio_index::pipeline::COMMIT_CHUNKS;
use folio_llm::calibration::Calibrations;
use folio_llm::{ApiKey, Backend, LlmSettings};
use folio_retrieve::{CopyLimits, CopySettings};

pub use folio_core::checkout::{checkout, default_models_dir};

pub const DEFAULT_MAX_FILE_SIZE: u64 = 64 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct Config {
    pub data_dir: PathBuf,
    pub models_dir: PathBuf,
    pub max_file_size: u64,
    pub llm: LlmSettings,
    /// The model `folio eval --judge` asks whether an answer means a gold
    /// one; `None` asks the answering model (`llm`).
    pub judge: Option<LlmSettings>,
    /// Which model embeds: the embedded one in `embedding_model_dir`, or
    /// `embedding_server`'s.
    pub embedding_backend: EmbeddingBackend,
    /// A folder with `model.onnx` and its tokenizer files.
    pub embedding_model_dir: PathBuf,
    /// The server that embeds when `embedding_backend` is `openai`.
    pub embedding_server: ServerSettings,
    /// Prompt overrides: files here replace the built-in templates.
    pub prompts_dir: PathBuf,
    /// The `folio.toml` that was read, if one exists.
    pub config_file: Option<PathBuf>,
    /// Whether scanned pages and images are read with OCR, in which languages.
    pub ocr: OcrSettings,
    /// Where model calibrations are kept; `None`: `calibrations.json` in
    /// `data_dir`. An evaluation, which indexes into a folder of its own,
    /// pins the user's.
    pub calibrations_file: Option<PathBuf>,
    /// Chunks an indexing pass commits at once (`FOLIO_COMMIT_CHUNKS`):
    /// larger commits write less, smaller ones lose less to a crash.
    pub commit_chunks: usize,
    /// When searches use the approximate vector index
    /// (`FOLIO_APPROXIMATE_FROM` sets the size).
    pub vector_copy: CopyLimits,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("the configuration file {0} does not exist (FOLIO_CONFIG points at it)")]
    Missing(PathBuf),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{var}={value:?} is not valid: {message}")]
    Env {
        var: &'static str,
        value: String,
        message: String,
    },
    #[error("cannot save the settings to {path}: {message}")]
    Write { path: PathBuf, message: String },
}

/// The shape of `folio.toml`, which the desktop app's settings also edit.
/// Unknown keys are errors so a typo is reported instead of silently ignored.
#[derive(Debug, Default, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConfigFile {
    /// Where the index lives; `--data-dir` and `FOLIO_DATA_DIR` win over it.
    pub data_dir: Option<PathBuf>,
    pub llm: Option<LlmSettings>,
    /// The `[judge]` table: a model for `folio eval --judge`, in the same
    /// keys as `[llm]`.
    pub judge: Option<LlmSettings>,
    pub embedding: EmbeddingSection,
    pub prompts: PromptsSection,
    /// The `[ocr]` table: `enabled` and `languages`.
    pub ocr: Option<OcrSettings>,
}

/// The `[embedding]` table: the embedded model's folder, or a server's
/// `/v1/embeddings` (`backend = "openai"`, with `base_url` and `model`).
#[derive(Debug, Default, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct EmbeddingSection {
    pub backend: EmbeddingBackend,
    pub model_dir: Option<PathBuf>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key: Option<ApiKey>,
    /// Texts per request to the server.
    pub batch: Option<u32>,
    /// Requests the server is sent at once.
    pub parallel: Option<u32>,
    pub timeout_secs: Option<u64>,
}

#[derive(Debug, Default, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PromptsSection {
    pub dir: Option<PathBuf>,
}

impl ConfigFile {
    /// The file's settings; a file that does not exist has none.
    pub fn read(path: &Path) -> Result<ConfigFile, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ConfigFile::default()),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        toml::from_str(&text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }

    /// Replaces the file atomically, readable only by its owner since it
    /// may hold an API key.
    pub fn write(&self, path: &Path) -> Result<(), ConfigError> {
        let failed = |message: String| ConfigError::Write {
            path: path.to_path_buf(),
            message,
        };
        let text = toml::to_string_pretty(self).map_err(|e| failed(e.to_string()))?;
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| failed(e.to_string()))?;
        folio_core::atomic_file::replace(path, text.as_bytes(), 0o600)
            .map_err(|e| failed(e.to_string()))?;
        Ok(())
    }
}

/// `FOLIO_CONFIG`, else `folio.toml` in the platform config directory.
pub fn config_file_path() -> PathBuf {
    std::env::var_os("FOLIO_CONFIG")
        .map(PathBuf::from)
        .unwrap_or_else(|| platform_dir(dirs::config_dir()).join("folio.toml"))
}

impl Config {
    /// Built-in defaults only: no `folio.toml`, no environment. Tests and
    /// benchmarks use this so a developer's own settings never leak in.
    /// `data_dir` falls back to the platform data directory.
    pub fn new(data_dir: Option<PathBuf>, max_file_size: Option<u64>) -> Config {
        let data_dir = data_dir.unwrap_or_else(|| platform_dir(dirs::data_dir()));
        let models_dir = default_models_dir();
        Config {
            data_dir,
            llm: LlmSettings::kit_default(&models_dir),
            judge: None,
            embedding_backend: EmbeddingBackend::Embedded,
            embedding_model_dir: models_dir.join(folio_embed::KIT_MODEL_DIR),
            embedding_server: ServerSettings::default(),
            prompts_dir: platform_dir(dirs::config_dir()).join("prompts"),
            models_dir,
            max_file_size: max_file_size.unwrap_or(DEFAULT_MAX_FILE_SIZE),
            config_file: None,
            ocr: OcrSettings::default(),
            calibrations_file: None,
            commit_chunks: COMMIT_CHUNKS,
            vector_copy: CopyLimits::default(),
        }
    }

    /// The defaults, then `folio.toml` (`FOLIO_CONFIG` or the platform config
    /// directory), then `FOLIO_*` variables.
    pub fn load(
        data_dir: Option<PathBuf>,
        max_file_size: Option<u64>,
    ) -> Result<Config, ConfigError> {
        let data_dir_given = data_dir.is_some();
        let mut config = Config::new(data_dir, max_file_size);
        let path = config_file_path();
        if path.exists() {
            let file = ConfigFile::read(&path)?;
            config.apply_file(file, &path, data_dir_given);
        } else if std::env::var_os("FOLIO_CONFIG").is_some() {
            return Err(ConfigError::Missing(path));
        }
        config.apply_env()?;
        Ok(config)
    }

    fn apply_file(&mut self, file: ConfigFile, path: &Path, data_dir_given: bool) {
        // Relative paths in the file are relative to the file, not to wherever
        // the command happens to run.
        let base = path.parent().unwrap_or(Path::new("."));
        let kit_model = self.llm.model.clone();
        let located = |mut llm: LlmSettings| {
            if llm.backend == Backend::Embedded {
                llm.model = match llm.model.as_str() {
                    "" => kit_model.clone(),
                    file => base.join(file).display().to_string(),
                };
            }
            llm
        };
        if let Some(llm) = file.llm {
            self.llm = located(llm);
        }
        self.judge = file.judge.map(located);
        let embedding = file.embedding;
        self.embedding_backend = embedding.backend;
        if let Some(dir) = embedding.model_dir {
            self.embedding_model_dir = base.join(dir);
        }
        let server = &mut self.embedding_server;
        server.base_url = embedding.base_url.unwrap_or(server.base_url.clone());
        server.model = embedding.model.unwrap_or_default();
        server.api_key = embedding.api_key;
        server.batch = embedding.batch.unwrap_or(server.batch);
        server.parallel = embedding.parallel.unwrap_or(server.parallel);
        server.timeout_secs = embedding.timeout_secs.unwrap_or(server.timeout_secs);
        if let Some(ocr) = file.ocr {
            self.ocr = ocr;
        }
        if let Some(dir) = file.prompts.dir {
            self.prompts_dir = base.join(dir);
        }
        if let Some(dir) = file.data_dir.filter(|_| !data_dir_given) {
            self.data_dir = base.join(dir);
        }
        self.config_file = Some(path.to_path_buf());
    }

    fn apply_env(&mut self) -> Result<(), ConfigError> {
        let llm = &mut self.llm;
        env_override("FOLIO_LLM_BACKEND", |v| {
            llm.backend = Backend::parse(v).map_err(|e| e.to_string())?;
            Ok(())
        })?;
        env_override("FOLIO_LLM_MODEL", |v| Ok(llm.model = v.to_string()))?;
        env_override("FOLIO_LLM_BASE_URL", |v| Ok(llm.base_url = v.to_string()))?;
        env_override("FOLIO_LLM_API_KEY", |v| {
            Ok(llm.api_key = Some(ApiKey::new(v)))
        })?;
        env_override("FOLIO_LLM_CONTEXT_SIZE", |v| {
            Ok(llm.context_size = parse(v)?)
        })?;
        env_override("FOLIO_LLM_TEMPERATURE", |v| Ok(llm.temperature = parse(v)?))?;
        env_override("FOLIO_LLM_MAX_TOKENS", |v| Ok(llm.max_tokens = parse(v)?))?;
        env_override("FOLIO_LLM_THREADS", |v| Ok(llm.threads = Some(parse(v)?)))?;
        env_override("FOLIO_LLM_GPU_LAYERS", |v| Ok(llm.gpu_layers = parse(v)?))?;
        env_override("FOLIO_LLM_TIMEOUT_SECS", |v| {
            Ok(llm.timeout_secs = parse(v)?)
        })?;
        env_override("FOLIO_LLM_PARALLEL", |v| Ok(llm.parallel = parse(v)?))?;
        env_override("FOLIO_LLM_REUSE_PREFIX", |v| {
            Ok(llm.reuse_prefix = parse(v)?)
        })?;
        env_override("FOLIO_COMMIT_CHUNKS", |v| match parse(v)? {
            0 => Err("a commit holds at least one chunk".to_string()),
            n => Ok(self.commit_chunks = n),
        })?;
        env_override("FOLIO_APPROXIMATE_FROM", |v| {
            Ok(self.vector_copy.approximate_from = parse(v)?)
        })?;
        env_override("FOLIO_EMBEDDING_MODEL_DIR", |v| {
            Ok(self.embedding_model_dir = PathBuf::from(v))
        })?;
        env_override("FOLIO_EMBEDDING_BACKEND", |v| {
            self.embedding_backend = EmbeddingBackend::parse(v).map_err(|e| e.to_string())?;
            Ok(())
        })?;
        let server = &mut self.embedding_server;
        env_override("FOLIO_EMBEDDING_BASE_URL", |v| {
            Ok(server.base_url = v.to_string())
        })?;
        env_override(
            "FOLIO_EMBEDDING_MODEL",
            |v| Ok(server.model = v.to_string()),
        )?;
        env_override("FOLIO_EMBEDDING_API_KEY", |v| {
            Ok(server.api_key = Some(ApiKey::new(v)))
        })?;
        env_override("FOLIO_EMBEDDING_BATCH", |v| Ok(server.batch = parse(v)?))?;
        env_override("FOLIO_EMBEDDING_PARALLEL", |v| {
            Ok(server.parallel = parse(v)?)
        })?;
        env_override("FOLIO_EMBEDDING_TIMEOUT_SECS", |v| {
            Ok(server.timeout_secs = parse(v)?)
        })?;
        env_override("FOLIO_PROMPTS_DIR", |v| {
            Ok(self.prompts_dir = PathBuf::from(v))
        })?;
        env_override("FOLIO_OCR", |v| {
            Ok(self.ocr.enabled = match v.trim() {
                "on" | "1" | "true" => true,
                "off" | "0" | "false" => false,
                _ => return Err("use on or off".to_owned()),
            })
        })?;
        env_override("FOLIO_OCR_LANGUAGES", |v| {
            Ok(self.ocr.languages = v
                .split(['+', ','])
                .map(|l| l.trim().to_owned())
                .filter(|l| !l.is_empty())
                .collect())
        })?;
        Ok(())
    }

    /// The models' calibrated sufficiency thresholds.
    pub fn calibrations(&self) -> Calibrations {
        Calibrations::at(
            self.calibrations_file
                .clone()
                .unwrap_or_else(|| self.data_dir.join("calibrations.json")),
        )
    }

    pub fn database_path(&self) -> PathBuf {
        self.data_dir.join("folio.sqlite")
    }

    /// Where a large library's approximate vector index is kept, and from
    /// what size it is used.
    pub fn vector_copy_settings(&self) -> CopySettings {
        CopySettings {
            dir: self.data_dir.join("vector-index"),
            limits: self.vector_copy,
        }
    }

    pub fn embedding_files(&self) -> EmbeddingModelFiles {
        EmbeddingModelFiles::new(&self.models_dir, &self.embedding_model_dir)
    }

    /// The model that embeds, as `embedding_backend` chooses.
    pub fn embedding_source(&self) -> EmbeddingSource {
        match self.embedding_backend {
            EmbeddingBackend::Embedded => EmbeddingSource::Embedded(self.embedding_files()),
            EmbeddingBackend::Openai => EmbeddingSource::Server(self.embedding_server.clone()),
        }
    }

    /// The embedding model in words: its folder, or its id at its server.
    pub fn embedding_label(&self) -> String {
        match self.embedding_backend {
            EmbeddingBackend::Embedded => self.embedding_model_dir.display().to_string(),
            EmbeddingBackend::Openai => format!(
                "{} at {}",
                self.embedding_server.model, self.embedding_server.base_url
            ),
        }
    }

    pub fn limits(&self) -> Limits {
        Limits {
            max_file_size: self.max_file_size,
            chunk_sizes: ChunkSizes::default(),
            ocr: self.ocr.clone(),
            ocr_pages_dir: Some(self.data_dir.join("ocr-pages")),
            commit_chunks: self.commit_chunks,
        }
    }
}

fn platform_dir(base: Option<PathBuf>) -> PathBuf {
    base.unwrap_or_else(|| PathBuf::from(".")).join("folio")
}

fn parse<T: FromStr>(value: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    value.trim().parse().map_err(|e: T::Err| e.to_string())
}

/// Applies `set` to the variable's value when it is set and not empty.
fn env_override(
    var: &'static str,
    set: impl FnOnce(&str) -> Result<(), String>,
) -> Result<(), ConfigError> {
    match std::env::var(var) {
        Ok(value) if !value.is_empty() => set(&value).map_err(|message| ConfigError::Env {
            var,
            value: value.clone(),
            message,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_settings_apply_relative_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("folio.toml");
        std::fs::write(
            &path,
            "[llm]\nbackend = \"embedded\"\nmodel = \"big.gguf\"\ncontext_size = 2048\ntemperature = 0.0\n\
             [embedding]\nmodel_dir = \"emb\"\n[prompts]\ndir = \"/abs/prompts\"\n",
        )
        .unwrap();
        let mut config = Config::new(Some(dir.path().into()), None);
        config.apply_file(ConfigFile::read(&path).unwrap(), &path, true);
        assert_eq!(
            config.llm.model,
            dir.path().join("big.gguf").display().to_string()
        );
        assert_eq!(config.llm.context_size, 2048);
        assert_eq!(config.llm.max_tokens, LlmSettings::default().max_tokens);
        assert_eq!(config.embedding_model_dir, dir.path().join("emb"));
        assert_eq!(config.prompts_dir, PathBuf::from("/abs/prompts"));
        assert_eq!(config.config_file.as_deref(), Some(path.as_path()));
    }

    #[test]
    fn an_embedding_server_table_becomes_the_embedding_source() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("folio.toml");
        std::fs::write(
            &path,
            "[embedding]\nbackend = \"openai\"\nbase_url = \"http://gpu:8081/v1\"\nmodel = \"bge-m3\"\nparallel = 8\n",
        )
        .unwrap();
        let mut config = Config::new(None, None);
        assert!(matches!(
            config.embedding_source(),
            EmbeddingSource::Embedded(_)
        ));
        config.apply_file(ConfigFile::read(&path).unwrap(), &path, false);
        let EmbeddingSource::Server(server) = config.embedding_source() else {
            panic!("the server was not chosen");
        };
        assert_eq!(
            (server.base_url.as_str(), server.model.as_str()),
            ("http://gpu:8081/v1", "bge-m3")
        );
        assert_eq!(
            (server.parallel, server.batch),
            (8, ServerSettings::default().batch)
        );
        assert_eq!(config.embedding_label(), "bge-m3 at http://gpu:8081/v1");
    }

    #[test]
    fn an_llm_table_without_a_model_keeps_the_kit_model() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("folio.toml");
        std::fs::write(&path, "[llm]\ntemperature = 0.5\n").unwrap();
        let mut config = Config::new(None, None);
        let kit = config.llm.model.clone();
        config.apply_file(ConfigFile::read(&path).unwrap(), &path, false);
        assert_eq!(config.llm.model, kit);
        assert_eq!(config.llm.temperature, 0.5);
    }

    #[test]
    fn typos_are_reported_with_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("folio.toml");
        std::fs::write(&path, "[llm]\ntemprature = 0.5\n").unwrap();
        let err = ConfigFile::read(&path).unwrap_err();
        assert!(
            matches!(&err, ConfigError::Parse { message, .. } if message.contains("temprature")),
            "{err}"
        );
    }

    #[test]
    fn written_settings_read_back_and_stay_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/folio.toml");
        let file = ConfigFile {
            data_dir: Some(dir.path().join("data")),
            llm: Some(LlmSettings {
                backend: Backend::Openai,
                model: "qwen".into(),
                ..LlmSettings::default()
            }),
            ..ConfigFile::default()
        };
        file.write(&path).unwrap();
        assert_eq!(ConfigFile::read(&path).unwrap(), file);
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&path).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
        let mut config = Config::new(None, None);
        config.apply_file(file, &path, false);
        assert_eq!(config.data_dir, dir.path().join("data"));
        assert_eq!(config.judge, None);
    }

    #[test]
    fn a_judge_table_names_a_model_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("folio.toml");
        std::fs::write(
            &path,
            "[judge]\nbackend = \"embedded\"\nmodel = \"models/judge.gguf\"\ntemperature = 0.0\n",
        )
        .unwrap();
        let mut config = Config::new(None, None);
        let kit = config.llm.model.clone();
        config.apply_file(ConfigFile::read(&path).unwrap(), &path, false);
        let judge = config.judge.expect("a judge");
        assert_eq!(
            judge.model,
            dir.path().join("models/judge.gguf").display().to_string()
        );
        assert_eq!(judge.temperature, 0.0);
        assert_eq!(config.llm.model, kit, "the answering model is untouched");
    }

    #[test]
    fn a_data_dir_given_on_the_command_line_wins_over_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("folio.toml");
        let file = ConfigFile {
            data_dir: Some("/elsewhere".into()),
            ..ConfigFile::default()
        };
        let mut config = Config::new(Some(dir.path().join("cli")), None);
        config.apply_file(file, &path, true);
        assert_eq!(config.data_dir, dir.path().join("cli"));
    }
}
