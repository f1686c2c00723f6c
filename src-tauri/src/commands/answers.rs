//! Asking questions (streamed), the history of runs and threads, and export.

use std::time::Duration;

use folio_engine::methods::runner::AskRequest;
use folio_engine::methods::{EventSink, MethodInfo, RunEvent};
use folio_engine::store::{LlmCallRow, RunRecord, ThreadSummary};
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, State};

use super::{dialogs, CommandResult};
use crate::batching::forward_batched;
use crate::state::AppState;

/// Tokens are batched to about a frame and a half: smooth to watch, cheap to paint.
const TOKEN_BATCH: Duration = Duration::from_millis(25);

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct RunDetail {
    pub run: RunRecord,
    pub calls: Vec<LlmCallRow>,
}

/// A thread turn by turn, and the files its answers cite that are no
/// longer in the library.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct ThreadDetail {
    pub summary: ThreadSummary,
    pub turns: Vec<RunDetail>,
    pub gone: Vec<String>,
}

#[tauri::command(rename_all = "snake_case")]
pub fn methods() -> Vec<MethodInfo> {
    folio_engine::methods::methods()
        .iter()
        .map(|m| m.info())
        .collect()
}

/// Answers `request`, streaming its progress through `on_event`, and returns
/// the stored run (also when it failed or was cancelled: see its status).
#[tauri::command(rename_all = "snake_case")]
pub async fn ask(
    state: State<'_, AppState>,
    request: AskRequest,
    ask_id: String,
    on_event: Channel<Vec<RunEvent>>,
) -> CommandResult<RunRecord> {
    let library = state.library().await?;
    let cancel = state.register_ask(&ask_id);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let forward = tokio::spawn(forward_batched(rx, TOKEN_BATCH, move |batch| {
        // The window may have closed; the run is stored either way.
        let _ = on_event.send(batch);
    }));
    let sink = EventSink::new(tx);
    let run = library.ask(&request, &sink, &cancel).await;
    drop(sink);
    state.finish_ask(&ask_id);
    let _ = forward.await;
    Ok(run?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn cancel_ask(state: State<'_, AppState>, ask_id: String) {
    state.cancel_ask(&ask_id);
}

/// Asks where to save, then writes exactly there; `None` when cancelled.
#[tauri::command(rename_all = "snake_case")]
pub async fn export_run(
    app: AppHandle,
    state: State<'_, AppState>,
    id: i64,
) -> CommandResult<Option<String>> {
    let library = state.library().await?;
    library.runs().get(id).await?;
    let Some(path) = dialogs::markdown_destination(
        &app,
        "Export run as markdown",
        &format!("folio-run-{id}.md"),
    )
    .await?
    else {
        return Ok(None);
    };
    Ok(Some(
        library
            .runs()
            .export(id, &path)
            .await?
            .display()
            .to_string(),
    ))
}

#[tauri::command(rename_all = "snake_case")]
pub async fn threads(
    state: State<'_, AppState>,
    query: Option<String>,
    limit: i64,
) -> CommandResult<Vec<ThreadSummary>> {
    Ok(state
        .library()
        .await?
        .threads()
        .list(query.as_deref(), limit.clamp(1, 1000))
        .await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn thread_detail(state: State<'_, AppState>, id: i64) -> CommandResult<ThreadDetail> {
    let library = state.library().await?;
    let thread = library.threads().get(id).await?;
    let gone = library.runs().gone_sources(&thread.runs).await?;
    let mut turns = Vec::with_capacity(thread.runs.len());
    for run in thread.runs {
        let calls = library.runs().calls(run.id).await?;
        turns.push(RunDetail { run, calls });
    }
    Ok(ThreadDetail {
        summary: thread.summary,
        turns,
        gone: gone.into_iter().collect(),
    })
}

#[tauri::command(rename_all = "snake_case")]
pub async fn delete_thread(state: State<'_, AppState>, id: i64) -> CommandResult<()> {
    Ok(state.library().await?.threads().delete(id).await?)
}

/// Asks where to save the whole thread, then writes exactly there; `None`
/// when cancelled.
#[tauri::command(rename_all = "snake_case")]
pub async fn export_thread(
    app: AppHandle,
    state: State<'_, AppState>,
    id: i64,
) -> CommandResult<Option<String>> {
    let library = state.library().await?;
    library.threads().get(id).await?;
    let Some(path) = dialogs::markdown_destination(
        &app,
        "Export conversation as markdown",
        &format!("folio-thread-{id}.md"),
    )
    .await?
    else {
        return Ok(None);
    };
    Ok(Some(
        library
            .threads()
            .export(id, &path)
            .await?
            .display()
            .to_string(),
    ))
}
