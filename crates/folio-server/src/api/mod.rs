//! Folio's own HTTP API under `/api`: each route a thin call into the
//! [`Library`](folio_engine::Library), speaking the engine's own types.
//! `openapi.rs` describes these same routes; its test checks the two lists
//! agree. The models and the evaluations have modules of their own.

pub mod evaluations;
pub mod models;

use std::convert::Infallible;
use std::path::PathBuf;
use std::time::Duration;

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use futures::StreamExt;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tokio::task::JoinHandle;
use tokio_util::sync::DropGuard;

use folio_engine::eval::spec::{compare_requests, parse_specs};
use folio_engine::graph::{GraphBuildOptions, GraphStatus};
use folio_engine::library::{DocumentTree, LibraryOverview};
use folio_engine::methods::runner::{AskRequest, AskSettings};
use folio_engine::methods::{methods, EventSink, MethodInfo, RunEvent};
use folio_engine::path_text;
use folio_engine::pipeline::PassSummary;
use folio_engine::retrieve::{SearchHit, SearchMode};
use folio_engine::store::{
    Collection, DocumentPage, Job, NoteLinks, RunRecord, Scope, StoredChunk, TagCount, Thread,
    ThreadSummary,
};

use crate::error::{ApiError, ErrorBody};
use crate::ServerState;

/// How long a client may take to send a request's body.
const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// The most items a list returns, whatever `limit` asks.
const MAX_LIST: i64 = 500;

pub fn routes() -> Router<ServerState> {
    Router::new()
        .route("/api/status", get(status))
        .route("/api/methods", get(list_methods))
        .route("/api/search", post(search))
        .route("/api/ask", post(ask))
        .route("/api/runs", get(runs))
        .route("/api/compare", post(compare))
        .route("/api/runs/{id}", get(run))
        .route("/api/runs/{id}/markdown", get(run_markdown))
        .route("/api/threads", get(threads))
        .route("/api/threads/{id}", get(thread).delete(delete_thread))
        .route("/api/threads/{id}/markdown", get(thread_markdown))
        .route("/api/collections", get(collections))
        .route(
            "/api/collections/{name}",
            put(save_collection).delete(delete_collection),
        )
        .route("/api/documents", get(documents))
        .route("/api/documents/{id}", get(document))
        .route("/api/documents/{id}/links", get(document_links))
        .route("/api/tags", get(tags))
        .route("/api/passages/{id}", get(passage))
        .route("/api/jobs", get(jobs))
        .route("/api/jobs/pause", post(pause_jobs))
        .route("/api/jobs/resume", post(resume_jobs))
        .route("/api/jobs/{id}/cancel", post(cancel_job))
        .route("/api/retry", post(retry))
        .route("/api/graph", get(graph).post(build_graph))
        .merge(models::routes())
        .merge(evaluations::routes())
}

pub async fn no_route() -> ApiError {
    ApiError::not_found("no such route; GET /openapi.json lists them")
}

pub async fn no_method() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this route does not take that method; GET /openapi.json lists them",
    )
}

/// A JSON body, its refusals worded as [`ApiError`]s (413 for one over
/// the limit), read within [`BODY_TIMEOUT`].
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        match tokio::time::timeout(BODY_TIMEOUT, Json::<T>::from_request(request, state)).await {
            Ok(Ok(Json(value))) => Ok(Body(value)),
            Ok(Err(rejection)) => Err(json_refused(rejection)),
            Err(_) => Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "timeout",
                "the request body took too long to arrive",
            )),
        }
    }
}

fn json_refused(rejection: JsonRejection) -> ApiError {
    let status = rejection.status();
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return ApiError::new(
            status,
            "too_large",
            format!(
                "the request body is over the limit: {} KiB, or {} MiB for an evaluation's",
                crate::MAX_BODY / 1024,
                crate::MAX_EVALUATION_BODY >> 20
            ),
        );
    }
    ApiError::new(status, "bad_request", rejection.body_text())
}

/// A path parameter, refused as an [`ApiError`].
pub struct PathOf<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for PathOf<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(v)| PathOf(v))
            .map_err(|r: PathRejection| ApiError::bad_request(r.body_text()))
    }
}

/// Query parameters, refused as an [`ApiError`].
pub struct QueryOf<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for QueryOf<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(v)| QueryOf(v))
            .map_err(|r: QueryRejection| ApiError::bad_request(r.body_text()))
    }
}

