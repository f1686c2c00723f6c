//! Settings' server switch: the same server as `folio serve`
//! (folio-server), run by the app's engine on its library, remembered by
//! the library so it serves again when the app next opens it.

use std::net::SocketAddr;

use folio_server::secret::SecretHome;
use folio_server::{token, ClientConfigs};
use serde::Serialize;
use tauri::State;

use super::CommandResult;
use crate::ipc_error::IpcError;
use crate::state::AppState;

/// What the app serves on when the person names no address.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:7733";

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct ServerView {
    /// Whether the switch is on: the library remembers to be served, at
    /// `address`, whenever the app opens it.
    pub on: bool,
    /// Whether the library is being served now.
    pub running: bool,
    /// Where it is served, or would be when switched on.
    pub address: String,
    /// Why it is not being served though it was switched on (a port in
    /// use, say).
    pub error: Option<String>,
    /// The token clients send; only while it runs.
    pub token: Option<String>,
    /// Where the token is kept: the OS keyring or a file's path.
    pub token_kept_in: String,
    /// Settings to paste into clients; only while it runs.
    pub clients: Option<ClientConfigs>,
}

#[tauri::command(rename_all = "snake_case")]
pub async fn server_view(state: State<'_, AppState>) -> CommandResult<ServerView> {
    view(&state).await
}

/// Turns serving on (at `address`) or off, and remembers the choice.
#[tauri::command(rename_all = "snake_case")]
pub async fn switch_server(
    state: State<'_, AppState>,
    on: bool,
    address: String,
) -> CommandResult<ServerView> {
    let library = state.library().await?;
    if on {
        let addr: SocketAddr = address.trim().parse().map_err(|_| {
            IpcError::new(
                "bad_address",
                format!("{address:?} is not an address; write it as 127.0.0.1:7733"),
            )
        })?;
        if !addr.ip().is_loopback() {
            return Err(IpcError::new(
                "not_loopback",
                "the app serves only this machine (a loopback address such as 127.0.0.1); `folio serve --allow-remote` serves beyond it",
            ));
        }
        library.set_serve_address(Some(&addr.to_string())).await?;
    } else {
        library.set_serve_address(None).await?;
    }
    state
        .with_engine(|e| e.server.clone())
        .await?
        .follow(&library)
        .await;
    view(&state).await
}

async fn view(state: &AppState) -> CommandResult<ServerView> {
    let library = state.library().await?;
    let server = state.with_engine(|e| e.server.clone()).await?;
    let kept = token::load_or_create(&library.config().data_dir)
        .map_err(|e| IpcError::new("secret_storage", e.to_string()))?;
    let token_kept_in = match &kept.home {
        SecretHome::Keyring => "the OS keyring".to_string(),
        SecretHome::File(path) => path.display().to_string(),
    };
    let now = server.now().await;
    let wanted = library.serve_address().await?;
    let on = wanted.is_some();
    Ok(match now {
        Ok(Some(addr)) => ServerView {
            on,
            running: true,
            address: addr.to_string(),
            error: None,
            token: Some(kept.token.expose().to_string()),
            token_kept_in,
            clients: Some(ClientConfigs::new(addr, &kept.token)),
        },
        other => ServerView {
            on,
            running: false,
            address: wanted.unwrap_or_else(|| DEFAULT_ADDRESS.to_string()),
            error: other.err(),
            token: None,
            token_kept_in,
            clients: None,
        },
    })
}
