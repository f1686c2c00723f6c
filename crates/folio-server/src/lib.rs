//! `folio serve`: the library served to other apps on this machine. One
//! router, two faces over the same [`Library`]:
//! - `/api/…`, Folio's HTTP API (search, ask streamed as server-sent
//!   events, runs, threads, collections, documents and passages by id,
//!   status and jobs), described by `/openapi.json`, which is generated
//!   from the very Rust types the routes speak;
//! - `/v1/…`, an OpenAI-compatible chat API whose models are the methods
//!   (`folio/vanilla-rag`, …), for the chat apps people already use.
//!
//! Safe by default: the listener binds loopback unless the caller allows
//! otherwise ([`bind`]); every route wants the bearer token and a Host
//! header that names this server (`guard.rs`); bodies are bounded
//! ([`MAX_BODY`]); answers and searches queue behind gates (`gate.rs`), so
//! a flood waits or is told the server is busy and never starves the
//! watcher that runs beside the server; documents are served by id, never
//! by a path a client names.

mod api;
mod error;
mod gate;
mod guard;
mod listen;
mod openai;
mod openapi;
pub mod secret;
pub mod token;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::Router;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use folio_engine::Library;

pub use error::ApiError;
pub use token::Token;

/// The largest request body accepted; a question with its options and a
/// chat's earlier messages fit many times over.
pub const MAX_BODY: usize = 1 << 20;
/// Questions answered at once (the model answers one at a time) and how
/// many more may wait.
const ASKS_RUNNING: usize = 1;
const ASKS_WAITING: usize = 16;
const SEARCHES_RUNNING: usize = 4;
const SEARCHES_WAITING: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0} is not a loopback address; serving beyond this machine needs --allow-remote (and a token you keep secret)")]
    NotLoopback(SocketAddr),
    #[error("cannot listen on {addr}: {source}; is another server using the port? pick another with --addr")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// Where to listen, and who may reach it.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub addr: SocketAddr,
    /// Allow an address other than loopback.
    pub allow_remote: bool,
    /// Host names (besides the loopback ones and the bound address) that
    /// requests may be addressed to.
    pub allow_hosts: Vec<String>,
}

/// What every route shares.
#[derive(Clone)]
pub struct ServerState {
    library: Arc<Library>,
    token: Arc<Token>,
    hosts: Arc<Vec<String>>,
    asks: gate::Gate,
    searches: gate::Gate,
}

/// A listener on `options.addr`, refused when it is not loopback and
/// remote clients were not allowed.
pub async fn bind(options: &ServeOptions) -> Result<TcpListener, ServeError> {
    if !options.addr.ip().is_loopback() && !options.allow_remote {
        return Err(ServeError::NotLoopback(options.addr));
    }
    TcpListener::bind(options.addr)
        .await
        .map_err(|source| ServeError::Bind {
            addr: options.addr,
            source,
        })
}

/// The whole router for a server listening on `bound`.
pub fn router(
    library: Arc<Library>,
    token: Token,
    bound: SocketAddr,
    allow_hosts: &[String],
) -> Router {
    let state = ServerState {
        library,
        token: Arc::new(token),
        hosts: Arc::new(guard::allowed_hosts(bound, allow_hosts)),
        asks: gate::Gate::new("ask", ASKS_RUNNING, ASKS_WAITING),
        searches: gate::Gate::new("search", SEARCHES_RUNNING, SEARCHES_WAITING),
    };
    Router::new()
        .merge(api::routes())
        .merge(openai::routes())
        .route("/openapi.json", axum::routing::get(openapi::document))
        .fallback(api::no_route)
        .method_not_allowed_fallback(api::no_method)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::guard,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(state)
}

/// Serves `library` on `listener` until `shutdown` is cancelled.
pub async fn serve(
    library: Arc<Library>,
    listener: TcpListener,
    token: Token,
    allow_hosts: &[String],
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let bound = listener.local_addr()?;
    let router = router(library, token, bound, allow_hosts);
    listen::run(listener, router, shutdown).await;
    Ok(())
}
