//! `/api/models`: the language model that answers, the models found on
//! this machine, making one the default, and calibrating it: `folio
//! models`, `models use` and `models calibrate` over HTTP.

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;

use folio_engine::config::config_file_path;
use folio_engine::llm::calibration::Calibration;
use folio_engine::llm::discovery::Places;
use folio_engine::models::{models_now, use_model, ModelsNow, UseReport};

use super::{Body, Reply};
use crate::error::ApiError;
use crate::ServerState;

pub fn routes() -> Router<ServerState> {
    Router::new()
        .route("/api/models", get(list))
        .route("/api/models/use", post(choose))
        .route("/api/models/calibrate", post(calibrate))
}

async fn list(State(s): State<ServerState>) -> Reply<ModelsNow> {
    Ok(Json(
        models_now(s.library.config(), &Places::from_env()).await?,
    ))
}

/// What `POST /api/models/use` takes: a model as `GET /api/models` lists
/// it, never a file's path.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct UseModel {
    /// A kit model (`qwen2.5-coder-1.5b`, `qwen2.5-coder-0.5b`,
    /// `smollm2-135m`), a found file by its listed name, or a found
    /// server's `base_url` with `model`.
    pub name: String,
    /// With a server's `base_url`: the model to use, as the server lists it.
    #[serde(default)]
    pub model: Option<String>,
}

/// Writes folio.toml's `[llm]`. The running server keeps answering with
/// the model it loaded until it is started again; the reply says what
/// changed.
async fn choose(State(s): State<ServerState>, Body(body): Body<UseModel>) -> Reply<UseReport> {
    let is_address = body.name.starts_with("http://") || body.name.starts_with("https://");
    if !is_address && (body.name.contains(['/', '\\']) || body.name.ends_with(".gguf")) {
        return Err(ApiError::bad_request(
            "name a model as GET /api/models lists it (a kit model, a found file's name, or a found server's base_url); a client does not name files",
        ));
    }
    Ok(Json(
        use_model(
            &body.name,
            body.model.as_deref(),
            &s.library.config().models_dir,
            &config_file_path(),
            &Places::from_env(),
        )
        .await?,
    ))
}

/// Calibrates in one turn of the ask queue, as it asks the model; a client
/// that goes away stops it.
async fn calibrate(State(s): State<ServerState>) -> Reply<Calibration> {
    let _turn = s.asks.enter().await?;
    let cancel = s.library.stop_token().child_token();
    let _stop_when_gone = cancel.clone().drop_guard();
    Ok(Json(s.library.calibrate(&|_, _| {}, &cancel).await?))
}
