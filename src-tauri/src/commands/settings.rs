//! The settings view and what the app says about itself on start.

use folio_engine::events::Progress;
use folio_engine::llm::calibration::Calibration;
use folio_engine::llm::discovery::{self, Found, Places};
use folio_engine::llm::pace::{self, Pace};
use folio_engine::llm::{ApiKey, Backend, Llm, LlmSettings, OpenAiLlm, Support};
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, State};

use super::{dialogs, CommandResult};
use crate::secrets::ApiKeyStorage;
use crate::settings::{self, AnsweringModel, SettingsInput, SettingsView};
use crate::state::{load_config, AppState};

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct AppInfo {
    pub version: String,
    pub data_dir: String,
    pub config_file: String,
    /// No settings saved and no folders yet: the UI explains where to start.
    pub first_run: bool,
    /// The model that answers.
    pub model: AnsweringModel,
    pub api_key_storage: ApiKeyStorage,
}

#[tauri::command(rename_all = "snake_case")]
pub async fn app_info(state: State<'_, AppState>) -> CommandResult<AppInfo> {
    let (library, config) = state
        .with_engine(|e| (e.library.clone(), e.config.clone()))
        .await?;
    let config_file = folio_engine::config::config_file_path();
    let no_folders = library.roots().await?.is_empty();
    Ok(AppInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        data_dir: config.data_dir.display().to_string(),
        config_file: config_file.display().to_string(),
        first_run: no_folders && !config_file.exists(),
        model: settings::answering_model(&config),
        api_key_storage: state.secrets().storage().clone(),
    })
}

