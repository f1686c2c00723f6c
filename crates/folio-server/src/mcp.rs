//! The library as an MCP server, for assistants (Claude Desktop and the
//! other MCP clients): over stdio (`folio mcp`, for clients that spawn it)
//! and over streamable HTTP at `/mcp` under `folio serve`, where the
//! server's token and Host check guard it as they guard every route.
//!
//! Tools: `search` (a query within a scope), `ask` (a question with a
//! method and its options, in a thread if given; progress notifications
//! while it runs; the answer with its citations), `read` (a document's
//! structure tree, or a passage's text), `list_collections` and
//! `list_threads`. Resources: the indexed documents, `folio://document/{id}`.
//! Each tool's schema is derived from the very types the HTTP API, the CLI
//! and the app use (`AskRequest`, `Scope`, ...); the `ask` tool's
//! description lists every method with its options, from the methods'
//! own declarations.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    Implementation, ListResourcesResult, PaginatedRequestParams, ProgressNotificationParam,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, RequestMetaObject,
    Resource, ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, Json, Peer, RoleServer, ServerHandler};
use serde::{Deserialize, Serialize};

use folio_engine::library::DocumentTree;
use folio_engine::methods::runner::AskRequest;
use folio_engine::methods::{methods, EventSink, RunEvent};
use folio_engine::retrieve::{SearchHit, SearchMode};
use folio_engine::store::{Collection, RunRecord, StoredChunk, ThreadSummary};
use folio_engine::Library;

use crate::api::SearchRequest;
use crate::error::ApiError;
use crate::gate::Gate;

/// The URI of an indexed document.
const DOCUMENT_URI: &str = "folio://document/";
/// Documents listed per page of `resources/list`.
const RESOURCES_PAGE: i64 = 100;

#[derive(Clone)]
pub struct FolioMcp {
    library: Arc<Library>,
    asks: Gate,
    searches: Gate,
    tool_router: ToolRouter<FolioMcp>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SearchResults {
    pub hits: Vec<SearchHit>,
}

/// What `read` reads: one of the two.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReadRequest {
    /// A document's id (`document_id` of a search hit or citation's document, or a resource's): its structure tree.
    #[serde(default)]
    pub document: Option<i64>,
    /// A passage's id (a search hit's or citation's `chunk_id`): its text.
    #[serde(default)]
    pub passage: Option<i64>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ReadResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document: Option<DocumentTree>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passage: Option<StoredChunk>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Collections {
    pub collections: Vec<Collection>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ThreadsRequest {
    /// Only threads whose questions hold this text.
    #[serde(default)]
    pub text: Option<String>,
    /// 20 by default, at most 500.
    #[serde(default)]
    pub limit: Option<i64>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Threads {
    pub threads: Vec<ThreadSummary>,
}

/// A tool's failure is returned as a tool result marked as an error (a
/// `String`, not a protocol error), so the assistant reads what went wrong
/// and can say so or try otherwise. (The tool macro reads `Json` in the
/// written return type to publish the output schema, so no alias.)
fn refused(e: ApiError) -> String {
    e.message
}

fn failed(e: folio_engine::Error) -> String {
    ApiError::from(e).message
}

#[tool_router]
impl FolioMcp {
    pub fn new(library: Arc<Library>, asks: Gate, searches: Gate) -> FolioMcp {
        FolioMcp {
            library,
            asks,
            searches,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "Search the person's document library: the passages that best match a query, each with its file, heading, snippet and chunk_id. Narrow it with scope (folders or files, collections, formats, modified since a day, tags)."
    )]
    async fn search(
        &self,
        Parameters(request): Parameters<SearchRequest>,
    ) -> Result<Json<SearchResults>, String> {
        let k = request.k.unwrap_or(10).clamp(1, 100);
        let _turn = self.searches.enter().await.map_err(refused)?;
        let hits = self
            .library
            .search(
                &request.query,
                k,
                request.mode.unwrap_or(SearchMode::Hybrid),
                &request.scope,
            )
            .await
            .map_err(failed)?;
        Ok(Json(SearchResults { hits }))
    }

    #[tool(description = ask_description())]
    async fn ask(
        &self,
        Parameters(request): Parameters<AskRequest>,
        meta: RequestMetaObject,
        client: Peer<RoleServer>,
    ) -> Result<Json<RunRecord>, String> {
        crate::api::check_ask(&request).map_err(refused)?;
        let _turn = self.asks.enter().await.map_err(refused)?;
        let (sender, mut events) = tokio::sync::mpsc::unbounded_channel();
        let cancel = self.library.stop_token().child_token();
        let _stop_when_dropped = cancel.clone().drop_guard();
        let progress = meta.get_progress_token();
        let relay = async {
            let mut step = 0u32;
            while let Some(event) = events.recv().await {
                let (Some(token), Some(message)) = (&progress, progress_message(&event)) else {
                    continue;
                };
                step += 1;
                let _ = client
                    .notify_progress(
                        ProgressNotificationParam::new(token.clone(), f64::from(step))
                            .with_message(message),
                    )
                    .await;
            }
        };
        // The sink goes when the answer is done, which ends the relay.
        let answer = async {
            let sink = EventSink::new(sender);
            self.library.ask(&request, &sink, &cancel).await
        };
        let (run, ()) = tokio::join!(answer, relay);
        Ok(Json(run.map_err(failed)?))
    }

    #[tool(
        description = "Read from the library by id: a document's structure tree (document), or a passage's full text (passage: a search hit's or citation's chunk_id)."
    )]
    async fn read(
        &self,
        Parameters(request): Parameters<ReadRequest>,
    ) -> Result<Json<ReadResult>, String> {
        let result = match (request.document, request.passage) {
            (Some(id), None) => ReadResult {
                document: Some(self.library.document(id).await.map_err(failed)?),
                passage: None,
            },
            (None, Some(id)) => ReadResult {
                document: None,
                passage: Some(self.library.passage(id).await.map_err(failed)?),
            },
            _ => return Err("name either a document or a passage".into()),
        };
        Ok(Json(result))
    }

    #[tool(
        description = "The library's collections: named sets of folders and tags to scope a search or a question to."
    )]
    async fn list_collections(&self) -> Result<Json<Collections>, String> {
        Ok(Json(Collections {
            collections: self.library.collections().list().await.map_err(failed)?,
        }))
    }

    #[tool(
        description = "Earlier conversations with the library, newest first; ask with `thread` to follow one up."
    )]
    async fn list_threads(
        &self,
        Parameters(request): Parameters<ThreadsRequest>,
    ) -> Result<Json<Threads>, String> {
        let limit = request.limit.unwrap_or(20).clamp(1, 500);
        Ok(Json(Threads {
            threads: self
                .library
                .threads()
                .list(request.text.as_deref(), limit)
                .await
                .map_err(failed)?,
        }))
    }
}

