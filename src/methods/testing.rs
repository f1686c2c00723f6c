//! A scripted model and small libraries for testing methods' control flow.
//! The model is scripted; retrieval, prompts and the store are the real ones.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

use super::runner::AskRequest;
use super::{EventSink, RunEvent};
use crate::llm::{
    Backend, Capabilities, ChatMessage, ChatRequest, Completion, FinishReason, Llm, LlmError,
    ModelInfo, TokenLogprob, Usage,
};
use crate::store::RunRecord;
use crate::{Config, Library};

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
    async fn chat(&self, request: ChatRequest<'_>) -> crate::llm::Result<Completion> {
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

/// Three short notes a two-hop question needs two of.
pub const ADA_NOTES: &[(&str, &str)] = &[
    ("ada.md", "# Ada Lovelace\n\nAda Lovelace was born in London in 1815. She wrote the first published algorithm for the Analytical Engine.\n"),
    ("babbage.md", "# Charles Babbage\n\nCharles Babbage designed the Analytical Engine, a mechanical general-purpose computer, in 1837.\n"),
    ("london.md", "# London\n\nLondon is the capital of England and lies on the River Thames.\n"),
];
pub const ADA_QUESTION: &str =
    "Where was the woman who wrote the first algorithm for the Analytical Engine born?";

/// An empty library in `dir` with the built-in prompts.
pub async fn library(dir: &Path) -> Library {
    let mut config = Config::new(Some(dir.to_path_buf()), None);
    config.prompts_dir = dir.join("no-overrides");
    Library::open(config).await.unwrap()
}

/// A library in `dir` with `notes` (file name, text) written and indexed.
pub async fn library_with(dir: &Path, notes: &[(&str, &str)]) -> Library {
    let library = library(dir).await;
    let docs = dir.join("notes");
    std::fs::create_dir_all(&docs).unwrap();
    for (name, text) in notes {
        std::fs::write(docs.join(name), text).unwrap();
    }
    library.add(&[docs]).await.unwrap();
    library.run_pending().await.unwrap();
    library
}

/// Asks with `llm` a request that must be refused, and returns why.
pub async fn refused(library: &Library, llm: &dyn Llm, request: &AskRequest) -> crate::Error {
    library
        .ask_with(
            llm,
            request,
            &EventSink::default(),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err()
}

/// Asks with `llm` and returns the stored run with every event it emitted.
pub async fn ask_with(
    library: &Library,
    llm: &dyn Llm,
    request: &AskRequest,
) -> (RunRecord, Vec<RunEvent>) {
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    let run = library
        .ask_with(
            llm,
            request,
            &EventSink::new(sender),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    let mut events = Vec::new();
    while let Ok(e) = receiver.try_recv() {
        events.push(e);
    }
    (run, events)
}
