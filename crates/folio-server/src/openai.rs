//! Folio's methods as OpenAI-compatible models, for the chat apps people
//! already use: `GET /v1/models` lists one model per method
//! (`folio/vanilla-rag`, …) and `POST /v1/chat/completions` answers the
//! chat's last user message from the library with that method, streamed as
//! those apps expect (`data:` chunks, then `data: [DONE]`).
//!
//! Citations become markdown footnotes: the model's `[n]` is written
//! `[^n]`, and each source is defined below the answer. The answer also
//! carries an invisible link definition naming its run; when the chat
//! sends that answer back with a follow-up, the follow-up is asked in the
//! run's thread, so the chat's earlier turns are the thread's turns.
//! System messages are not used: the method's own prompts frame the
//! answer.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::task::JoinHandle;

use folio_engine::methods::runner::{AskRequest, RewriteMode};
use folio_engine::methods::{methods, Citation, CitedBy, EventSink, RunEvent, ANSWER_STEP};
use folio_engine::path_text::shown;
use folio_engine::store::{RunRecord, RunStatus, Scope};

use crate::api::{answered, check_ask, start_ask, Body};
use crate::error::ApiError;
use crate::ServerState;

/// Model ids are the method ids behind this prefix.
const PREFIX: &str = "folio/";
/// How an answer names its run, as a markdown link definition (which no
/// renderer shows).
const RUN_LINK: &str = "[folio-run]: folio:run/";

