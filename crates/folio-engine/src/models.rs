//! The language model, as every face manages it: what answers and what
//! was found on this machine ([`models_now`]), making another the one that
//! answers ([`use_model`]), and measuring the sufficiency threshold
//! CRP-RAG uses for it ([`calibrate_model`], [`Library::calibrate`]). The
//! CLI, the app and the server call these; none words its own version.

use std::path::{Path, PathBuf};

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::choice::Choice;
use crate::config::{Config, ConfigFile};
use crate::{Library, Result};
use folio_llm::calibration::Calibration;
use folio_llm::discovery::{choose, discover, Chosen, Found, Places};
use folio_llm::prompts::Prompts;
use folio_llm::{Backend, Llm, LlmSettings};
use folio_methods::crp_rag::calibrate::calibrate;

/// The model that answers, its calibration, and the models found here.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ModelsNow {
    /// The `[llm]` settings in force, any API key masked.
    pub llm: LlmSettings,
    /// CRP-RAG's threshold for this model; `None` until it is calibrated.
    pub calibration: Option<Calibration>,
    pub found: Found,
}

/// [`ModelsNow`] for `config`. Looking takes up to a few seconds: the
/// apps' model folders are read and the usual loopback ports asked.
pub async fn models_now(config: &Config, places: &Places) -> Result<ModelsNow> {
    Ok(ModelsNow {
        llm: config.llm.redacted(),
        calibration: config.calibrations().of(&config.llm)?,
        found: discover(places).await,
    })
}

/// One `[llm]` setting [`use_model`] changed.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Change {
    pub key: &'static str,
    pub from: String,
    pub to: String,
}

/// What [`use_model`] wrote.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct UseReport {
    pub config_file: PathBuf,
    pub changed: Vec<Change>,
    /// The `[llm]` table as written, any API key masked.
    pub llm: LlmSettings,
    /// A kit model's file, when it is not fetched yet.
    pub missing: Option<PathBuf>,
    /// Environment variables set now that win over what was written.
    pub overridden_by: Vec<&'static str>,
}

/// The variables that override `[llm]`'s choice of model.
const OVERRIDES: [&str; 3] = ["FOLIO_LLM_BACKEND", "FOLIO_LLM_MODEL", "FOLIO_LLM_BASE_URL"];

/// Makes `name` (with `model`, for a server's address) the model that
/// answers: writes `[llm]` in `config_file`, keeping every other setting.
/// A process already running keeps the model it loaded until it restarts.
pub async fn use_model(
    name: &str,
    model: Option<&str>,
    models_dir: &Path,
    config_file: &Path,
    places: &Places,
) -> Result<UseReport> {
    let chosen = choose(name, model, models_dir, places).await?;
    let mut file = ConfigFile::read(config_file)?;
    let before = file.llm.clone().unwrap_or_default();
    let after = chosen.settings(before.clone());
    file.llm = Some(after.clone());
    file.write(config_file)?;
    let missing = match &chosen {
        Chosen::Kit { path, .. } if !path.is_file() => Some(path.clone()),
        _ => None,
    };
    Ok(UseReport {
        config_file: config_file.to_path_buf(),
        changed: changes(&before, &after),
        llm: after.redacted(),
        missing,
        overridden_by: OVERRIDES
            .into_iter()
            .filter(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()))
            .collect(),
    })
}

/// The settings [`use_model`] sets, where they differ.
fn changes(before: &LlmSettings, after: &LlmSettings) -> Vec<Change> {
    let model = |s: &LlmSettings| match (s.backend, s.model.as_str()) {
        (Backend::Embedded, "") => "(the kit's default)".to_string(),
        (_, model) => model.to_string(),
    };
    let backend = |s: &LlmSettings| s.backend.as_str().to_string();
    [
        ("backend", backend(before), backend(after)),
        ("model", model(before), model(after)),
        ("base_url", before.base_url.clone(), after.base_url.clone()),
    ]
    .into_iter()
    .filter(|(_, from, to)| from != to)
    .map(|(key, from, to)| Change { key, from, to })
    .collect()
}

/// Measures `llm` (the model `config` names) on the probe set and saves
/// the threshold as that model's, where CRP-RAG finds it from the next
/// question on. `progress` hears each answer as `(done, total)`.
pub async fn calibrate_model(
    config: &Config,
    llm: &dyn Llm,
    prompts: &Prompts,
    progress: &(dyn Fn(usize, usize) + Sync),
    cancel: &CancellationToken,
) -> Result<Calibration> {
    let measured = calibrate(llm, prompts, progress, cancel).await?;
    config.calibrations().save(&config.llm, &measured)?;
    Ok(measured)
}

impl Library {
    /// The configured model's calibration; `None` until it has one.
    pub fn calibration(&self) -> Result<Option<Calibration>> {
        Ok(self.config().calibrations().of(&self.config().llm)?)
    }

    /// [`calibrate_model`] on the model this library answers with.
    pub async fn calibrate(
        &self,
        progress: &(dyn Fn(usize, usize) + Sync),
        cancel: &CancellationToken,
    ) -> Result<Calibration> {
        let llm = self.llm().await?;
        let prompts = self.prompts().await?;
        calibrate_model(self.config(), llm.as_ref(), &prompts, progress, cancel).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_differs_is_a_change() {
        let before = LlmSettings::default();
        let after = LlmSettings {
            backend: Backend::Openai,
            model: "qwen2.5:0.5b".into(),
            base_url: "http://127.0.0.1:11434/v1".into(),
            ..before.clone()
        };
        let changed = changes(&before, &after);
        let keys: Vec<&str> = changed.iter().map(|c| c.key).collect();
        assert_eq!(keys, ["backend", "model", "base_url"]);
        assert_eq!(changed[1].from, "(the kit's default)");
        assert!(changes(&after, &after).is_empty());
    }
}