type Reply<T> = Result<Json<T>, ApiError>;

async fn status(State(s): State<ServerState>) -> Reply<LibraryOverview> {
    Ok(Json(s.library.overview().await?))
}

async fn list_methods() -> Json<Vec<MethodInfo>> {
    Json(methods().iter().map(|m| m.info()).collect())
}

/// What `POST /api/search` takes.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SearchRequest {
    pub query: String,
    /// How many chunks; 10 by default, at most 100.
    #[serde(default)]
    pub k: Option<usize>,
    /// Hybrid by default.
    #[serde(default)]
    pub mode: Option<SearchMode>,
    #[serde(default)]
    pub scope: Scope,
}

async fn search(
    State(s): State<ServerState>,
    Body(request): Body<SearchRequest>,
) -> Reply<Vec<SearchHit>> {
    let k = request.k.unwrap_or(10);
    if !(1..=100).contains(&k) {
        return Err(ApiError::bad_request("k must be between 1 and 100"));
    }
    let _turn = s.searches.enter().await?;
    let mode = request.mode.unwrap_or(SearchMode::Hybrid);
    Ok(Json(
        s.library
            .search(&request.query, k, mode, &request.scope)
            .await?,
    ))
}

/// One server-sent event of `POST /api/ask` with `Accept:
/// text/event-stream`: `progress` while the run works, then `run` with the
/// stored run, or `error`.
// Each event is made, written out and dropped at once: its size is no cost.
#[allow(clippy::large_enum_variant)]
#[derive(Serialize, schemars::JsonSchema)]
#[serde(tag = "event", content = "data", rename_all = "lowercase")]
pub enum AskEvent {
    Progress(#[schemars(with = "serde_json::Value")] RunEvent),
    Run(RunRecord),
    Error(ErrorBody),
}

/// The run `request` asks for, started on its own task so a client that
/// goes away stops the answer (through the returned guard's cancel) rather
/// than dropping it half stored.
pub fn start_ask(
    s: &ServerState,
    request: AskRequest,
    events: EventSink,
) -> (JoinHandle<Result<RunRecord, ApiError>>, DropGuard) {
    let cancel = s.library.stop_token().child_token();
    let library = s.library.clone();
    let task_cancel = cancel.clone();
    let task = tokio::spawn(async move { Ok(library.ask(&request, &events, &task_cancel).await?) });
    (task, cancel.drop_guard())
}

/// The run a [`start_ask`] task ended with.
pub async fn answered(
    task: JoinHandle<Result<RunRecord, ApiError>>,
) -> Result<RunRecord, ApiError> {
    task.await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?
}

/// Checks the method before the request queues, so a misspelt one is told
/// at once rather than after the questions ahead of it (its options are
/// checked when the run starts).
pub fn check_ask(request: &AskRequest) -> Result<(), ApiError> {
    folio_engine::methods::find(&request.method)
        .map(|_| ())
        .map_err(|e| ApiError::bad_request(e.to_string()))
}

async fn ask(
    State(s): State<ServerState>,
    headers: HeaderMap,
    Body(request): Body<AskRequest>,
) -> Result<Response, ApiError> {
    check_ask(&request)?;
    let turn = s.asks.enter().await?;
    if !wants_events(&headers) {
        let (task, _guard) = start_ask(&s, request, EventSink::default());
        return Ok(Json(answered(task).await?).into_response());
    }
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    let (task, guard) = start_ask(&s, request, EventSink::new(sender));
    let progress = futures::stream::unfold(receiver, |mut r| async move {
        r.recv().await.map(|e| (AskEvent::Progress(e), r))
    });
    let end = futures::stream::once(async move {
        let _turn = turn;
        match answered(task).await {
            Ok(run) => AskEvent::Run(run),
            Err(e) => AskEvent::Error(e.body()),
        }
    });
    // The guard lives as long as the stream: a client that goes away
    // cancels the run.
    let events = progress.chain(end).map(move |event| {
        let _ = &guard;
        Ok::<_, Infallible>(sse_event(&event))
    });
    Ok(Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// What `POST /api/compare` takes: one question for several methods.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CompareRequest {
    pub question: String,
    /// Two or more method specs, as `folio compare --methods` takes them:
    /// `method` or `method:name=value[:name=value…]`, e.g.
    /// `pager:variant=parallel`.
    pub methods: Vec<String>,
    /// Settings every method answers with; unset ones are each method's own.
    #[serde(flatten)]
    pub settings: AskSettings,
    #[serde(default)]
    pub scope: Scope,
}

/// One method's answer in a comparison.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Compared {
    pub spec: String,
    pub run: RunRecord,
}

/// The methods answer in turn, as one model answers one request at a time,
/// within one turn of the ask queue; each answer is a run of its own.
async fn compare(
    State(s): State<ServerState>,
    Body(request): Body<CompareRequest>,
) -> Reply<Vec<Compared>> {
    let specs = parse_specs(&request.methods).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let resolved = request.settings.resolve(&s.library.config().llm);
    let asks = compare_requests(
        &request.question,
        &specs,
        request.settings,
        resolved,
        &request.scope,
    )
    .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let _turn = s.asks.enter().await?;
    let mut compared = Vec::with_capacity(asks.len());
    for (spec, ask) in specs.iter().zip(asks) {
        let (task, _guard) = start_ask(&s, ask, EventSink::default());
        compared.push(Compared {
            spec: spec.to_string(),
            run: answered(task).await?,
        });
    }
    Ok(Json(compared))
}

fn sse_event(event: &AskEvent) -> Event {
    let (name, data) = match event {
        AskEvent::Progress(e) => ("progress", serde_json::to_string(e)),
        AskEvent::Run(run) => ("run", serde_json::to_string(run)),
        AskEvent::Error(e) => ("error", serde_json::to_string(e)),
    };
    Event::default().event(name).data(data.unwrap_or_default())
}

/// Whether the client asked for server-sent events.
pub fn wants_events(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/event-stream"))
}

/// `?text=…&limit=…` of the history lists.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ListQuery {
    /// Only items whose question holds this text.
    #[serde(default)]
    pub text: Option<String>,
    /// 50 by default, at most 500.
    #[serde(default)]
    pub limit: Option<i64>,
}

