//! The language-model layer: one [`Llm`] trait that every method talks to,
//! with an embedded llama.cpp backend and an OpenAI-compatible HTTP backend
//! behind it. Calls are chat completions that can stream tokens, be
//! cancelled, time out, and report usage and per-token log-probabilities.

pub mod calibration;
pub mod discovery;
mod embedded;
mod error;
mod openai;
pub mod pace;
mod prefix_cache;
pub mod prompts;
pub mod response_format;
pub mod rubric;
pub mod settings;
pub mod sse;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod verdict;

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

pub use embedded::{quiesce, EmbeddedLlm};
pub use error::{LlmError, Result};
pub use openai::OpenAiLlm;
pub use settings::{ApiKey, Backend, LlmSettings};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::System,
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::User,
            content: content.into(),
        }
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// The seed of sampled replies unless a run names another: a question asked
/// again with the same settings samples the same replies.
pub const DEFAULT_SEED: u32 = 42;

/// How one completion is generated. `timeout` bounds the model's work on it
/// (the whole HTTP request for a server; from when the embedded model takes
/// the request up, not while it waits its turn), so a stuck model cannot
/// stall a method forever.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerateOptions {
    pub max_tokens: u32,
    pub temperature: f32,
    /// How the draw is truncated when the temperature is above 0; `None`
    /// leaves the backend's own truncation (llama.cpp's, or the server's).
    pub sampling: Option<Sampling>,
    pub stop: Vec<String>,
    /// Ask for the log-probability of every generated token. Backends that
    /// cannot give them (see [`Capabilities`]) return `None` instead of failing.
    pub logprobs: bool,
    pub timeout: Duration,
    pub seed: u32,
    /// A llama.cpp (GBNF) grammar the reply must follow, for replies a
    /// program reads. The embedded backend enforces it; the HTTP backend
    /// sends `schema` instead, so callers still check what comes back.
    pub grammar: Option<String>,
    /// The same shape as a JSON schema, for a server that takes one.
    pub schema: Option<ReplySchema>,
    /// Keep this prompt in the embedded model's cache and start it from
    /// the longest prefix it shares with a few earlier such prompts: the
    /// graph build's calls share their instructions, and a method's do
    /// where the settings' `reuse_prefix` allows. A request without it
    /// clears the cache and is computed from scratch, exactly as in a
    /// fresh context, so its answer never depends on earlier requests.
    pub cache_prefix: bool,
    /// Nobody is waiting on this reply (the graph build): the embedded
    /// model answers every other queued request first, so background work
    /// never delays a question.
    pub background: bool,
}

impl Default for GenerateOptions {
    fn default() -> Self {
        GenerateOptions {
            max_tokens: 512,
            temperature: 0.2,
            sampling: None,
            stop: Vec::new(),
            logprobs: false,
            timeout: Duration::from_secs(300),
            seed: DEFAULT_SEED,
            grammar: None,
            schema: None,
            cache_prefix: false,
            background: false,
        }
    }
}

/// A JSON schema for a reply a program reads, for a server that holds
/// replies to one through `response_format` (llama.cpp's server,
/// llama-cpp-python, vLLM, Ollama), and the way from a reply that follows
/// it to the text the method's parser reads: what the method's grammar
/// gives on the embedded model. Written beside that grammar and parser.
#[derive(Debug, Clone)]
pub struct ReplySchema {
    pub schema: serde_json::Value,
    /// `None` when the reply is not what the schema describes.
    pub to_text: fn(&serde_json::Value) -> Option<String>,
}

/// Two shapes are the same when their schemas are: each conversion is
/// written for its schema (and function addresses are no identity).
impl PartialEq for ReplySchema {
    fn eq(&self, other: &ReplySchema) -> bool {
        self.schema == other.schema
    }
}

/// How a reply was held to its shape, for the run's record of its calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "kebab-case")]
pub enum Shaping {
    /// The embedded model's grammar.
    Grammar,
    /// The server's `response_format` JSON schema.
    Schema,
    /// The server takes no JSON schema, or its reply did not follow it: the
    /// reply was read leniently.
    Unconstrained,
}

