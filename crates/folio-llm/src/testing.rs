//! A scripted model, for testing control flow above the model without
//! one: each call takes the script's next reply and keeps what it was sent.
//! Compiled for this crate's tests and, with the `testing` feature, for the
//! tests of the crates above.

use std::collections::VecDeque;
use std::sync::Mutex;

use crate::{
    Backend, Capabilities, ChatMessage, ChatRequest, Completion, FinishReason, Llm, LlmError,
    ModelInfo, TokenLogprob, Usage,
};

/// Replies from a script, one per call in call order, and keeps every
/// conversation it was sent.
pub struct ScriptedLlm {
    replies: Mutex<VecDeque<Result<Completion, LlmError>>>,
    sent: Mutex<Vec<Vec<ChatMessage>>>,
    logprobs: bool,
}

impl ScriptedLlm {
    pub fn new(replies: Vec<Result<Completion, LlmError>>) -> ScriptedLlm {
        ScriptedLlm {
            replies: Mutex::new(replies.into()),
            sent: Mutex::new(Vec::new()),
            logprobs: false,
        }
    }

    /// Claims to report log-probabilities, as the embedded backend does;
    /// the script's replies carry them ([`says_surely`]).
    pub fn with_logprobs(mut self) -> ScriptedLlm {
        self.logprobs = true;
        self
    }

    /// The user message of every call so far, in order.
    pub fn prompts(&self) -> Vec<String> {
        self.sent()
            .into_iter()
            .map(|messages| {
                messages
                    .last()
                    .map(|m| m.content.clone())
                    .unwrap_or_default()
            })
            .collect()
    }

    /// Every message of every call so far, in order.
    pub fn sent(&self) -> Vec<Vec<ChatMessage>> {
        self.sent.lock().unwrap().clone()
    }

    pub fn unused(&self) -> usize {
        self.replies.lock().unwrap().len()
    }
}

pub fn reply(text: &str, finish: FinishReason) -> Result<Completion, LlmError> {
    Ok(Completion {
        text: text.into(),
        finish,
        usage: Usage {
            prompt_tokens: 10,
            completion_tokens: 3,
            cached_tokens: 0,
        },
        logprobs: None,
        shaping: None,
    })
}

pub fn says(text: &str) -> Result<Completion, LlmError> {
    reply(text, FinishReason::Stop)
}

/// A finished reply whose tokens had these log-probabilities.
pub fn says_surely(text: &str, logprobs: &[f32]) -> Result<Completion, LlmError> {
    let mut completion = says(text)?;
    completion.logprobs = Some(
        logprobs
            .iter()
            .map(|&logprob| TokenLogprob {
                token: "t".into(),
                logprob,
            })
            .collect(),
    );
    Ok(completion)
}

#[async_trait::async_trait]
impl Llm for ScriptedLlm {
    fn info(&self) -> ModelInfo {
        ModelInfo {
            backend: Backend::Embedded,
            model: "scripted".into(),
            context_size: 1024,
        }
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            streaming: true,
            logprobs: self.logprobs,
        }
    }
    async fn chat(&self, request: ChatRequest<'_>) -> crate::Result<Completion> {
        let prompt = request
            .messages
            .last()
            .map(|m| m.content.clone())
            .unwrap_or_default();
        self.sent.lock().unwrap().push(request.messages.to_vec());
        let next = self
            .replies
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| panic!("the script has no reply for this prompt:\n{prompt}"));
        if let (Ok(c), Some(sink)) = (&next, request.on_token) {
            sink(&c.text);
        }
        next
    }
}