impl ListQuery {
    fn limit(&self) -> i64 {
        self.limit.unwrap_or(50).clamp(1, MAX_LIST)
    }
}

async fn runs(
    State(s): State<ServerState>,
    QueryOf(q): QueryOf<ListQuery>,
) -> Reply<Vec<RunRecord>> {
    Ok(Json(
        s.library.runs().list(q.text.as_deref(), q.limit()).await?,
    ))
}

async fn run(State(s): State<ServerState>, PathOf(id): PathOf<i64>) -> Reply<RunRecord> {
    Ok(Json(s.library.runs().get(id).await?))
}

/// A markdown reply, as `folio export` writes it.
pub struct Markdown(pub String);

impl IntoResponse for Markdown {
    fn into_response(self) -> Response {
        (
            [(header::CONTENT_TYPE, "text/markdown; charset=utf-8")],
            self.0,
        )
            .into_response()
    }
}

async fn run_markdown(
    State(s): State<ServerState>,
    PathOf(id): PathOf<i64>,
) -> Result<Markdown, ApiError> {
    Ok(Markdown(s.library.runs().markdown(id).await?))
}

async fn thread_markdown(
    State(s): State<ServerState>,
    PathOf(id): PathOf<i64>,
) -> Result<Markdown, ApiError> {
    Ok(Markdown(s.library.threads().markdown(id).await?))
}

async fn threads(
    State(s): State<ServerState>,
    QueryOf(q): QueryOf<ListQuery>,
) -> Reply<Vec<ThreadSummary>> {
    Ok(Json(
        s.library
            .threads()
            .list(q.text.as_deref(), q.limit())
            .await?,
    ))
}

async fn thread(State(s): State<ServerState>, PathOf(id): PathOf<i64>) -> Reply<Thread> {
    Ok(Json(s.library.threads().get(id).await?))
}

/// What a deletion answers.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Deleted {
    pub deleted: bool,
}

async fn delete_thread(State(s): State<ServerState>, PathOf(id): PathOf<i64>) -> Reply<Deleted> {
    s.library.threads().delete(id).await?;
    Ok(Json(Deleted { deleted: true }))
}

async fn collections(State(s): State<ServerState>) -> Reply<Vec<Collection>> {
    Ok(Json(s.library.collections().list().await?))
}

/// What `PUT /api/collections/{name}` takes: at least one folder or tag.
/// With both, a document must lie in one of the folders and carry one of
/// the tags.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CollectionMembers {
    /// Watched folders (or folders inside them), as `GET /api/status` lists them.
    #[serde(default)]
    pub folders: Vec<String>,
    /// Tags, as `GET /api/tags` lists them (a tag takes those nested under it).
    #[serde(default)]
    pub tags: Vec<String>,
}