impl Shaping {
    pub fn as_str(self) -> &'static str {
        match self {
            Shaping::Grammar => "grammar",
            Shaping::Schema => "schema",
            Shaping::Unconstrained => "unconstrained",
        }
    }

    pub fn parse(text: &str) -> Option<Shaping> {
        [Shaping::Grammar, Shaping::Schema, Shaping::Unconstrained]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// Nucleus and top-k truncation of a sampled draw, for a method whose
/// paper samples with settings of its own (PAGER: top-p 0.8, top-k 20).
#[derive(
    Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
pub struct Sampling {
    /// Keep the most likely tokens whose probabilities add up to this.
    pub top_p: f32,
    /// Keep at most this many of the most likely tokens. Sent only to the
    /// embedded model: OpenAI's API refuses the field.
    pub top_k: u32,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// Prompt tokens the backend did not compute again because its cache
    /// held them from an earlier request (part of `prompt_tokens`).
    #[serde(default)]
    pub cached_tokens: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenLogprob {
    pub token: String,
    pub logprob: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FinishReason {
    /// The model ended its turn or hit a stop sequence.
    Stop,
    /// `max_tokens` ran out first: the text is cut off.
    Length,
}

impl FinishReason {
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    pub text: String,
    pub finish: FinishReason,
    pub usage: Usage,
    /// One entry per generated token, when asked for and available.
    pub logprobs: Option<Vec<TokenLogprob>>,
    /// How the reply was held to a shape; `None` when none was asked for.
    pub shaping: Option<Shaping>,
}

/// What a backend can do; methods that need more (CRP-RAG's perplexity
/// check needs log-probabilities) read this instead of failing mid-answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    pub streaming: bool,
    pub logprobs: bool,
}

/// Which model answers, for runs and `folio models`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct ModelInfo {
    pub backend: Backend,
    pub model: String,
    pub context_size: u32,
}

/// Receives generated text piece by piece, in order, as it is produced.
pub type TokenSink<'a> = &'a (dyn Fn(&str) + Send + Sync);

/// One request: the conversation, how to generate, where to stream to, and
/// the token that cancels it.
pub struct ChatRequest<'a> {
    pub messages: &'a [ChatMessage],
    pub options: &'a GenerateOptions,
    pub on_token: Option<TokenSink<'a>>,
    pub cancel: &'a CancellationToken,
}

#[async_trait::async_trait]
pub trait Llm: Send + Sync {
    fn info(&self) -> ModelInfo;
    fn capabilities(&self) -> Capabilities;
    async fn chat(&self, request: ChatRequest<'_>) -> Result<Completion>;

    /// What the backend supports, found by asking it where it cannot be
    /// known beforehand (a server). The embedded model supports all of it.
    async fn support(&self) -> Result<Support> {
        Ok(Support {
            usage: true,
            logprobs: self.capabilities().logprobs,
            shapes: Some("grammar".into()),
        })
    }
}

/// What `folio models` reports a backend supports, and what the methods
/// fall back from where it does not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Support {
    /// Streamed replies come with token counts.
    pub usage: bool,
    /// Replies come with each token's log-probability.
    pub logprobs: bool,
    /// How replies a program reads are held to their shape: `grammar`, a
    /// `response_format` form (`json_schema`, `json_object`), or `None`:
    /// not at all, so they are read leniently.
    pub shapes: Option<String>,
}

/// A whole reply with nothing streamed, for replies a program reads.
pub async fn reply(
    llm: &dyn Llm,
    messages: &[ChatMessage],
    options: &GenerateOptions,
    cancel: &CancellationToken,
) -> Result<Completion> {
    llm.chat(ChatRequest {
        messages,
        options,
        on_token: None,
        cancel,
    })
    .await
}

/// Opens the configured backend. The embedded model is loaded once per
/// process and shared; asking again for the same file returns the same model.
pub async fn connect(settings: &LlmSettings) -> Result<Arc<dyn Llm>> {
    match settings.backend {
        Backend::Embedded => Ok(EmbeddedLlm::load(settings).await?),
        Backend::Openai => Ok(Arc::new(OpenAiLlm::connect(settings).await?)),
    }
}
