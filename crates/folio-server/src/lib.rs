//! `folio serve`: the library served to other apps on this machine. One
//! router, two faces over the same [`Library`]:
//! - `/api/…`, Folio's HTTP API (search, ask streamed as server-sent
//!   events, runs, threads, collections, documents and passages by id,
//!   status and jobs), described by `/openapi.json`, which is generated
//!   from the very Rust types the routes speak;
//! - `/v1/…`, an OpenAI-compatible chat API whose models are the methods
//!   (`folio/vanilla-rag`, …), for the chat apps people already use;
//! - `/mcp`, the MCP server (streamable HTTP) for assistants, which
//!   [`serve_stdio`] also speaks over stdio (`folio mcp`).
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
mod mcp;
mod openai;
mod openapi;
pub mod secret;
pub mod token;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use folio_engine::Library;

pub use error::ApiError;
pub use token::Token;

/// The largest request body accepted; a question with its options and a
/// chat's earlier messages fit many times over.
pub const MAX_BODY: usize = 1 << 20;
/// The most an evaluation's body may hold: its questions and its corpus.
pub const MAX_EVALUATION_BODY: usize = 32 << 20;
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

fn ask_gate() -> gate::Gate {
    gate::Gate::new("ask", ASKS_RUNNING, ASKS_WAITING)
}

fn search_gate() -> gate::Gate {
    gate::Gate::new("search", SEARCHES_RUNNING, SEARCHES_WAITING)
}

/// The whole router for a server listening on `bound`, until `shutdown`.
fn router(
    library: Arc<Library>,
    token: Token,
    bound: SocketAddr,
    allow_hosts: &[String],
    shutdown: &CancellationToken,
) -> Router {
    let state = ServerState {
        library,
        token: Arc::new(token),
        hosts: Arc::new(guard::allowed_hosts(bound, allow_hosts)),
        asks: ask_gate(),
        searches: search_gate(),
    };
    let mcp = {
        let state = state.clone();
        // The guard has checked the Host already, against this server's
        // own names; MCP sessions end when the server does.
        let config = StreamableHttpServerConfig::default()
            .disable_allowed_hosts()
            .with_cancellation_token(shutdown.child_token());
        StreamableHttpService::new(
            move || {
                Ok(mcp::FolioMcp::new(
                    state.library.clone(),
                    state.asks.clone(),
                    state.searches.clone(),
                ))
            },
            Arc::new(LocalSessionManager::default()),
            config,
        )
    };
    Router::new()
        .merge(api::routes())
        .merge(openai::routes())
        .nest_service("/mcp", mcp)
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

/// A server started inside another program (the app), until [`stop`](RunningServer::stop).
pub struct RunningServer {
    pub addr: SocketAddr,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl RunningServer {
    /// Stops accepting, and lets requests in flight finish.
    pub async fn stop(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// Binds `options.addr` and serves `library` there in the background.
pub async fn start(
    library: Arc<Library>,
    options: &ServeOptions,
    token: Token,
) -> Result<RunningServer, ServeError> {
    let listener = bind(options).await?;
    let addr = listener.local_addr().map_err(|source| ServeError::Bind {
        addr: options.addr,
        source,
    })?;
    let stop = library.stop_token().child_token();
    let task = tokio::spawn({
        let (stop, hosts) = (stop.clone(), options.allow_hosts.clone());
        async move { serve(library, listener, token, &hosts, stop).await }
    });
    Ok(RunningServer { addr, stop, task })
}

/// How clients reach a server on `addr`: what the app's Settings offers to
/// copy and the README shows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[ts(export)]
pub struct ClientConfigs {
    /// The server's root, e.g. `http://127.0.0.1:7733`.
    pub base_url: String,
    /// For chat apps: the OpenAI-compatible base URL; the token is the API
    /// key, and the models are `folio/<method>`.
    pub openai_base_url: String,
    /// For assistants: the MCP endpoint (streamable HTTP), with the token
    /// as a bearer header.
    pub mcp_url: String,
    /// A `curl` command that searches the library.
    pub curl: String,
}

impl ClientConfigs {
    pub fn new(addr: SocketAddr, token: &Token) -> ClientConfigs {
        let base_url = format!("http://{addr}");
        ClientConfigs {
            openai_base_url: format!("{base_url}/v1"),
            mcp_url: format!("{base_url}/mcp"),
            curl: format!(
                "curl -s -H 'Authorization: Bearer {}' -H 'Content-Type: application/json' -d '{{\"query\": \"ownership\", \"k\": 5}}' {base_url}/api/search",
                token.expose()
            ),
            base_url,
        }
    }
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
    let router = router(library, token, bound, allow_hosts, &shutdown);
    listen::run(listener, router, shutdown).await;
    Ok(())
}

/// The MCP server over this process's stdin and stdout (`folio mcp`),
/// until the client closes them.
pub async fn serve_stdio(library: Arc<Library>) -> std::io::Result<()> {
    let server = mcp::FolioMcp::new(library, ask_gate(), search_gate());
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
