//! The one error shape the UI receives: a stable `code` it can branch on, a
//! `message` written for the person using the app, and optional `details`
//! (the underlying causes) for a disclosure. Never a bare string.

use folio_engine::eval::EvalError;
use folio_engine::llm::LlmError;
use folio_engine::methods::crp_rag::calibrate::CalibrateError;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct IpcError {
    pub code: &'static str,
    pub message: String,
    pub details: Option<String>,
}

impl IpcError {
    pub fn new(code: &'static str, message: impl Into<String>) -> IpcError {
        IpcError {
            code,
            message: message.into(),
            details: None,
        }
    }

    /// Settings the user entered that cannot work; the message names the field.
    pub fn invalid_settings(message: impl Into<String>) -> IpcError {
        IpcError::new("invalid_settings", message)
    }
}

impl std::fmt::Display for IpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn llm_code(e: &LlmError) -> &'static str {
    match e {
        LlmError::ServerDown { .. } => "llm_server_down",
        LlmError::ModelNotFound { .. } => "llm_model_not_found",
        LlmError::Load { .. } => "llm_load_failed",
        LlmError::Cancelled => "cancelled",
        _ => "llm_failed",
    }
}

fn code(e: &folio_engine::Error) -> &'static str {
    use folio_engine::Error as E;
    match e {
        E::NotFound(_) => "not_found",
        E::NotIndexed(_) => "not_indexed",
        E::NotWatched(_) => "not_watched",
        E::NotPdf(_) => "not_pdf",
        E::TooLarge { .. } => "too_large",
        E::RunNotFound(_) => "run_not_found",
        E::RunInProgress(_) => "run_in_progress",
        E::JobNotFound(_) => "job_not_found",
        E::Llm(l) | E::Calibrate(CalibrateError::Llm(l)) => llm_code(l),
        E::Calibrate(CalibrateError::NoLogprobs { .. }) => "no_logprobs",
        E::Choice(_) => "invalid_request",
        E::Method(folio_engine::methods::MethodError::Llm { source, .. }) => llm_code(source),
        E::Method(m) if m.is_user_error() => "invalid_request",
        E::BadOption(_) => "invalid_option",
        E::Method(folio_engine::methods::MethodError::EmptyLibrary) => "empty_library",
        E::Export(_) => "export_failed",
        E::Embed(_) => "embedding_model",
        E::Prompt(_) => "prompt_template",
        E::DataDir { .. } => "data_dir",
        E::Store(folio_engine::store::StoreError::DiskFull) => "disk_full",
        _ => "internal",
    }
}

/// The chain of causes below the top-level message, one per line.
fn causes(e: &dyn std::error::Error) -> Option<String> {
    let mut lines = Vec::new();
    let mut source = e.source();
    while let Some(s) = source {
        lines.push(s.to_string());
        source = s.source();
    }
    (!lines.is_empty()).then(|| lines.join("\n"))
}

impl From<folio_engine::Error> for IpcError {
    fn from(e: folio_engine::Error) -> IpcError {
        IpcError {
            code: code(&e),
            message: e.to_string(),
            details: causes(&e),
        }
    }
}

fn eval_code(e: &EvalError) -> &'static str {
    match e {
        EvalError::Engine(e) => code(e),
        EvalError::Mismatch { .. } | EvalError::NoManifest(_) => "eval_mismatch",
        EvalError::NotAnEvaluation(_) | EvalError::NoSummary(_) => "not_an_evaluation",
        EvalError::Interrupted(_) => "cancelled",
        EvalError::Read { .. } | EvalError::Write { .. } => "io",
        _ => "invalid_request",
    }
}

impl From<EvalError> for IpcError {
    fn from(e: EvalError) -> IpcError {
        IpcError {
            code: eval_code(&e),
            message: e.to_string(),
            details: causes(&e),
        }
    }
}

impl From<folio_engine::config::ConfigError> for IpcError {
    fn from(e: folio_engine::config::ConfigError) -> IpcError {
        IpcError {
            code: "config",
            message: e.to_string(),
            details: causes(&e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_errors_keep_their_wording_and_get_stable_codes() {
        let e = IpcError::from(folio_engine::Error::RunNotFound(7));
        assert_eq!(e.code, "run_not_found");
        assert!(e.message.contains("no run 7"), "{}", e.message);
        let down = IpcError::from(folio_engine::Error::Llm(LlmError::Cancelled));
        assert_eq!(down.code, "cancelled");
        let calibration = IpcError::from(folio_engine::Error::Calibrate(CalibrateError::Llm(
            LlmError::Cancelled,
        )));
        assert_eq!(calibration.code, "cancelled");
        let option = IpcError::from(folio_engine::Error::BadOption(
            "n must be between 1 and 20".into(),
        ));
        assert_eq!(option.code, "invalid_option");
    }

    #[test]
    fn evaluation_errors_get_codes_the_view_can_act_on() {
        let gone = IpcError::from(EvalError::NotAnEvaluation("/tmp/x".into()));
        assert_eq!(gone.code, "not_an_evaluation");
        assert!(gone.message.contains("/tmp/x"), "{}", gone.message);
        let stopped = IpcError::from(EvalError::Interrupted("answering"));
        assert_eq!(stopped.code, "cancelled");
        let engine = IpcError::from(EvalError::Engine(folio_engine::Error::RunNotFound(3)));
        assert_eq!(engine.code, "run_not_found");
    }
}