/// How fast the configured model answers on this computer, for the
/// first-start card. Timed the first time it is asked for, on the model the
/// answers use (loaded once, not a second copy beside it), and kept for as
/// long as the engine runs; a caller meanwhile waits for that measurement.
#[tauri::command(rename_all = "snake_case")]
pub async fn model_pace(state: State<'_, AppState>) -> CommandResult<Pace> {
    let (library, pace) = state
        .with_engine(|e| (e.library.clone(), e.pace.clone()))
        .await?;
    let measured = pace
        .get_or_try_init(|| async {
            let llm = library.llm().await?;
            // Stopping the engine (closing the app, saving settings) stops it.
            pace::measure(llm.as_ref(), library.stop_token())
                .await
                .map_err(folio_engine::Error::Llm)
        })
        .await?;
    Ok(*measured)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn settings(state: State<'_, AppState>) -> CommandResult<SettingsView> {
    let config = state.with_engine(|e| e.config.clone()).await?;
    Ok(settings::view(&config, state.secrets()))
}

/// Saves and restarts the engine with the new settings (a new data
/// location opens that index). A new model server, or paths typed rather
/// than picked, are confirmed by the person first.
#[tauri::command(rename_all = "snake_case")]
pub async fn save_settings(
    app: AppHandle,
    state: State<'_, AppState>,
    input: SettingsInput,
) -> CommandResult<SettingsView> {
    settings::validate(&input)?;
    let current = load_config(state.secrets()).ok();
    let changes = settings::unconfirmed_changes(&input, current.as_ref(), state.grants());
    if !changes.is_empty() {
        let listed: Vec<String> = changes.iter().map(|c| format!("    • {c}")).collect();
        let message = format!(
            "With these settings Folio will:\n\n{}\n\nThey were typed rather than chosen in a file \
             dialog. Save only if you entered them yourself.",
            listed.join("\n")
        );
        if !dialogs::confirm(&app, "Confirm settings", message, "Save").await? {
            return Err(dialogs::declined("save the settings"));
        }
    }
    settings::save(&input, state.secrets())?;
    state.restart(&app).await;
    let config = state.with_engine(|e| e.config.clone()).await?;
    Ok(settings::view(&config, state.secrets()))
}

/// A server at `base_url` as the form describes it, with the key typed or,
/// only if it was entered for this server, the stored one.
fn server_at(state: &AppState, base_url: &str, api_key: Option<ApiKey>) -> LlmSettings {
    let current = load_config(state.secrets()).ok();
    let api_key = settings::key_for(
        base_url,
        api_key,
        current.as_ref().map(|c| &c.llm),
        state.secrets().load(),
    );
    LlmSettings {
        backend: Backend::Openai,
        base_url: base_url.trim().to_string(),
        api_key,
        ..LlmSettings::default()
    }
}

/// The models the server at `base_url` serves, for the person to pick one
/// (asked only when they ask for the list).
#[tauri::command(rename_all = "snake_case")]
pub async fn served_models(
    state: State<'_, AppState>,
    base_url: String,
    api_key: Option<ApiKey>,
) -> CommandResult<Vec<String>> {
    let server = server_at(&state, &base_url, api_key);
    Ok(OpenAiLlm::served(&server)
        .await
        .map_err(folio_engine::Error::Llm)?)
}

/// What the server at `base_url` supports for `model`: token counts while
/// streaming, log-probabilities, and the form it takes a JSON schema in
/// (asked only when the person asks).
#[tauri::command(rename_all = "snake_case")]
pub async fn server_support(
    state: State<'_, AppState>,
    base_url: String,
    api_key: Option<ApiKey>,
    model: String,
) -> CommandResult<Support> {
    let server = LlmSettings {
        model: model.trim().to_string(),
        ..server_at(&state, &base_url, api_key)
    };
    let probed = async { OpenAiLlm::connect(&server).await?.support().await };
    Ok(probed.await.map_err(folio_engine::Error::Llm)?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn pick_model_file(app: AppHandle) -> CommandResult<Option<String>> {
    Ok(dialogs::gguf_file(&app)
        .await?
        .map(|p| p.display().to_string()))
}

/// The language models already on this computer: GGUF files other apps
/// keep, and servers answering on loopback at those apps' ports (each asked
/// with a bounded wait, the folders walked off the async threads). What is
/// listed is granted, so using it in Settings is not taken for a path or a
/// server someone typed.
#[tauri::command(rename_all = "snake_case")]
pub async fn found_models(state: State<'_, AppState>) -> CommandResult<Found> {
    let found = discovery::discover(&Places::from_env()).await;
    for file in &found.files {
        state.grants().grant(&file.path);
    }
    for server in found.servers.iter().filter(|s| s.error.is_none()) {
        state.grants().grant_server(&server.base_url);
    }
    Ok(found)
}

/// The configured model's calibration for CRP-RAG; `None` until it has one.
#[tauri::command(rename_all = "snake_case")]
pub async fn model_calibration(state: State<'_, AppState>) -> CommandResult<Option<Calibration>> {
    Ok(state.library().await?.calibration()?)
}

/// Where a calibration's cancellation is kept among the answers'.
const CALIBRATION: &str = "calibration";

/// Measures the configured model on the probe set (`folio models
/// calibrate`), reporting each answer through `on_progress`, and keeps the
/// threshold, which CRP-RAG uses from the next question on.
#[tauri::command(rename_all = "snake_case")]
pub async fn calibrate_model(
    state: State<'_, AppState>,
    on_progress: Channel<Progress>,
) -> CommandResult<Calibration> {
    let library = state.library().await?;
    let cancel = state.register_ask(CALIBRATION);
    let started = std::time::Instant::now();
    let progress = |done: usize, total: usize| {
        // The window may have closed; the calibration is kept either way.
        let _ = on_progress.send(Progress::after(
            done as u64,
            total as u64,
            0,
            started.elapsed(),
        ));
    };
    let measured = library.calibrate(&progress, &cancel).await;
    state.finish_ask(CALIBRATION);
    Ok(measured?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn cancel_calibration(state: State<'_, AppState>) {
    state.cancel_ask(CALIBRATION);
}

#[cfg(test)]
mod tests {
    use ts_rs::TS;

    use super::*;

    /// What `found_models` returns crosses to the UI, and the engine
    /// derives its TypeScript type without writing it: the app does.
    #[test]
    fn export_found_models_bindings() {
        Found::export_all(&ts_rs::Config::from_env()).unwrap();
    }
}
