//! Folders, their documents, and background jobs.

use std::path::PathBuf;

use folio_engine::graph::{GraphBuildOptions, GraphStatus, Rubric};
use folio_engine::library::{DocumentTree, LibraryOverview};
use folio_engine::path_text;
use folio_engine::pipeline::PassSummary;
use folio_engine::retrieve::{SearchHit, SearchMode};
use folio_engine::store::{Collection, DocumentPage, NoteLinks, PassageBoxes, Scope, TagCount};
use tauri::ipc::Response;
use tauri::{AppHandle, State};

use super::{dialogs, CommandResult};
use crate::state::AppState;

#[tauri::command(rename_all = "snake_case")]
pub async fn library_overview(state: State<'_, AppState>) -> CommandResult<LibraryOverview> {
    Ok(state.library().await?.overview().await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn folder_documents(
    state: State<'_, AppState>,
    folder: String,
    offset: i64,
    limit: i64,
) -> CommandResult<DocumentPage> {
    Ok(state
        .library()
        .await?
        .folder_documents(&folder, offset.max(0), limit.clamp(1, 500))
        .await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn pick_folder(app: AppHandle) -> CommandResult<Option<String>> {
    Ok(dialogs::folder(&app, "Add a folder to Folio")
        .await?
        .map(|p| path_text::to_text(&p)))
}

/// Queues the folders for indexing and returns the job id at once; the
/// watcher runs the job and progress arrives as engine events. A folder
/// not picked in the dialog (typed in the view) is confirmed first.
#[tauri::command(rename_all = "snake_case")]
pub async fn add_folders(
    app: AppHandle,
    state: State<'_, AppState>,
    paths: Vec<String>,
) -> CommandResult<i64> {
    let paths: Vec<PathBuf> = paths.iter().map(|p| path_text::to_path(p.trim())).collect();
    dialogs::authorize_paths(&app, "index and keep watching", &paths).await?;
    Ok(state.library().await?.add(&paths).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn remove_folder(state: State<'_, AppState>, path: String) -> CommandResult<()> {
    Ok(state
        .library()
        .await?
        .remove(path_text::to_path(&path).as_path())
        .await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn pause_jobs(state: State<'_, AppState>) -> CommandResult<()> {
    Ok(state.library().await?.jobs().pause().await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn resume_jobs(state: State<'_, AppState>) -> CommandResult<()> {
    Ok(state.library().await?.jobs().resume().await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn cancel_job(state: State<'_, AppState>, job_id: i64) -> CommandResult<()> {
    Ok(state.library().await?.jobs().cancel(job_id).await?)
}

/// Reads files again, each alone: ones set aside because the app stopped
/// while reading them, or that failed for a reason since fixed. Only files
/// in watched folders are read. A file that stops the app again is set
/// aside again on the next start.
#[tauri::command(rename_all = "snake_case")]
pub async fn retry_files(
    state: State<'_, AppState>,
    paths: Vec<String>,
) -> CommandResult<PassSummary> {
    let paths: Vec<PathBuf> = paths.iter().map(|p| path_text::to_path(p)).collect();
    Ok(state.library().await?.jobs().retry(&paths).await?)
}

/// The indexed text of a document, as its structure tree: what the source
/// viewer shows when a citation is opened.
#[tauri::command(rename_all = "snake_case")]
pub async fn document_tree(
    state: State<'_, AppState>,
    path: String,
) -> CommandResult<DocumentTree> {
    Ok(state
        .library()
        .await?
        .tree(path_text::to_path(&path).as_path())
        .await?)
}

/// A note's links (resolved now), its backlinks, aliases and tags: the
/// document view's links panel.
#[tauri::command(rename_all = "snake_case")]
pub async fn note_links(state: State<'_, AppState>, path: String) -> CommandResult<NoteLinks> {
    Ok(state
        .library()
        .await?
        .links(path_text::to_path(&path).as_path())
        .await?)
}

/// Every tag of the library's notes, with how many carry each, for the
/// scope pickers.
#[tauri::command(rename_all = "snake_case")]
pub async fn tags(state: State<'_, AppState>) -> CommandResult<Vec<TagCount>> {
    Ok(state.library().await?.tags().await?)
}

/// The bytes of an indexed PDF, for the page viewer, as a raw IPC
/// response (an ArrayBuffer in the webview, not a JSON array of numbers).
#[tauri::command(rename_all = "snake_case")]
pub async fn document_file(state: State<'_, AppState>, path: String) -> CommandResult<Response> {
    let bytes = state
        .library()
        .await?
        .pdf_bytes(path_text::to_path(&path).as_path())
        .await?;
    Ok(Response::new(bytes))
}

/// Where a cited passage of a PDF is drawn on its page, a box per line, or
/// why that is not known.
#[tauri::command(rename_all = "snake_case")]
pub async fn passage_boxes(
    state: State<'_, AppState>,
    path: String,
    page: u32,
    span_start: i64,
    span_end: i64,
) -> CommandResult<PassageBoxes> {
    Ok(state
        .library()
        .await?
        .passage_boxes(
            path_text::to_path(&path).as_path(),
            page,
            span_start,
            span_end,
        )
        .await?)
}

/// How far each rubric's information-gain graph covers the library, what
/// scoring it has cost, and the graph jobs.
#[tauri::command(rename_all = "snake_case")]
pub async fn graph_status(state: State<'_, AppState>) -> CommandResult<GraphStatus> {
    Ok(state.library().await?.graph_status().await?)
}

/// Queues a graph job that scores each pending chunk's `n` nearest
/// neighbours under `rubric`, and returns its id at once; the graph worker
/// runs it and progress arrives as engine events.
#[tauri::command(rename_all = "snake_case")]
pub async fn build_graph(
    state: State<'_, AppState>,
    rubric: Rubric,
    n: usize,
) -> CommandResult<i64> {
    Ok(state
        .library()
        .await?
        .jobs()
        .queue_graph_build(GraphBuildOptions { rubric, n })
        .await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn collections(state: State<'_, AppState>) -> CommandResult<Vec<Collection>> {
    Ok(state.library().await?.collections().list().await?)
}

/// Saves a collection of folders the library already holds and tags its
/// notes carry (the view offers only those), so no dialog confirms them.
#[tauri::command(rename_all = "snake_case")]
pub async fn save_collection(
    state: State<'_, AppState>,
    name: String,
    folders: Vec<String>,
    tags: Vec<String>,
) -> CommandResult<Collection> {
    let folders: Vec<PathBuf> = folders.iter().map(|f| path_text::to_path(f)).collect();
    Ok(state
        .library()
        .await?
        .collections()
        .save(&name, &folders, &tags)
        .await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn delete_collection(state: State<'_, AppState>, name: String) -> CommandResult<()> {
    Ok(state.library().await?.collections().delete(&name).await?)
}

/// Plain search, as `folio search`: the `k` chunks that best match
/// `query` within `scope`, best first.
#[tauri::command(rename_all = "snake_case")]
pub async fn search(
    state: State<'_, AppState>,
    query: String,
    k: usize,
    mode: SearchMode,
    scope: Scope,
) -> CommandResult<Vec<SearchHit>> {
    Ok(state
        .library()
        .await?
        .search(&query, k, mode, &scope)
        .await?)
}

/// How many documents a scope holds (`None`: the whole library), or why
/// it cannot be used, as the scope picker is set.
#[tauri::command(rename_all = "snake_case")]
pub async fn scope_size(state: State<'_, AppState>, scope: Scope) -> CommandResult<Option<usize>> {
    Ok(state.library().await?.scope_size(&scope).await?)
}