pub fn routes() -> Router<ServerState> {
    Router::new()
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(chat))
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ModelList {
    pub object: String,
    pub data: Vec<Model>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Model {
    /// `folio/<method>`.
    pub id: String,
    pub object: String,
    pub created: i64,
    pub owned_by: String,
}

async fn models() -> Json<ModelList> {
    Json(ModelList {
        object: "list".into(),
        data: methods()
            .iter()
            .map(|m| Model {
                id: format!("{PREFIX}{}", m.info().id),
                object: "model".into(),
                created: 0,
                owned_by: "folio".into(),
            })
            .collect(),
    })
}

/// The request chat apps send; fields Folio does not use are ignored.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ChatRequest {
    /// `folio/<method>`, as `GET /v1/models` lists them.
    pub model: String,
    pub messages: Vec<ChatMessage>,
    #[serde(default)]
    pub stream: bool,
    #[serde(default)]
    pub max_tokens: Option<u32>,
    #[serde(default)]
    pub max_completion_tokens: Option<u32>,
    #[serde(default)]
    pub temperature: Option<f32>,
    #[serde(default)]
    pub seed: Option<u32>,
    /// Folio's own settings for the run, for clients that can send them.
    #[serde(default)]
    pub folio: Option<FolioSettings>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct FolioSettings {
    #[serde(default)]
    pub k: Option<usize>,
    /// Method options as `name = value`, as `GET /api/methods` lists them.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    #[serde(default)]
    pub scope: Scope,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant` (others are ignored).
    pub role: String,
    #[serde(default)]
    pub content: Option<MessageContent>,
}

/// A message's text, or its parts (only text parts are read).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum MessageContent {
    Text(String),
    Parts(Vec<ContentPart>),
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ContentPart {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub text: Option<String>,
}

impl ChatMessage {
    fn text(&self) -> String {
        match &self.content {
            None => String::new(),
            Some(MessageContent::Text(text)) => text.clone(),
            Some(MessageContent::Parts(parts)) => parts
                .iter()
                .filter(|p| p.kind == "text")
                .filter_map(|p| p.text.as_deref())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ChatCompletion {
    pub id: String,
    pub object: String,
    pub created: u64,
    pub model: String,
    pub choices: Vec<ChatChoice>,
    pub usage: Usage,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ChatChoice {
    pub index: u32,
    pub message: AssistantMessage,
    /// `length` when the answer was cut off at the token limit.
    pub finish_reason: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AssistantMessage {
    pub role: String,
    pub content: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Usage {
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub total_tokens: i64,
}

/// One streamed piece (`data:` line) of a streamed completion.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ChatChunk {
    pub id: String,
    pub object: String,
    pub created: u64,
    pub model: String,
    pub choices: Vec<ChunkChoice>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ChunkChoice {
    pub index: u32,
    pub delta: Delta,
    pub finish_reason: Option<String>,
}

#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
pub struct Delta {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

async fn chat(
    State(s): State<ServerState>,
    Body(chat): Body<ChatRequest>,
) -> Result<Response, ApiError> {
    let request = ask_request(&s, &chat).await?;
    check_ask(&request)?;
    let turn = s.asks.enter().await?;
    let model = chat.model.clone();
    let id = format!("folio-{}", now());
    if !chat.stream {
        let (task, _guard) = start_ask(&s, request, EventSink::default());
        let run = finished(task).await?;
        let completion = ChatCompletion {
            id,
            object: "chat.completion".into(),
            created: now(),
            model,
            choices: vec![ChatChoice {
                index: 0,
                message: AssistantMessage {
                    role: "assistant".into(),
                    content: format!("{}{}", footnoted(answer_of(&run)), sources(&run)),
                },
                finish_reason: finish_reason(&run).into(),
            }],
            usage: Usage {
                prompt_tokens: run.prompt_tokens,
                completion_tokens: run.completion_tokens,
                total_tokens: run.prompt_tokens + run.completion_tokens,
            },
        };
        return Ok(Json(completion).into_response());
    }
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    let (task, guard) = start_ask(&s, request, EventSink::new(sender));
    let chunk = {
        let (id, model) = (id.clone(), model.clone());
        move |delta: Delta, finish: Option<String>| ChatChunk {
            id: id.clone(),
            object: "chat.completion.chunk".into(),
            created: now(),
            model: model.clone(),
            choices: vec![ChunkChoice {
                index: 0,
                delta,
                finish_reason: finish,
            }],
        }
    };
    let first = chunk(
        Delta {
            role: Some("assistant".into()),
            content: Some(String::new()),
        },
        None,
    );
    let written = std::sync::Arc::new(std::sync::Mutex::new(Markers::default()));
    let tokens = {
        let (written, chunk) = (written.clone(), chunk.clone());
        futures::stream::unfold(
            receiver,
            |mut r| async move { r.recv().await.map(|e| (e, r)) },
        )
        .filter_map(move |event| {
            let piece = match event {
                RunEvent::Token { step, text } if step == ANSWER_STEP => {
                    Some(written.lock().expect("not poisoned").push(&text))
                }
                _ => None,
            };
            let chunk = piece.filter(|p| !p.is_empty()).map(|p| {
                chunk(
                    Delta {
                        content: Some(p),
                        ..Delta::default()
                    },
                    None,
                )
            });
            std::future::ready(chunk)
        })
    };
    let end = futures::stream::once(async move {
        let _turn = turn;
        let run = match finished(task).await {
            Ok(run) => run,
            Err(e) => return vec![Err(e)],
        };
        let mut markers = written.lock().expect("not poisoned").clone();
        let mut rest = markers.finish();
        if !markers.streamed {
            rest = footnoted(answer_of(&run));
        }
        rest.push_str(&sources(&run));
        vec![
            Ok(chunk(
                Delta {
                    content: Some(rest),
                    ..Delta::default()
                },
                None,
            )),
            Ok(chunk(Delta::default(), Some(finish_reason(&run).into()))),
        ]
    })
    .flat_map(futures::stream::iter);
    let events = futures::stream::once(std::future::ready(Ok(first)))
        .chain(tokens.map(Ok))
        .chain(end)
        .map(|chunk: Result<ChatChunk, ApiError>| {
            let data = match chunk {
                Ok(chunk) => serde_json::to_string(&chunk),
                Err(e) => serde_json::to_string(&e.body()),
            };
            Event::default().data(data.unwrap_or_default())
        })
        .chain(futures::stream::once(std::future::ready(
            Event::default().data("[DONE]"),
        )))
        .map(move |event| {
            let _ = &guard;
            Ok::<_, Infallible>(event)
        });
    Ok(Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// The library's question for `chat`: its last user message, in the
/// thread of the answer before it when that answer was Folio's.
async fn ask_request(s: &ServerState, chat: &ChatRequest) -> Result<AskRequest, ApiError> {
    let method = chat.model.strip_prefix(PREFIX).ok_or_else(|| {
        ApiError::bad_request(format!(
            "unknown model {:?}; the models are Folio's methods, as GET /v1/models lists them (folio/vanilla-rag, ...)",
            chat.model
        ))
    })?;
    let last = chat
        .messages
        .iter()
        .rposition(|m| m.role == "user")
        .ok_or_else(|| ApiError::bad_request("the chat has no user message to answer"))?;
    let question = chat.messages[last].text();
    if question.trim().is_empty() {
        return Err(ApiError::bad_request("the last user message is empty"));
    }
    let earlier_run = chat.messages[..last]
        .iter()
        .rev()
        .find(|m| m.role == "assistant")
        .and_then(|m| run_named_in(&m.text()));
    let thread = match earlier_run {
        Some(id) => Some(s.library.runs().get(id).await?.thread_id),
        None => None,
    };
    let settings = chat.folio.as_ref();
    Ok(AskRequest {
        question,
        method: method.to_string(),
        k: settings.and_then(|f| f.k),
        temperature: chat.temperature,
        max_tokens: chat.max_completion_tokens.or(chat.max_tokens),
        seed: chat.seed,
        options: settings.map(|f| f.options.clone()).unwrap_or_default(),
        thread,
        fork: false,
        scope: settings.map(|f| f.scope.clone()).unwrap_or_default(),
        rewrite: RewriteMode::On,
    })
}

/// The run an earlier answer of Folio's names, if it is one.
fn run_named_in(answer: &str) -> Option<i64> {
    let at = answer.rfind(RUN_LINK)? + RUN_LINK.len();
    let digits: String = answer[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The run a chat's task ended with, if it answered: a chat app has no
/// place for a failed run but an error.
async fn finished(task: JoinHandle<Result<RunRecord, ApiError>>) -> Result<RunRecord, ApiError> {
    let run = answered(task).await?;
    match run.status {
        RunStatus::Done => Ok(run),
        _ => Err(ApiError::new(
            StatusCode::BAD_GATEWAY,
            "run_failed",
            format!(
                "run {} did not answer: {}",
                run.id,
                run.error.as_deref().unwrap_or(run.status.as_str())
            ),
        )),
    }
}

fn answer_of(run: &RunRecord) -> &str {
    run.answer.as_deref().unwrap_or_default()
}

fn finish_reason(run: &RunRecord) -> &'static str {
    if run.cut_off.is_some() {
        "length"
    } else {
        "stop"
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `answer` with each citation marker `[n]` written as a footnote `[^n]`.
fn footnoted(answer: &str) -> String {
    let mut markers = Markers::default();
    let mut out = markers.push(answer);
    out.push_str(&markers.finish());
    out
}

/// Rewrites `[n]` as `[^n]` in text that arrives in pieces, holding back a
/// possible marker until it is whole.
#[derive(Debug, Default, Clone)]
struct Markers {
    held: String,
    /// Whether any text came through.
    streamed: bool,
}

/// A marker with more digits than this is not a citation.
const MARKER_DIGITS: usize = 4;

impl Markers {
    fn push(&mut self, text: &str) -> String {
        self.streamed |= !text.is_empty();
        let mut out = String::new();
        for c in text.chars() {
            if self.held.is_empty() {
                if c == '[' {
                    self.held.push(c);
                } else {
                    out.push(c);
                }
            } else if c.is_ascii_digit() && self.held.len() <= MARKER_DIGITS {
                self.held.push(c);
            } else if c == ']' && self.held.len() > 1 {
                out.push_str("[^");
                out.push_str(&self.held[1..]);
                out.push(']');
                self.held.clear();
            } else {
                out.push_str(&std::mem::take(&mut self.held));
                if c == '[' {
                    self.held.push(c);
                } else {
                    out.push(c);
                }
            }
        }
        out
    }

    fn finish(&mut self) -> String {
        std::mem::take(&mut self.held)
    }
}

/// The answer's sources as footnote definitions, the ones Folio matched to
/// unmarked sentences named in a line of their own (a definition nobody
/// refers to is not shown), and the run's link.
fn sources(run: &RunRecord) -> String {
    let citations: Vec<Citation> =
        serde_json::from_value(run.citations.clone()).unwrap_or_default();
    let mut out = String::from("\n");
    let matched: Vec<String> = citations
        .iter()
        .filter(|c| c.by == CitedBy::Attribution)
        .map(|c| format!("[^{}]", c.number))
        .collect();
    if !matched.is_empty() {
        out.push_str(&format!(
            "\nSources matched by Folio: {}\n",
            matched.join(" ")
        ));
    }
    for c in &citations {
        let place = if c.heading_path.is_empty() {
            format!("`{}`", shown(&c.path))
        } else {
            format!("`{}` › {}", shown(&c.path), c.heading_path)
        };
        let page = c.page.map(|p| format!(", page {p}")).unwrap_or_default();
        out.push_str(&format!("\n[^{}]: {place}{page}", c.number));
    }
    out.push_str(&format!("\n\n{RUN_LINK}{}\n", run.id));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_become_footnotes_even_split_across_pieces() {
        let mut m = Markers::default();
        let pieces = ["Use `mut` [", "1", "][2] and a[i] or [12345] [", "3"];
        let out: String = pieces.iter().map(|p| m.push(p)).collect::<String>() + &m.finish();
        assert_eq!(out, "Use `mut` [^1][^2] and a[i] or [12345] [3");
        assert_eq!(footnoted("see [4]."), "see [^4].");
    }

    #[test]
    fn a_follow_up_finds_the_run_its_answer_named() {
        let answer = format!("It is [^1].\n\n[^1]: `a.md`\n\n{RUN_LINK}42\n");
        assert_eq!(run_named_in(&answer), Some(42));
        assert_eq!(run_named_in("no link here"), None);
    }
}
