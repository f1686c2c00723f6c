//! The Evaluate view: run `folio eval` from the app (the same steps, in
//! `folio_engine::eval::Evaluation`, so an evaluation started in one goes on in the
//! other), open a finished one's report and its runs, export the report.

use std::path::PathBuf;
use std::str::FromStr;

use folio_engine::eval::diff::{self, Diff, RightBy, RunRef};
use folio_engine::eval::job as eval_job;
use folio_engine::eval::report::{self, Report, SpecRun};
use folio_engine::eval::{graph as eval_graph, EvalEvent, EvalRequest, MethodSpec};
use folio_engine::methods::runner::AskSettings;
use serde::Deserialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, State};

use super::{dialogs, CommandResult};
use crate::ipc_error::IpcError;
use crate::state::AppState;

/// What to evaluate, as the form says it: `folio eval`'s flags, with
/// `None` for the defaults the CLI has.
#[derive(Debug, Clone, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct EvalForm {
    pub dataset: String,
    pub corpus: String,
    /// Method specs as `folio eval --methods` takes them, e.g. `pager:variant=parallel`.
    pub methods: Vec<String>,
    #[ts(optional)]
    pub limit: Option<usize>,
    pub out: String,
    /// Replace the answers already in `out` instead of reusing them.
    pub fresh: bool,
    pub judge: bool,
    /// Only passages of notes with one of these tags (or one nested under
    /// one) are retrieved; none for the whole corpus.
    pub tags: Vec<String>,
    #[ts(optional)]
    pub concurrency: Option<usize>,
    #[ts(optional)]
    pub graph_reach: Option<usize>,
    #[ts(optional)]
    pub k: Option<usize>,
    #[ts(optional)]
    pub temperature: Option<f32>,
    #[ts(optional)]
    pub max_tokens: Option<u32>,
    #[ts(optional)]
    pub seed: Option<u32>,
}

