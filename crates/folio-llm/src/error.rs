//! Why a model call failed, worded so the user knows what to do next.

use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("cannot load the model {path}: {reason}")]
    Load { path: PathBuf, reason: String },
    #[error("the LLM server at {url} is not reachable ({reason}); start it or change `base_url` in folio.toml")]
    ServerDown { url: String, reason: String },
    #[error("the LLM server at {url} does not serve the model `{model}`; it serves: {}", available.join(", "))]
    ModelNotFound {
        url: String,
        model: String,
        available: Vec<String>,
    },
    #[error("the LLM server answered {status}: {message}")]
    Http { status: u16, message: String },
    #[error("the server's reply was not understood: {0}")]
    Protocol(String),
    #[error("the model took longer than {0:?}; raise `timeout_secs` in folio.toml or ask a shorter question")]
    Timeout(Duration),
    #[error("cancelled")]
    Cancelled,
    #[error("the prompt is {tokens} tokens but the model's context holds {context_size}; lower k or raise `context_size`")]
    PromptTooLong { tokens: usize, context_size: u32 },
    #[error("llama.cpp failed: {0}")]
    Backend(String),
}

pub type Result<T> = std::result::Result<T, LlmError>;

impl LlmError {
    /// The same error with `edit` applied to every piece of text that came
    /// from outside: a server's reply, a URL, a cause.
    pub(crate) fn map_text(self, edit: impl Fn(String) -> String) -> LlmError {
        match self {
            LlmError::Load { path, reason } => LlmError::Load {
                path,
                reason: edit(reason),
            },
            LlmError::ServerDown { url, reason } => LlmError::ServerDown {
                url: edit(url),
                reason: edit(reason),
            },
            LlmError::ModelNotFound {
                url,
                model,
                available,
            } => LlmError::ModelNotFound {
                url: edit(url),
                model: edit(model),
                available: available.into_iter().map(&edit).collect(),
            },
            LlmError::Http { status, message } => LlmError::Http {
                status,
                message: edit(message),
            },
            LlmError::Protocol(message) => LlmError::Protocol(edit(message)),
            LlmError::Backend(message) => LlmError::Backend(edit(message)),
            other @ (LlmError::Timeout(_)
            | LlmError::Cancelled
            | LlmError::PromptTooLong { .. }) => other,
        }
    }
}
