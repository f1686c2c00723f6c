//! Asking a question: check the request, record a run, let the method work,
//! and store whatever came of it (answer, citations, trace, every model call,
//! timings), so history holds failures as faithfully as answers.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::conversation::{history_budget, Conversation};
use super::retrievers::RetrieverKind;
use super::{
    attribution, find, Answer, EventSink, Method, MethodContext, MethodError, Params, RunEvent,
    RETRIEVER,
};
use folio_llm::calibration::Calibration;
use folio_llm::prompts::Prompts;
use folio_llm::{Llm, LlmSettings, DEFAULT_SEED};
use folio_retrieve::RetrievalService;
use folio_store::{
    JoinedBecause, NewRun, Placement, Rewrite, RunOutcome, RunRecord, RunStatus, Scope, Store,
    StoreError, Turn,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct AskRequest {
    pub question: String,
    pub method: String,
    /// Passages per retrieval; defaults to the method's own
    /// ([`super::MethodDefaults`]).
    #[serde(default)]
    pub k: Option<usize>,
    /// Defaults to the method's own, else the configured temperature.
    pub temperature: Option<f32>,
    /// Defaults to the configured `max_tokens`.
    pub max_tokens: Option<u32>,
    /// Seeds every sampled reply; defaults to [`DEFAULT_SEED`]. It changes
    /// an answer only where something is sampled: a temperature above 0, or
    /// a method step that samples on purpose.
    #[serde(default)]
    #[ts(optional)]
    pub seed: Option<u32>,
    /// Method options as `name = value` text, checked against the method.
    pub options: BTreeMap<String, String>,
    /// The thread this question follows up on; `None` starts a new one.
    #[serde(default)]
    #[ts(optional)]
    pub thread: Option<i64>,
    /// With `thread`: answer in a new branch of it, which follows the same
    /// earlier turns but leaves the thread itself as it is (Compare asks
    /// every method the same follow-up this way).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fork: bool,
    /// What the question may draw from; the whole library by default.
    #[serde(default)]
    pub scope: Scope,
    /// With `thread`: how the follow-up is searched; rewritten by the
    /// model into a standalone question by default. The answer steps see
    /// the earlier turns whichever it is.
    #[serde(default, skip_serializing_if = "RewriteMode::is_on")]
    #[ts(as = "Option<RewriteMode>", optional)]
    pub rewrite: RewriteMode,
}

/// How a follow-up is searched.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    ts_rs::TS,
    schemars::JsonSchema,
)]
#[ts(export)]
#[serde(rename_all = "kebab-case")]
pub enum RewriteMode {
    /// The model rewrites it into a question that stands alone.
    #[default]
    On,
    /// As asked: the baseline an evaluation of the rewrite compares with.
    Off,
    /// The question before it and the follow-up together, with no model
    /// call: the baseline a rewrite must beat on retrieval.
    Join,
}

impl RewriteMode {
    pub fn is_on(&self) -> bool {
        *self == RewriteMode::On
    }
}

impl folio_core::choice::Choice for RewriteMode {
    const ALL: &'static [RewriteMode] = &[RewriteMode::On, RewriteMode::Off, RewriteMode::Join];

    fn as_str(self) -> &'static str {
        match self {
            RewriteMode::On => "on",
            RewriteMode::Off => "off",
            RewriteMode::Join => "join",
        }
    }
}

/// Passages per retrieval for a method whose paper names no other number.
pub const DEFAULT_K: usize = 5;

/// The request settings a caller chooses, shared by `folio ask` and every
/// spec of `folio eval`; `None` takes the method's own value
/// ([`super::MethodDefaults`]), else the configured one.
#[derive(
    Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct AskSettings {
    /// Passages to retrieve.
    pub k: Option<usize>,
    pub temperature: Option<f32>,
    /// Most tokens the model may write per step.
    pub max_tokens: Option<u32>,
    /// Seed of sampled replies; matters only where something is sampled.
    pub seed: Option<u32>,
}

/// The settings the runs use: the flags, with `folio.toml`'s values where a
/// flag is not given. Answers depend on these, not on which were typed, so
/// they are what summaries report and what a resumed evaluation must share.
/// `k` and `temperature` stay `None` where each method's own applies
/// ([`super::Params::resolve`] settles them per method).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    serde::Serialize,
    serde::Deserialize,
    ts_rs::TS,
    schemars::JsonSchema,
)]
#[ts(export)]
pub struct ResolvedSettings {
    pub k: Option<usize>,
    pub temperature: Option<f32>,
    /// `folio.toml`'s temperature, for a method with none of its own.
    /// Missing from evaluations recorded before methods had their own:
    /// they always named a temperature.
    #[serde(default = "configured_default")]
    pub configured_temperature: f32,
    pub max_tokens: u32,
    /// Missing from evaluations recorded before runs had a seed: they used
    /// the default.
    #[serde(default = "default_seed")]
    pub seed: u32,
}