/// A resource that cannot be listed or read, as the protocol's error.
fn resource_error(e: folio_engine::Error) -> ErrorData {
    let e = ApiError::from(e);
    if e.status == axum::http::StatusCode::NOT_FOUND {
        ErrorData::resource_not_found(e.message, None)
    } else {
        ErrorData::internal_error(e.message, None)
    }
}

/// What a progress notification says of a run's event, if anything.
fn progress_message(event: &RunEvent) -> Option<String> {
    match event {
        RunEvent::Rewritten { .. } => Some("rewrote the follow-up to stand alone".into()),
        RunEvent::Retrieved { passages, .. } => Some(format!("retrieved {passages} passages")),
        RunEvent::LlmStarted { step } => Some(format!("{step}…")),
        RunEvent::LlmFinished {
            step,
            completion_tokens,
            ..
        } => Some(format!("{step}: wrote {completion_tokens} tokens")),
        _ => None,
    }
}

/// The `ask` tool's description: what it does, and every method with its
/// options, from the methods' own declarations.
fn ask_description() -> String {
    let mut text = String::from(
        "Answer a question from the person's document library with one of Folio's methods; the answer cites its sources as [n], listed in `citations` (with chunk_id for `read`). Give `thread` (a run's thread_id) to ask a follow-up in that conversation. Methods and their options (pass options as name: value strings):",
    );
    for m in methods() {
        let info = m.info();
        text.push_str(&format!("\n- {}: {}", info.id, info.summary));
        for o in &info.options {
            text.push_str(&format!(
                "\n  - {} ({}; default {}): {}",
                o.name,
                o.accepted(),
                o.default,
                o.help
            ));
        }
    }
    text
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for FolioMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("folio", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Folio is the person's local library of documents. Search it, ask it questions with a method, and read what it cites.",
        )
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        // The cursor is "folder index:offset".
        let (mut folder, mut offset) = request
            .and_then(|r| r.cursor)
            .and_then(|c| {
                let (f, o) = c.split_once(':')?;
                Some((f.parse::<usize>().ok()?, o.parse::<i64>().ok()?))
            })
            .unwrap_or((0, 0));
        let folders = self.library.roots().await.map_err(resource_error)?;
        let mut resources = Vec::new();
        while folder < folders.len() && resources.len() < RESOURCES_PAGE as usize {
            let page = self
                .library
                .folder_documents(
                    &folio_engine::path_text::to_text(&folders[folder].path),
                    offset,
                    RESOURCES_PAGE,
                )
                .await
                .map_err(resource_error)?;
            for d in page.documents.iter().filter(|d| d.status == "indexed") {
                resources.push(
                    Resource::new(
                        format!("{DOCUMENT_URI}{}", d.id),
                        folio_engine::path_text::shown_name(&d.path),
                    )
                    .with_description(folio_engine::path_text::shown(&d.path))
                    .with_mime_type("text/plain"),
                );
            }
            offset += page.documents.len() as i64;
            if page.documents.is_empty() || offset >= page.total {
                folder += 1;
                offset = 0;
            }
        }
        let mut result = ListResourcesResult::with_all_items(resources);
        if folder < folders.len() {
            result.next_cursor = Some(format!("{folder}:{offset}"));
        }
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let id = request
            .uri
            .strip_prefix(DOCUMENT_URI)
            .and_then(|id| id.parse::<i64>().ok())
            .ok_or_else(|| {
                ErrorData::resource_not_found(format!("no resource {}", request.uri), None)
            })?;
        let text = self
            .library
            .document_text(id)
            .await
            .map_err(resource_error)?;
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri)]).into())
    }
}
