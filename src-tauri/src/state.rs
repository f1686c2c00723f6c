//! What the commands share: the running engine (or why it could not start),
//! the answers and the evaluation in flight so they can be cancelled, the
//! key store, and the paths the person granted the webview.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use folio_engine::{Config, Library};
use tauri::AppHandle;
use tokio::sync::RwLock;
use tokio_util::sync::CancellationToken;

use crate::engine::Engine;
use crate::ipc_error::IpcError;
use crate::path_grants::PathGrants;
use crate::secrets::Secrets;

#[derive(Default)]
pub struct AppState {
    engine: RwLock<Option<Result<Engine, IpcError>>>,
    asks: Mutex<HashMap<String, CancellationToken>>,
    eval: Mutex<Option<CancellationToken>>,
    secrets: OnceLock<Secrets>,
    grants: PathGrants,
}

/// The configuration the app runs with: `folio.toml` (or `FOLIO_CONFIG`),
/// `FOLIO_DATA_DIR` and the other `FOLIO_*` variables, plus the API key from
/// the key store.
pub fn load_config(secrets: &Secrets) -> Result<Config, IpcError> {
    let data_dir = std::env::var_os("FOLIO_DATA_DIR").map(Into::into);
    let mut config = Config::load(data_dir, None)?;
    if config.llm.api_key.is_none() {
        config.llm.api_key = secrets.load();
    }
    Ok(config)
}

impl AppState {
    /// Asking the OS keyring whether it works can take a moment, so it
    /// happens once, on first need.
    pub fn secrets(&self) -> &Secrets {
        self.secrets.get_or_init(|| {
            // Beside folio.toml, which is private to the user too.
            Secrets::detect(folio_engine::config::config_file_path().with_file_name("api-key"))
        })
    }

    pub fn grants(&self) -> &PathGrants {
        &self.grants
    }

    /// Stops the current engine (if any) and starts one with the settings
    /// as they are now on disk.
    pub async fn restart(&self, app: &AppHandle) {
        let mut slot = self.engine.write().await;
        if let Some(Ok(old)) = slot.take() {
            old.stop().await;
        }
        let started = match load_config(self.secrets()) {
            Ok(config) => Engine::start(app.clone(), config)
                .await
                .map_err(IpcError::from),
            Err(e) => Err(e),
        };
        if let Err(e) = &started {
            eprintln!("folio: the engine did not start: {e}");
        }
        *slot = Some(started);
    }

    pub async fn shutdown(&self) {
        for token in self
            .asks
            .lock()
            .map(|a| a.values().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
        {
            token.cancel();
        }
        self.cancel_eval();
        if let Some(Ok(engine)) = self.engine.write().await.take() {
            engine.stop().await;
        }
        // The cancelled answers and graph scoring stop at their next token;
        // exiting while the model still decodes crashes in llama.cpp.
        folio_engine::llm::quiesce(std::time::Duration::from_secs(10));
    }

    pub async fn library(&self) -> Result<Arc<Library>, IpcError> {
        self.with_engine(|e| e.library.clone()).await
    }

    pub async fn with_engine<T>(&self, f: impl FnOnce(&Engine) -> T) -> Result<T, IpcError> {
        match self.engine.read().await.as_ref() {
            Some(Ok(engine)) => Ok(f(engine)),
            Some(Err(e)) => Err(e.clone()),
            None => Err(IpcError::new(
                "starting",
                "Folio is still starting; try again in a moment",
            )),
        }
    }

    /// A cancellation token for the answer `ask_id`, cancelled by
    /// [`AppState::cancel_ask`] or when the app closes.
    pub fn register_ask(&self, ask_id: &str) -> CancellationToken {
        let token = CancellationToken::new();
        if let Ok(mut asks) = self.asks.lock() {
            asks.insert(ask_id.to_string(), token.clone());
        }
        token
    }

    pub fn finish_ask(&self, ask_id: &str) {
        if let Ok(mut asks) = self.asks.lock() {
            asks.remove(ask_id);
        }
    }

    pub fn cancel_ask(&self, ask_id: &str) {
        if let Some(token) = self.asks.lock().ok().and_then(|a| a.get(ask_id).cloned()) {
            token.cancel();
        }
    }

    /// The cancellation token of a new evaluation; refused while one runs,
    /// since two would share the cores and each one's timings.
    pub fn register_eval(&self) -> Result<CancellationToken, IpcError> {
        let mut slot = self
            .eval
            .lock()
            .map_err(|_| IpcError::new("internal", "the evaluation slot is unusable"))?;
        if slot.is_some() {
            return Err(IpcError::new(
                "eval_running",
                "an evaluation is already running; cancel it or wait for it to finish",
            ));
        }
        let token = CancellationToken::new();
        *slot = Some(token.clone());
        Ok(token)
    }

    pub fn finish_eval(&self) {
        if let Ok(mut slot) = self.eval.lock() {
            *slot = None;
        }
    }

    pub fn cancel_eval(&self) {
        if let Some(token) = self.eval.lock().ok().and_then(|e| e.clone()) {
            token.cancel();
        }
    }
}