fn default_seed() -> u32 {
    DEFAULT_SEED
}

fn configured_default() -> f32 {
    LlmSettings::default().temperature
}

impl ResolvedSettings {
    /// `k` in words for reports: the number, or that each method's applies.
    pub fn k_shown(&self) -> String {
        self.k
            .map_or_else(|| "each method's own".to_string(), |k| k.to_string())
    }

    /// The temperature in words for reports.
    pub fn temperature_shown(&self) -> String {
        match self.temperature {
            Some(t) => t.to_string(),
            None => format!("each method's own, else {}", self.configured_temperature),
        }
    }
}

impl AskSettings {
    pub fn resolve(self, llm: &LlmSettings) -> ResolvedSettings {
        ResolvedSettings {
            k: self.k,
            temperature: self.temperature,
            configured_temperature: llm.temperature,
            max_tokens: self.max_tokens.unwrap_or(llm.max_tokens),
            seed: self.seed.unwrap_or(DEFAULT_SEED),
        }
    }
}

impl AskRequest {
    pub fn new(question: impl Into<String>, method: impl Into<String>) -> AskRequest {
        AskRequest {
            question: question.into(),
            method: method.into(),
            k: None,
            temperature: None,
            max_tokens: None,
            seed: None,
            options: BTreeMap::new(),
            thread: None,
            fork: false,
            scope: Scope::default(),
            rewrite: RewriteMode::On,
        }
    }
}

/// What answering a question uses: the index to read, the store that keeps
/// runs, the model with its settings, and the prompts. The library normally
/// supplies the configured model; a test may pass a scripted one to check a
/// method's control flow.
pub struct Answering<'a> {
    pub retrieval: &'a RetrievalService,
    pub store: &'a Store,
    pub llm: &'a dyn Llm,
    pub settings: &'a LlmSettings,
    /// The configured model's calibrated sufficiency threshold, if
    /// measured, or why the calibrations could not be read (which only the
    /// methods that use one need to hear).
    pub calibration: Result<Option<&'a Calibration>, &'a str>,
    pub prompts: &'a Prompts,
}

/// Answers `request` and stores the run, failed or not. A bad request fails
/// before anything is stored.
pub async fn ask(
    answering: &Answering<'_>,
    request: &AskRequest,
    events: &EventSink,
    cancel: &CancellationToken,
) -> Result<RunRecord, MethodError> {
    let Answering {
        retrieval,
        store,
        llm,
        settings,
        calibration,
        prompts,
    } = *answering;
    let question = request.question.trim();
    if question.is_empty() {
        return Err(MethodError::EmptyQuestion);
    }
    let method = find(&request.method)?;
    let info = method.info();
    let chosen = AskSettings {
        k: request.k,
        temperature: request.temperature,
        max_tokens: request.max_tokens,
        seed: request.seed,
    };
    let params = Params::resolve(&info, chosen.resolve(settings), &request.options)?;
    let retriever = if params.declares(RETRIEVER.name) {
        RETRIEVER.read(&params)?
    } else {
        RetrieverKind::Hybrid
    };
    let (placement, earlier) = match (request.thread, request.fork) {
        (None, _) => (Placement::NewThread, Vec::new()),
        (Some(id), fork) => {
            let earlier = store
                .conversation(id)
                .await?
                .ok_or(MethodError::UnknownThread(id))?;
            let placement = if fork {
                Placement::Branch(id)
            } else {
                Placement::FollowUp(id)
            };
            (placement, earlier)
        }
    };
    let documents = store.resolve_scope(&request.scope).await?;
    let conversation = Conversation::select(&earlier, history_budget(llm.info().context_size));
    let params_json = serde_json::to_value(&params).unwrap_or(Value::Null);
    let model_json = serde_json::to_value(llm.info()).unwrap_or(Value::Null);
    let unknown_thread = || MethodError::UnknownThread(request.thread.unwrap_or_default());
    let run = store
        .start_run(&NewRun {
            placement,
            question,
            method: info.id,
            scope: &request.scope,
            params: &params_json,
            model: &model_json,
        })
        .await?
        .ok_or_else(unknown_thread)?;
    let run_id = run.run;
    events.emit(RunEvent::Started {
        run_id,
        thread_id: run.thread,
        method: info.id,
    });

    let started = Instant::now();
    let timeout = std::time::Duration::from_secs(settings.timeout_secs);
    let ctx = MethodContext::new(retrieval, retriever, llm, prompts, events, cancel, timeout)
        .with_history(conversation.messages())
        .with_prefix_reuse(settings.reuse_prefix)
        .with_scope(documents)
        .with_calibration(
            calibration
                .map(Option::<&Calibration>::cloned)
                .map_err(str::to_string),
        );
    let follow_up = match (request.thread, request.rewrite) {
        (None, _) => FollowUp::No,
        (Some(_), RewriteMode::On) => FollowUp::Rewritten,
        (Some(_), RewriteMode::Off) => FollowUp::AsAsked,
        (Some(_), RewriteMode::Join) => FollowUp::Joined,
    };
    let (turn, result) =
        answer_turn(&ctx, method, &conversation, follow_up, question, &params).await;
    let result = result.map(|answer| Answer {
        trace: ctx.with_retrieval(answer.trace),
        ..answer
    });
    let total_ms = started.elapsed().as_millis() as u64;
    let recorded = ctx.into_recorded();

    let llm_ms = recorded.llm_ms;
    let timings = json!({
        "total_ms": total_ms,
        "retrieval_ms": recorded.retrieval_ms,
        "llm_ms": llm_ms,
        "other_ms": total_ms.saturating_sub(llm_ms + recorded.retrieval_ms),
    });
    let outcome = match result {
        Ok(answer) => RunOutcome {
            status: RunStatus::Done,
            turn,
            answer: Some(answer.text),
            cut_off: answer.cut_off,
            citations: serde_json::to_value(&answer.citations).unwrap_or_else(|_| json!([])),
            trace: serde_json::to_value(&answer.trace).ok(),
            error: None,
            timings,
            calls: recorded.calls,
        },
        Err(e) => RunOutcome {
            status: if e.is_cancelled() {
                RunStatus::Cancelled
            } else {
                RunStatus::Failed
            },
            turn,
            answer: e.partial_answer().map(str::to_string),
            cut_off: None,
            citations: json!([]),
            trace: recorded.trace.and_then(|t| serde_json::to_value(&t).ok()),
            error: Some(e.to_string()),
            timings,
            calls: recorded.calls,
        },
    };
    store.finish_run(run_id, &outcome).await?;
    events.emit(RunEvent::Finished {
        run_id,
        status: outcome.status,
    });
    store.run(run_id).await?.ok_or_else(|| {
        StoreError::Corrupt(format!("run {run_id} vanished while it was stored")).into()
    })
}

