//! What every client of an OpenAI-compatible server shares, whichever
//! endpoint it calls (chat completions in `llm/`, embeddings in `embed/`):
//! the API key that must never be shown, the HTTP client's connect timeout,
//! retries with backoff for overload and server faults, and error messages
//! taken from the bodies servers actually send.

use std::fmt;
use std::time::Duration;

use reqwest::header::RETRY_AFTER;
use reqwest::{Response, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Retries after the first attempt; with the backoff below a dead server is
/// reported within about four seconds.
const RETRIES: u32 = 3;
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// A server asking for a longer pause than this is waited on only this long,
/// so one `Retry-After: 3600` cannot park a call for an hour.
const RETRY_AFTER_CAP: Duration = Duration::from_secs(10);
/// Local servers accept at once; a host that swallows packets should not eat
/// the whole call's budget on every retry.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How much of a reply an error message quotes.
const EXCERPT_CHARS: usize = 160;

/// The API key of an OpenAI-compatible server. Settings are printed,
/// logged, reported and serialised in many places; the key must reach none
/// of them, so it is a type of its own: its `Debug` shows [`ApiKey::SHOWN`]
/// and the key itself is read only through [`ApiKey::expose`], by the
/// request that carries it and by the app's key store. It serialises as
/// itself only because `folio.toml` may hold it; everything else
/// serialises its settings' `redacted()` form.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ApiKey(String);

impl ApiKey {
    /// What stands for a key wherever settings are shown.
    pub const SHOWN: &'static str = "(set)";

    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Self::SHOWN)
    }
}

/// An HTTP client for one server, connecting within [`CONNECT_TIMEOUT`].
pub fn client() -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .build()
}

/// One failed attempt, and whether trying again could help.
pub struct Failure<E> {
    pub error: E,
    pub retryable: bool,
    /// The server's own `Retry-After`, which beats our backoff guess.
    pub retry_after: Option<Duration>,
}

impl<E> Failure<E> {
    pub fn fatal(error: E) -> Failure<E> {
        Failure {
            error,
            retryable: false,
            retry_after: None,
        }
    }

    /// An answer other than success: its status and the server's own
    /// message, made into the caller's error by `error(status, message)`.
    pub async fn from_response(
        response: Response,
        error: impl FnOnce(u16, String) -> E,
    ) -> Failure<E> {
        let status = response.status();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(parse_retry_after);
        let body = response.text().await.unwrap_or_default();
        Failure {
            error: error(status.as_u16(), server_message(status, &body)),
            retryable: retryable_status(status),
            retry_after,
        }
    }
}

/// `attempt` until it succeeds, fails for good, or the retries are spent,
/// pausing between tries as [`backoff`] says.
pub async fn with_retries<T, E, F, Fut>(mut attempt: F) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, Failure<E>>>,
{
    let mut retry = 0;
    loop {
        let failure = match attempt().await {
            Ok(value) => return Ok(value),
            Err(failure) => failure,
        };
        match failure
            .retryable
            .then(|| backoff(retry, failure.retry_after))
            .flatten()
        {
            Some(pause) => {
                tokio::time::sleep(pause).await;
                retry += 1;
            }
            None => return Err(failure.error),
        }
    }
}

/// The pause before retry number `retry` (counting from 0), or `None` once
/// the retries are spent.
fn backoff(retry: u32, retry_after: Option<Duration>) -> Option<Duration> {
    if retry >= RETRIES {
        return None;
    }
    Some(match retry_after {
        Some(asked) => asked.min(RETRY_AFTER_CAP),
        None => FIRST_BACKOFF * 2u32.pow(retry),
    })
}