async fn save_collection(
    State(s): State<ServerState>,
    PathOf(name): PathOf<String>,
    Body(body): Body<CollectionMembers>,
) -> Reply<Collection> {
    let folders: Vec<PathBuf> = body.folders.iter().map(PathBuf::from).collect();
    let saved = s.library.collections().save(&name, &folders, &body.tags);
    Ok(Json(saved.await?))
}

async fn delete_collection(
    State(s): State<ServerState>,
    PathOf(name): PathOf<String>,
) -> Reply<Deleted> {
    s.library.collections().delete(&name).await?;
    Ok(Json(Deleted { deleted: true }))
}

/// `?folder=…&offset=…&limit=…` of the document list.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DocumentsQuery {
    /// A watched folder, as `GET /api/status` lists it.
    pub folder: String,
    #[serde(default)]
    pub offset: Option<i64>,
    /// 50 by default, at most 500.
    #[serde(default)]
    pub limit: Option<i64>,
}

async fn documents(
    State(s): State<ServerState>,
    QueryOf(q): QueryOf<DocumentsQuery>,
) -> Reply<DocumentPage> {
    let limit = q.limit.unwrap_or(50).clamp(1, MAX_LIST);
    let offset = q.offset.unwrap_or(0).max(0);
    Ok(Json(
        s.library.folder_documents(&q.folder, offset, limit).await?,
    ))
}

async fn document(State(s): State<ServerState>, PathOf(id): PathOf<i64>) -> Reply<DocumentTree> {
    Ok(Json(s.library.document(id).await?))
}

async fn document_links(State(s): State<ServerState>, PathOf(id): PathOf<i64>) -> Reply<NoteLinks> {
    Ok(Json(s.library.links_of(id).await?))
}

async fn tags(State(s): State<ServerState>) -> Reply<Vec<TagCount>> {
    Ok(Json(s.library.tags().await?))
}

async fn passage(State(s): State<ServerState>, PathOf(id): PathOf<i64>) -> Reply<StoredChunk> {
    Ok(Json(s.library.passage(id).await?))
}

async fn jobs(State(s): State<ServerState>) -> Reply<JobsNow> {
    jobs_now(&s).await.map(Json)
}

/// Background work now: the newest jobs and whether it is paused.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct JobsNow {
    pub paused: bool,
    pub jobs: Vec<Job>,
}

async fn jobs_now(s: &ServerState) -> Result<JobsNow, ApiError> {
    Ok(JobsNow {
        paused: s.library.jobs().paused_for_library().await?,
        jobs: s.library.jobs().list(50).await?,
    })
}

async fn pause_jobs(State(s): State<ServerState>) -> Reply<JobsNow> {
    s.library.jobs().pause().await?;
    jobs_now(&s).await.map(Json)
}

async fn resume_jobs(State(s): State<ServerState>) -> Reply<JobsNow> {
    s.library.jobs().resume().await?;
    jobs_now(&s).await.map(Json)
}

async fn cancel_job(State(s): State<ServerState>, PathOf(id): PathOf<i64>) -> Reply<Job> {
    s.library.jobs().cancel(id).await?;
    Ok(Json(s.library.jobs().get(id).await?))
}

/// What `POST /api/retry` takes.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RetryFiles {
    /// Files of watched folders to read again, each alone, as `GET
    /// /api/status` lists the set-aside and failed ones; files elsewhere
    /// are not read.
    pub paths: Vec<String>,
}

async fn retry(State(s): State<ServerState>, Body(body): Body<RetryFiles>) -> Reply<PassSummary> {
    let paths: Vec<PathBuf> = body.paths.iter().map(|p| path_text::to_path(p)).collect();
    Ok(Json(s.library.jobs().retry(&paths).await?))
}

async fn graph(State(s): State<ServerState>) -> Reply<GraphStatus> {
    Ok(Json(s.library.graph_status().await?))
}

/// What `POST /api/graph` answers: the queued job, which the background
/// work runs (`GET /api/jobs` follows it).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Queued {
    pub job: i64,
}

async fn build_graph(
    State(s): State<ServerState>,
    Body(options): Body<GraphBuildOptions>,
) -> Reply<Queued> {
    let job = s.library.jobs().queue_graph_build(options).await?;
    Ok(Json(Queued { job }))
}