/// Whether a question follows up on a thread, and how it is searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FollowUp {
    No,
    Rewritten,
    AsAsked,
    Joined,
}

/// Lets the method answer `question`; a follow-up in a thread is first
/// rewritten to stand on its own (unless the request said otherwise), and
/// the method answers the rewrite. Sentences the answer leaves unmarked
/// are then given sources where a passage matches them.
async fn answer_turn(
    ctx: &MethodContext<'_>,
    method: &dyn Method,
    conversation: &Conversation,
    follow_up: FollowUp,
    question: &str,
    params: &Params,
) -> (Option<Turn>, Result<Answer, MethodError>) {
    let (turn, asked) = match follow_up {
        FollowUp::No => (None, question.to_string()),
        _ => {
            let rewrite = match follow_up {
                _ if conversation.is_empty() => Rewrite::NotNeeded,
                FollowUp::AsAsked => Rewrite::Off,
                FollowUp::Joined => conversation.joined(question, JoinedBecause::Asked),
                _ => match conversation.rewrite(ctx, question, params).await {
                    Ok(rewrite) => rewrite,
                    Err(e) => return (None, Err(e)),
                },
            };
            ctx.emit(RunEvent::Rewritten {
                rewrite: rewrite.clone(),
            });
            let asked = rewrite.query().unwrap_or(question).to_string();
            (Some(conversation.turn(rewrite)), asked)
        }
    };
    let result = match method.run(ctx, &asked, params).await {
        Ok(answer) => with_attributed_sources(ctx, &asked, answer).await,
        Err(e) => Err(e),
    };
    (turn, result)
}