impl EvalForm {
    fn request(self) -> Result<EvalRequest, IpcError> {
        let methods = self
            .methods
            .iter()
            .map(|s| MethodSpec::from_str(s.trim()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(IpcError::from)?;
        if methods.is_empty() {
            return Err(IpcError::invalid_settings("choose at least one method"));
        }
        let path = |text: &str, what: &str| {
            let text = text.trim();
            match text.is_empty() {
                true => Err(IpcError::invalid_settings(format!("choose {what}"))),
                false => Ok(PathBuf::from(text)),
            }
        };
        Ok(EvalRequest {
            dataset: path(&self.dataset, "a dataset file")?,
            corpus: path(&self.corpus, "a corpus file or folder")?,
            methods,
            limit: self.limit,
            out: path(&self.out, "an output folder")?,
            fresh: self.fresh,
            graph_reach: self.graph_reach.unwrap_or(eval_graph::DEFAULT_REACH),
            concurrency: self.concurrency.unwrap_or(1),
            judge: self.judge,
            settings: AskSettings {
                k: self.k,
                temperature: self.temperature,
                max_tokens: self.max_tokens,
                seed: self.seed,
            },
            tags: self.tags,
        })
    }
}

/// What a dialog picks for the form.
#[derive(Debug, Clone, Copy, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "snake_case")]
pub enum EvalPick {
    Dataset,
    CorpusFile,
    CorpusFolder,
    Out,
}

#[tauri::command(rename_all = "snake_case")]
pub async fn pick_eval_path(app: AppHandle, pick: EvalPick) -> CommandResult<Option<String>> {
    let chosen = match pick {
        EvalPick::Dataset => dialogs::jsonl_file(&app, "Choose a dataset (JSONL)").await?,
        EvalPick::CorpusFile => dialogs::jsonl_file(&app, "Choose a corpus (JSONL)").await?,
        EvalPick::CorpusFolder => dialogs::folder(&app, "Choose a corpus folder").await?,
        EvalPick::Out => dialogs::folder(&app, "Choose where the evaluation goes").await?,
    };
    Ok(chosen.map(|p| p.display().to_string()))
}

/// Runs an evaluation to its end (or until cancelled: the answers given are
/// kept and the report says it was interrupted), streaming progress through
/// `on_event`, and returns its report. One runs at a time.
#[tauri::command(rename_all = "snake_case")]
pub async fn start_eval(
    app: AppHandle,
    state: State<'_, AppState>,
    form: EvalForm,
    on_event: Channel<EvalEvent>,
) -> CommandResult<Report> {
    let request = form.request()?;
    dialogs::authorize_paths(
        &app,
        "read the dataset and the corpus and write the evaluation into the output folder",
        &[
            request.dataset.clone(),
            request.corpus.clone(),
            request.out.clone(),
        ],
    )
    .await?;
    let library = state.library().await?;
    let cancel = state.register_eval()?;
    let result = evaluate(&library, request, &cancel, &on_event).await;
    state.finish_eval();
    result
}

async fn evaluate(
    library: &folio_engine::Library,
    request: EvalRequest,
    cancel: &tokio_util::sync::CancellationToken,
    on_event: &Channel<EvalEvent>,
) -> CommandResult<Report> {
    let out = request.out.clone();
    // The window may have closed; the evaluation goes on and is kept either way.
    eval_job::run_in_foreground(library, request, cancel, &|event| {
        let _ = on_event.send(event);
    })
    .await?;
    Ok(report::load(&out)?)
}

/// The user's Cancel: the evaluation stops after the answer in flight and
/// its job stays cancelled (closing the app instead leaves it to resume).
#[tauri::command(rename_all = "snake_case")]
pub async fn cancel_eval(state: State<'_, AppState>) -> CommandResult<()> {
    if let Ok(library) = state.library().await {
        eval_job::cancel_running(&library).await?;
    }
    state.cancel_eval();
    Ok(())
}

/// The evaluation folder `out` from the webview, once granted: picked in
/// the dialog, given to an evaluation started here, or confirmed now.
async fn evaluation_folder(app: &AppHandle, out: &str) -> CommandResult<PathBuf> {
    let out = PathBuf::from(out);
    dialogs::authorize_paths(
        app,
        "open the evaluation folder",
        std::slice::from_ref(&out),
    )
    .await?;
    Ok(out)
}

/// The report of the evaluation in `out`: its summary and every question
/// with each method's answer.
#[tauri::command(rename_all = "snake_case")]
pub async fn eval_report(app: AppHandle, out: String) -> CommandResult<Report> {
    Ok(report::load(&evaluation_folder(&app, &out).await?)?)
}

/// The runs behind one question's answers, read from the evaluation's own
/// index, for side-by-side viewing.
#[tauri::command(rename_all = "snake_case")]
pub async fn eval_runs(
    app: AppHandle,
    out: String,
    question_id: String,
) -> CommandResult<Vec<SpecRun>> {
    Ok(report::runs(&evaluation_folder(&app, &out).await?, &question_id).await?)
}

/// Where two of an evaluation's methods part ways, as `folio eval diff
/// OUT#A OUT#B`: the questions only one got right, with both answers and
/// the key parts of both traces.
#[tauri::command(rename_all = "snake_case")]
pub async fn eval_diff(
    app: AppHandle,
    out: String,
    a: String,
    b: String,
    right_by: RightBy,
) -> CommandResult<Diff> {
    let dir = evaluation_folder(&app, &out).await?;
    let side = |spec: String| RunRef {
        dir: dir.clone(),
        spec: Some(spec),
    };
    Ok(diff::diff(&side(a), &side(b), right_by).await?)
}

/// Asks where to save, then writes the report's markdown exactly there;
/// `None` when cancelled.
#[tauri::command(rename_all = "snake_case")]
pub async fn export_eval_report(app: AppHandle, out: String) -> CommandResult<Option<String>> {
    let report = report::load(&evaluation_folder(&app, &out).await?)?;
    let Some(path) = dialogs::markdown_destination(
        &app,
        "Export the evaluation report as markdown",
        "folio-evaluation.md",
    )
    .await?
    else {
        return Ok(None);
    };
    report::export(&report, &path)?;
    Ok(Some(path.display().to_string()))
}
