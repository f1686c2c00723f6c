//! `/api/evaluations`: `folio eval` over HTTP. A client names an
//! evaluation and sends its questions and corpus as JSONL in the body;
//! they are kept, with the results, in `<data dir>/evaluations/<name>`,
//! so no client names a path on this machine. The evaluation runs as a job
//! of the library (`/api/jobs` follows and cancels it; a killed server's
//! is resumed by the background work); its report and the diff of two of
//! its methods are read back by name.

use std::path::PathBuf;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use folio_engine::eval::diff::{diff, Diff, RightBy, RunRef};
use folio_engine::eval::graph::DEFAULT_REACH;
use folio_engine::eval::job as eval_job;
use folio_engine::eval::report::{self, Report};
use folio_engine::eval::spec::parse_specs;
use folio_engine::eval::{EvalError, EvalEvent, EvalRequest};
use folio_engine::methods::runner::AskSettings;
use folio_engine::store::{Job, JobState};

use super::{Body, PathOf, QueryOf, Reply};
use crate::error::ApiError;
use crate::{ServerState, MAX_EVALUATION_BODY};

pub fn routes() -> Router<ServerState> {
    Router::new()
        .route(
            "/api/evaluations",
            get(list)
                .post(start)
                .layer(DefaultBodyLimit::max(MAX_EVALUATION_BODY)),
        )
        .route("/api/evaluations/{name}", get(one))
        .route("/api/evaluations/{name}/diff", get(parting))
}

/// What `POST /api/evaluations` takes: `folio eval`'s flags, with the
/// dataset and the corpus themselves in place of their paths.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct StartEvaluation {
    /// Letters, digits, `.`, `_` and `-`, up to 64: the evaluation's name
    /// here. Starting one by a name already used goes on from its answers
    /// (as `folio eval` into the same `--out`).
    pub name: String,
    /// The questions, one JSON object a line, as `folio eval --dataset`
    /// reads them.
    pub dataset: String,
    /// The passages to index, one JSON object a line, as `folio eval
    /// --corpus` reads a JSONL file.
    pub corpus: String,
    /// Method specs, as `folio eval --methods` takes them.
    pub methods: Vec<String>,
    /// Only the first N questions.
    #[serde(default)]
    pub limit: Option<usize>,
    /// Replace the answers already given instead of reusing them.
    #[serde(default)]
    pub fresh: bool,
    /// Also ask the judge model whether each answer means a gold one.
    #[serde(default)]
    pub judge: bool,
    /// Only passages whose text carries one of these `#tags` (or one
    /// nested under one) are retrieved; none for the whole corpus.
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(flatten)]
    pub settings: AskSettings,
}

/// An evaluation kept by the server.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct EvaluationView {
    pub name: String,
    /// Its newest job: how far it has got, or how it ended.
    pub job: Option<Job>,
    /// Its report, once answering ended (also when cut short); only
    /// `GET /api/evaluations/{name}` reads it.
    pub report: Option<Report>,
}

/// The longest name an evaluation may have.
const MAX_NAME: usize = 64;

/// Where evaluation `name` is kept, once the name is one a folder can
/// safely take.
fn folder(s: &ServerState, name: &str) -> Result<PathBuf, ApiError> {
    let fits = !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !fits {
        return Err(ApiError::bad_request(format!(
            "an evaluation's name is letters, digits, `.`, `_` and `-` (not first), up to {MAX_NAME}"
        )));
    }
    Ok(evaluations_dir(s).join(name))
}

fn evaluations_dir(s: &ServerState) -> PathBuf {
    s.library.config().data_dir.join("evaluations")
}

/// The results of the evaluation kept in `dir`.
fn out_of(dir: &std::path::Path) -> PathBuf {
    dir.join("out")
}