/// `answer` with a source for each sentence the model left unmarked, where
/// one of the passages it was shown matches the sentence (`attribution.rs`).
async fn with_attributed_sources(
    ctx: &MethodContext<'_>,
    question: &str,
    mut answer: Answer,
) -> Result<Answer, MethodError> {
    let Some(passages) = answer.trace.passages() else {
        return Ok(answer);
    };
    let embed = |texts: Vec<String>| async move { ctx.embed(&texts).await };
    let matches = attribution::match_sentences(embed, question, &answer.text, passages).await?;
    let attributed = attribution::attributed(
        &matches,
        passages,
        &answer.citations,
        attribution::THRESHOLD,
    );
    answer.citations.extend(attributed);
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Indexed;
    use crate::testing::{ask_with, library, refused, reply, ScriptedLlm};
    use folio_llm::{FinishReason, LlmError};

    async fn ask_scripted(
        script: Vec<std::result::Result<folio_llm::Completion, LlmError>>,
        max_tokens: u32,
    ) -> (RunRecord, Vec<RunEvent>, Indexed, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let library = library(dir.path()).await;
        let mut request = AskRequest::new("What is Folio?", "llm-only");
        request.max_tokens = Some(max_tokens);
        let (run, events) = ask_with(&library, &ScriptedLlm::new(script), &request).await;
        (run, events, library, dir)
    }

    #[tokio::test]
    async fn an_answer_is_stored_with_its_call_and_events() {
        let (run, events, library, _dir) =
            ask_scripted(vec![reply(" A knowledge base. ", FinishReason::Stop)], 64).await;
        assert_eq!(run.status, RunStatus::Done);
        assert_eq!(run.answer.as_deref(), Some("A knowledge base."));
        assert_eq!(
            (run.llm_calls, run.prompt_tokens, run.completion_tokens),
            (1, 10, 3)
        );
        assert_eq!(run.trace, Some(json!({ "method": "llm-only" })));
        let calls = library.store().llm_calls(run.id).await.unwrap();
        assert_eq!(calls[0].step, "answer");
        assert_eq!(calls[0].finish.as_deref(), Some("stop"));
        assert!(matches!(events.first(), Some(RunEvent::Started { .. })));
        assert!(events
            .iter()
            .any(|e| matches!(e, RunEvent::Token { text, .. } if text.contains("knowledge"))));
        assert!(matches!(
            events.last(),
            Some(RunEvent::Finished {
                status: RunStatus::Done,
                ..
            })
        ));
    }

    #[tokio::test]
    async fn empty_output_is_a_recorded_error() {
        let (run, ..) = ask_scripted(vec![reply("  \n", FinishReason::Stop)], 64).await;
        assert_eq!(run.status, RunStatus::Failed);
        assert!(
            run.error.as_deref().unwrap().contains("no text"),
            "{:?}",
            run.error
        );
        assert_eq!(run.llm_calls, 1);
    }

    #[tokio::test]
    async fn a_cut_off_answer_is_kept_and_marked() {
        let (run, ..) =
            ask_scripted(vec![reply("and so on and so on", FinishReason::Length)], 5).await;
        assert_eq!(run.status, RunStatus::Done);
        assert_eq!(run.error, None);
        assert_eq!(run.answer.as_deref(), Some("and so on and so on"));
        assert_eq!(
            run.cut_off,
            Some(folio_store::CutOff {
                step: "answer".into(),
                max_tokens: 5
            })
        );
    }

    #[tokio::test]
    async fn a_cut_off_reply_with_no_text_is_a_failed_run() {
        let (run, ..) = ask_scripted(vec![reply("   ", FinishReason::Length)], 5).await;
        assert_eq!(run.status, RunStatus::Failed);
        assert!(
            run.error
                .as_deref()
                .unwrap()
                .contains("cut off at 5 tokens"),
            "{:?}",
            run.error
        );
        assert_eq!(run.cut_off, None);
    }

    #[tokio::test]
    async fn backend_failures_and_cancellation_are_recorded() {
        let down = LlmError::ServerDown {
            url: "http://127.0.0.1:9".into(),
            reason: "refused".into(),
        };
        let (run, ..) = ask_scripted(vec![Err(down)], 64).await;
        assert_eq!(run.status, RunStatus::Failed);
        assert!(run.error.as_deref().unwrap().contains("not reachable"));
        let (run, ..) = ask_scripted(vec![Err(LlmError::Cancelled)], 64).await;
        assert_eq!(run.status, RunStatus::Cancelled);
    }

    #[tokio::test]
    async fn bad_requests_fail_before_a_run_is_stored() {
        let dir = tempfile::tempdir().unwrap();
        let library = library(dir.path()).await;
        let llm = ScriptedLlm::new(Vec::new());
        for (question, method, option) in [
            ("", "llm-only", None),
            ("q", "nope", None),
            ("q", "vanilla-rag", Some(("mood", "x"))),
            ("q", "vanilla-rag", Some(("retriever", "sparse"))),
            ("q", "pager", Some(("slots-max", "99"))),
            ("q", "ig2rag", Some(("alpha", "0"))),
        ] {
            let mut request = AskRequest::new(question, method);
            if let Some((name, value)) = option {
                request.options.insert(name.into(), value.into());
            }
            let err = refused(&library, &llm, &request).await;
            assert!(err.is_user_error(), "{err}");
        }
        assert!(library.store().runs(None, 10).await.unwrap().is_empty());
    }
}
