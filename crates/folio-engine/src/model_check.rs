//! What `folio models` and the app's settings show: the configured language
//! model, embedding model and prompts, and whether each one actually loads
//! (a one-token answer, one embedded sentence, every template parsed).

use std::path::{Path, PathBuf};

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use folio_embed::Embedder;
use folio_llm::calibration::Calibration;
use folio_llm::pace::{self, Pace};
use folio_llm::prompts::PromptSource;
use folio_llm::settings::KitModel;
use folio_llm::{
    Backend, Capabilities, ChatMessage, ChatRequest, GenerateOptions, LlmSettings, ModelInfo,
    OpenAiLlm, Support,
};

#[derive(Debug, Clone, Serialize)]
pub struct ModelReport {
    pub config_file: Option<PathBuf>,
    pub llm: LlmCheck,
    pub embedding: EmbeddingCheck,
    pub prompts: PromptsCheck,
}

impl ModelReport {
    pub fn all_load(&self) -> bool {
        self.llm.error.is_none() && self.embedding.error.is_none() && self.prompts.error.is_none()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct LlmCheck {
    /// The settings, with any API key masked ([`LlmSettings::redacted`]).
    pub settings: LlmSettings,
    pub info: Option<ModelInfo>,
    pub capabilities: Option<Capabilities>,
    /// What the backend was found to support: token counts while streaming,
    /// log-probabilities, and how replies are held to their shape.
    pub support: Option<Support>,
    /// For a server: the models it serves (`GET /models`), to pick from;
    /// `None` for the embedded model or when the server did not answer.
    pub served: Option<Vec<String>>,
    /// CRP-RAG's sufficiency threshold as `folio models calibrate` measured
    /// it for this model, if it did.
    pub calibration: Option<Calibration>,
    /// Why the calibrations file could not be read.
    pub calibration_error: Option<String>,
    /// The kit model it is, when it is one.
    pub kit: Option<KitModel>,
    /// The model file's size, for an embedded model.
    pub bytes: Option<u64>,
    /// How fast it answers here, measured once it loaded.
    pub pace: Option<Pace>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EmbeddingCheck {
    /// The model's folder, or its id at its server.
    pub source: String,
    /// How the model is used where it differs from the settings.
    pub note: Option<String>,
    pub name: Option<String>,
    pub dimensions: Option<usize>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PromptsCheck {
    pub override_dir: PathBuf,
    pub sources: Vec<PromptSource>,
    pub error: Option<String>,
}

pub async fn check(config: &Config) -> ModelReport {
    let mut llm = with_calibration(check_llm(&config.llm).await, config);
    if config.llm.backend == Backend::Embedded {
        let file = Path::new(&config.llm.model);
        llm.kit = KitModel::at(&config.models_dir, file);
        llm.bytes = std::fs::metadata(file).ok().map(|m| m.len());
    }
    ModelReport {
        config_file: config.config_file.clone(),
        llm,
        embedding: check_embedding(config).await,
        prompts: check_prompts(config),
    }
}

fn with_calibration(check: LlmCheck, config: &Config) -> LlmCheck {
    match config.calibrations().of(&config.llm) {
        Ok(calibration) => LlmCheck {
            calibration,
            ..check
        },
        Err(e) => LlmCheck {
            calibration_error: Some(e.to_string()),
            ..check
        },
    }
}

async fn check_llm(settings: &LlmSettings) -> LlmCheck {
    let mut check = LlmCheck {
        settings: settings.redacted(),
        info: None,
        capabilities: None,
        support: None,
        served: None,
        calibration: None,
        calibration_error: None,
        kit: None,
        bytes: None,
        pace: None,
        error: None,
    };
    if settings.backend == Backend::Openai {
        check.served = OpenAiLlm::served(settings).await.ok();
    }
    match folio_llm::connect(settings).await {
        Ok(llm) => {
            check.info = Some(llm.info());
            check.capabilities = Some(llm.capabilities());
            let options = GenerateOptions {
                max_tokens: 1,
                ..GenerateOptions::default()
            };
            let messages = [ChatMessage::user("Say OK.")];
            let cancel = CancellationToken::new();
            let request = ChatRequest {
                messages: &messages,
                options: &options,
                on_token: None,
                cancel: &cancel,
            };
            match llm.chat(request).await {
                Ok(_) => {
                    check.support = llm.support().await.ok();
                    check.pace = pace::measure(llm.as_ref(), &cancel).await.ok();
                }
                Err(e) => check.error = Some(e.to_string()),
            }
        }
        Err(e) => check.error = Some(e.to_string()),
    }
    check
}

async fn check_embedding(config: &Config) -> EmbeddingCheck {
    let source = config.embedding_source();
    let mut check = EmbeddingCheck {
        source: config.embedding_label(),
        note: None,
        name: None,
        dimensions: None,
        error: None,
    };
    let loaded = tokio::task::spawn_blocking(move || {
        let embedder = Embedder::load(&source)?;
        embedder.embed_one("Folio checks that the embedding model works.")?;
        Ok::<_, folio_embed::EmbedError>(embedder)
    })
    .await;
    match loaded {
        Ok(Ok(embedder)) => {
            check.name = Some(embedder.name().to_string());
            check.dimensions = Some(embedder.dim());
            check.note = embedder.note().map(str::to_string);
        }
        Ok(Err(e)) => check.error = Some(e.to_string()),
        Err(e) => check.error = Some(e.to_string()),
    }
    check
}

fn check_prompts(config: &Config) -> PromptsCheck {
    let mut check = PromptsCheck {
        override_dir: config.prompts_dir.clone(),
        sources: Vec::new(),
        error: None,
    };
    match crate::library::load_prompts(&config.prompts_dir) {
        Ok(prompts) => check.sources = prompts.sources().to_vec(),
        Err(e) => check.error = Some(e.to_string()),
    }
    check
}