async fn start(
    State(s): State<ServerState>,
    Body(body): Body<StartEvaluation>,
) -> Reply<EvaluationView> {
    let dir = folder(&s, &body.name)?;
    let running = eval_job::job_for(&s.library, &out_of(&dir))
        .await?
        .filter(|job| matches!(job.state, JobState::Running | JobState::Queued));
    if let Some(job) = running {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "running",
            format!(
                "evaluation {} is running as job {}; wait for it, or cancel it with POST /api/jobs/{}/cancel",
                body.name, job.id, job.id
            ),
        ));
    }
    let methods = parse_specs(&body.methods)?;
    let request = EvalRequest {
        dataset: dir.join("dataset.jsonl"),
        corpus: dir.join("corpus.jsonl"),
        methods,
        limit: body.limit,
        out: out_of(&dir),
        fresh: body.fresh,
        graph_reach: DEFAULT_REACH,
        concurrency: 1,
        judge: body.judge,
        settings: body.settings,
        tags: body.tags,
    };
    keep(&request.dataset, &body.dataset)?;
    keep(&request.corpus, &body.corpus)?;
    request.check(s.library.config())?;
    let library = s.library.clone();
    let stop = library.stop_token().child_token();
    // Its outcome is its job's row; a failure before the job exists was
    // refused by the check above. The reply waits for the row: the job
    // reports its first event once the row is written, or ends without.
    let (started, job_written) = tokio::sync::oneshot::channel::<()>();
    let started = std::sync::Mutex::new(Some(started));
    tokio::spawn(async move {
        let on = |_: EvalEvent| {
            if let Some(started) = started.lock().ok().and_then(|mut s| s.take()) {
                let _ = started.send(());
            }
        };
        let _ = eval_job::run_in_foreground(&library, request, &stop, &on).await;
    });
    let _ = job_written.await;
    view(&s, &body.name, false).await.map(Json)
}

/// Writes what the client sent where the evaluation reads it.
fn keep(path: &std::path::Path, text: &str) -> Result<(), ApiError> {
    let write = |source| EvalError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(write)?;
    }
    std::fs::write(path, text).map_err(write)?;
    Ok(())
}

/// Evaluation `name` as it is now; with its report when `with_report` and
/// it has one.
async fn view(s: &ServerState, name: &str, with_report: bool) -> Result<EvaluationView, ApiError> {
    let out = out_of(&folder(s, name)?);
    let job = eval_job::job_for(&s.library, &out).await?;
    let report = match with_report {
        true => match report::load(&out) {
            Ok(report) => Some(report),
            Err(EvalError::NoSummary(_) | EvalError::NotAnEvaluation(_)) => None,
            Err(e) => return Err(e.into()),
        },
        false => None,
    };
    Ok(EvaluationView {
        name: name.to_string(),
        job,
        report,
    })
}

async fn list(State(s): State<ServerState>) -> Reply<Vec<EvaluationView>> {
    let mut names: Vec<String> = match std::fs::read_dir(evaluations_dir(&s)) {
        Ok(entries) => entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(source) => {
            return Err(EvalError::Read {
                path: evaluations_dir(&s),
                source,
            }
            .into())
        }
    };
    names.sort();
    let mut views = Vec::with_capacity(names.len());
    for name in names {
        views.push(view(&s, &name, false).await?);
    }
    Ok(Json(views))
}

async fn one(State(s): State<ServerState>, PathOf(name): PathOf<String>) -> Reply<EvaluationView> {
    let found = view(&s, &name, true).await?;
    if found.job.is_none() && found.report.is_none() {
        return Err(ApiError::not_found(format!(
            "there is no evaluation {name}; GET /api/evaluations lists them"
        )));
    }
    Ok(Json(found))
}

/// `?a=…&b=…&right_by=…` of a diff.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DiffQuery {
    /// A method spec the evaluation answered with.
    pub a: String,
    /// Another.
    pub b: String,
    /// What counts as right; `cover-em` by default.
    #[serde(default)]
    pub right_by: Option<RightBy>,
}

/// Where two of the evaluation's methods part ways, as `folio eval diff`.
async fn parting(
    State(s): State<ServerState>,
    PathOf(name): PathOf<String>,
    QueryOf(q): QueryOf<DiffQuery>,
) -> Reply<Diff> {
    let out = out_of(&folder(&s, &name)?);
    let side = |spec: String| RunRef {
        dir: out.clone(),
        spec: Some(spec),
    };
    let right_by = q.right_by.unwrap_or(RightBy::CoverEm);
    Ok(Json(diff(&side(q.a), &side(q.b), right_by).await?))
}
