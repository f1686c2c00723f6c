//! Why a question could not be answered. Errors before the run starts (an
//! unknown method, a bad option) are the user's to fix; errors during it are
//! recorded in the run, worded for a person reading its history.

use folio_llm::prompts::PromptError;
use folio_llm::LlmError;
use folio_retrieve::RetrieveError;
use folio_store::{ScopeError, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum MethodError {
    #[error("there is no method `{id}`; the methods are: {known}")]
    UnknownMethod { id: String, known: String },
    #[error("there is no thread {0}; `folio threads` lists them")]
    UnknownThread(i64),
    #[error("the question is empty")]
    EmptyQuestion,
    #[error("`{method}` has no option `{name}`; its options are: {known}")]
    UnknownOption {
        method: &'static str,
        name: String,
        known: String,
    },
    #[error("option `{name}`: {message}")]
    InvalidOption { name: String, message: String },
    #[error("the model call for `{step}` failed: {source}")]
    Llm {
        step: &'static str,
        source: LlmError,
    },
    #[error(transparent)]
    Prompt(#[from] PromptError),
    #[error("retrieval failed: {0}")]
    Retrieval(#[source] RetrieveError),
    #[error("the model returned no text for `{step}`; try again, or use a stronger model")]
    EmptyOutput { step: &'static str },
    #[error("the model's output for `{step}` was cut off at {max_tokens} tokens without finishing; raise max_tokens or use a stronger model")]
    CutOff {
        step: &'static str,
        max_tokens: u32,
        partial: String,
    },
    #[error("the library has nothing indexed yet; add documents with `folio add`")]
    EmptyLibrary,
    #[error(transparent)]
    Scope(#[from] ScopeError),
    #[error("{what} would take an estimated {calls} model calls, more than `{option}` allows ({budget}); raise it, or ask a method that retrieves passages")]
    OverBudget {
        what: String,
        calls: usize,
        option: &'static str,
        budget: usize,
    },
    #[error("{}", needs_one_document(*.documents))]
    NeedsOneDocument {
        /// Documents in the question's scope; `None` for the whole library.
        documents: Option<usize>,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl MethodError {
    pub fn is_cancelled(&self) -> bool {
        matches!(
            self,
            MethodError::Llm {
                source: LlmError::Cancelled,
                ..
            }
        )
    }

    /// Mistakes in the request itself, caught before a run is recorded.
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            MethodError::UnknownMethod { .. }
                | MethodError::UnknownThread(_)
                | MethodError::EmptyQuestion
                | MethodError::UnknownOption { .. }
                | MethodError::InvalidOption { .. }
                | MethodError::NeedsOneDocument { .. }
        ) || matches!(self, MethodError::Scope(e) if e.is_user_error())
    }

    /// Text the model produced before failing, kept in the run so a person
    /// can see what went wrong.
    pub fn partial_answer(&self) -> Option<&str> {
        match self {
            MethodError::CutOff { partial, .. } => Some(partial),
            _ => None,
        }
    }
}

fn needs_one_document(documents: Option<usize>) -> String {
    let found = match documents {
        None => "the whole library".to_string(),
        Some(0) => "a document no longer in the library".to_string(),
        Some(n) => format!("{n} documents"),
    };
    format!(
        "whole-document answers about one document, and the question's scope holds {found}: \
         pick it with `folio ask --document PATH` or Library's \"Ask about this document\""
    )
}