/// Only the delay-seconds form: servers that rate-limit model calls send
/// seconds, and an HTTP date would need a clock shared with the server.
fn parse_retry_after(value: &str) -> Option<Duration> {
    let seconds: f64 = value.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

/// Overload and server faults can pass; client errors (bad request, wrong
/// key, unknown model) come back the same however often they are sent.
fn retryable_status(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

/// The human-readable part of an error body, in the shapes servers use:
/// OpenAI and llama.cpp (`error.message`), Ollama (`error` as a string), vLLM
/// (`message`), FastAPI (`detail`); otherwise the start of the body itself.
pub fn server_message(status: StatusCode, body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|value| {
        ["/error/message", "/error", "/message", "/detail"]
            .iter()
            .find_map(|pointer| value.pointer(pointer).and_then(Value::as_str))
    });
    match message {
        Some(message) => message.to_string(),
        None if body.trim().is_empty() => status
            .canonical_reason()
            .unwrap_or("no message")
            .to_string(),
        None => excerpt(body.trim()),
    }
}

/// The innermost cause of a transport error, which names what actually went
/// wrong ("Connection refused") where the outer layers only repeat the URL.
pub fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

/// The start of `text`, for quoting a reply in an error message.
pub fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_then_gives_up() {
        let pauses: Vec<_> = (0..5).map(|retry| backoff(retry, None)).collect();
        assert_eq!(
            pauses,
            vec![
                Some(Duration::from_millis(500)),
                Some(Duration::from_secs(1)),
                Some(Duration::from_secs(2)),
                None,
                None
            ]
        );
    }

    #[test]
    fn retry_after_replaces_the_backoff_but_is_capped() {
        assert_eq!(
            backoff(0, Some(Duration::from_secs(3))),
            Some(Duration::from_secs(3))
        );
        assert_eq!(backoff(2, Some(Duration::ZERO)), Some(Duration::ZERO));
        assert_eq!(
            backoff(1, Some(Duration::from_secs(3600))),
            Some(RETRY_AFTER_CAP)
        );
        assert_eq!(backoff(RETRIES, Some(Duration::from_secs(1))), None);
    }

    #[test]
    fn retry_after_is_read_as_seconds_only() {
        assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2026 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("inf"), None);
    }

    #[test]
    fn only_overload_and_server_faults_are_retried() {
        for status in [429, 500, 502, 503, 504] {
            assert!(
                retryable_status(StatusCode::from_u16(status).unwrap()),
                "{status}"
            );
        }
        for status in [400, 401, 403, 404, 422] {
            assert!(
                !retryable_status(StatusCode::from_u16(status).unwrap()),
                "{status}"
            );
        }
    }

    #[test]
    fn error_messages_are_taken_from_each_servers_body_shape() {
        let status = StatusCode::INTERNAL_SERVER_ERROR;
        // llama-cpp-python 0.3.36, a prompt longer than the context (non-streaming).
        let llama_cpp_python = r#"{"error":{"message":"This model's maximum context length is 2048 tokens.",
            "type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert_eq!(
            server_message(status, llama_cpp_python),
            "This model's maximum context length is 2048 tokens."
        );
        let ollama = r#"{"error":"model \"llama9\" not found, try pulling it first"}"#;
        assert_eq!(
            server_message(status, ollama),
            "model \"llama9\" not found, try pulling it first"
        );
        let vllm = r#"{"object":"error","message":"The model `x` does not exist.","type":"NotFoundError","code":404}"#;
        assert_eq!(
            server_message(status, vllm),
            "The model `x` does not exist."
        );
        assert_eq!(
            server_message(StatusCode::NOT_FOUND, r#"{"detail":"Not Found"}"#),
            "Not Found"
        );
        assert_eq!(
            server_message(StatusCode::BAD_GATEWAY, "<html>upstream down</html>"),
            "<html>upstream down</html>"
        );
        assert_eq!(
            server_message(StatusCode::SERVICE_UNAVAILABLE, " \n"),
            "Service Unavailable"
        );
        assert_eq!(
            server_message(status, &"x".repeat(500)).chars().count(),
            EXCERPT_CHARS + 1
        );
    }
}
