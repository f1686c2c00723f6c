//! The OpenAI-compatible HTTP backend: chat completions from any server that
//! speaks `/v1/chat/completions` (llama.cpp server, llama-cpp-python, Ollama,
//! vLLM, LM Studio, OpenAI). Every call streams, so a cancelled or timed-out
//! call closes the connection and the server stops generating instead of
//! finishing an answer nobody reads. Failures before the first token (429,
//! 5xx, connection errors) are retried with exponential backoff; after the
//! first token nothing is retried, because the caller has already seen text.
//!
//! Token counts come from the final usage chunk that
//! `stream_options.include_usage` asks for. A server that ignores the option
//! (llama-cpp-python 0.3 does) reports no counts while streaming; the
//! completion then carries zero counts, which means "not reported", never an
//! estimate.
//!
//! A reply a program reads is held to its shape with `response_format` and
//! the method's JSON schema, in whichever form the server was found to take
//! ([`super::response_format`]); the reply comes back as the text the
//! method's grammar describes, and each completion says whether it was held.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::{RequestBuilder, Response};
use serde::Deserialize;
use serde_json::{json, Value};

use super::response_format::{follows_probe, probe, shaped, SchemaForm};
use super::sse::SseDecoder;
use super::*;
use folio_core::server_http::{excerpt, root_cause, with_retries};

/// One failed attempt at a request, and whether trying again could help.
type Failure = folio_core::server_http::Failure<LlmError>;

/// Listing models is cheap on every server; a server that cannot do it this
/// quickly cannot serve completions either.
const MODELS_TIMEOUT: Duration = Duration::from_secs(30);
/// A probe is a few tokens; a server slower than this has bigger problems.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

pub struct OpenAiLlm {
    client: reqwest::Client,
    /// The API root without a trailing slash, so endpoint paths can be appended.
    base_url: String,
    api_key: Option<ApiKey>,
    model: String,
    context_size: u32,
    /// Starts optimistic; turned off for good once the server answers a
    /// logprobs request without them, so methods that need them can fall back.
    logprobs: AtomicBool,
    /// The `response_format` form the server honours (`None`: neither),
    /// found at the first request that carries a schema.
    schema_form: tokio::sync::OnceCell<Option<SchemaForm>>,
    /// One permit per request the server may be sent at once
    /// (`LlmSettings::parallel`).
    in_flight: tokio::sync::Semaphore,
}

impl OpenAiLlm {
    /// Checks at once that the server answers and serves the configured
    /// model, so a wrong `base_url` or model name is reported when Folio
    /// starts rather than in the middle of the first answer.
    pub async fn connect(settings: &LlmSettings) -> Result<OpenAiLlm> {
        let key = settings.api_key.clone();
        Self::connect_checked(settings)
            .await
            .map_err(|e| redacted(e, key.as_ref()))
    }

    /// The model ids the server at `settings.base_url` serves (`GET
    /// /models`), for picking one rather than typing it; the configured
    /// model need not be among them.
    pub async fn served(settings: &LlmSettings) -> Result<Vec<String>> {
        let key = settings.api_key.clone();
        let listed = async { Self::unchecked(settings)?.served_models().await };
        listed.await.map_err(|e| redacted(e, key.as_ref()))
    }

    async fn connect_checked(settings: &LlmSettings) -> Result<OpenAiLlm> {
        let llm = Self::unchecked(settings)?;
        let available = llm.served_models().await?;
        if !available.contains(&llm.model) {
            return Err(LlmError::ModelNotFound {
                url: llm.base_url.clone(),
                model: llm.model.clone(),
                available,
            });
        }
        Ok(llm)
    }

    /// A client for the server, not yet asked anything.
    fn unchecked(settings: &LlmSettings) -> Result<OpenAiLlm> {
        let base_url = settings.base_url.trim_end_matches('/').to_string();
        let client = folio_core::server_http::client().map_err(|e| LlmError::ServerDown {
            url: base_url.clone(),
            reason: format!("cannot set up HTTP: {}", root_cause(&e)),
        })?;
        Ok(OpenAiLlm {
            client,
            base_url,
            api_key: settings
                .api_key
                .clone()
                .filter(|key| !key.expose().is_empty()),
            model: settings.model.clone(),
            context_size: settings.context_size,
            logprobs: AtomicBool::new(true),
            schema_form: tokio::sync::OnceCell::new(),
            in_flight: tokio::sync::Semaphore::new(settings.parallel.max(1) as usize),
        })
    }

    fn endpoint(&self, path: &str) -> String {
        format!("{}/{path}", self.base_url)
    }

    fn authorized(&self, builder: RequestBuilder) -> RequestBuilder {
        match &self.api_key {
            Some(key) => builder.bearer_auth(key.expose()),
            None => builder,
        }
    }

    /// The model ids of `GET /models`, compared verbatim with the configured
    /// name: servers differ in what they list (an alias, a file path, a
    /// `name:tag`), and only the exact id is accepted by all of them.
    async fn served_models(&self) -> Result<Vec<String>> {
        let list = with_retries(|| async {
            let response = self
                .authorized(self.client.get(self.endpoint("models")))
                .send()
                .await
                .map_err(|e| self.transport_failure(&e, true))?;
            if !response.status().is_success() {
                let mut failure = http_failure(response).await;
                if let LlmError::Http {
                    status: 404,
                    message,
                } = &mut failure.error
                {
                    message.push_str(
                        " (is `base_url` the API root, such as http://127.0.0.1:8080/v1?)",
                    );
                }
                return Err(failure);
            }
            response
                .text()
                .await
                .map_err(|e| self.transport_failure(&e, true))
        });
        let body = tokio::time::timeout(MODELS_TIMEOUT, list)
            .await
            .unwrap_or_else(|_| {
                Err(LlmError::ServerDown {
                    url: self.base_url.clone(),
                    reason: format!("no answer to GET /models within {MODELS_TIMEOUT:?}"),
                })
            })?;
        let list: ModelList = serde_json::from_str(&body)
            .map_err(|e| LlmError::Protocol(format!("GET /models: {e}: {}", excerpt(&body))))?;
        Ok(list.data.into_iter().map(|model| model.id).collect())
    }

    /// Which `response_format` form the server honours, asked once: the
    /// probe's reply follows its schema only where the form was honoured.
    async fn schema_form(&self, cancel: &CancellationToken) -> Result<Option<SchemaForm>> {
        let found = self
            .schema_form
            .get_or_try_init(|| async {
                let (messages, schema) = probe();
                let options = GenerateOptions {
                    // Room for the spaces some servers' grammars put around
                    // keys and values.
                    max_tokens: 48,
                    temperature: 0.0,
                    schema: Some(schema),
                    ..GenerateOptions::default()
                };
                for form in SchemaForm::ALL {
                    let body = request_body(&self.model, &messages, &options, Some(form));
                    let request = ChatRequest {
                        messages: &messages,
                        options: &options,
                        on_token: None,
                        cancel,
                    };
                    // One attempt: a server that does not take the form
                    // answers an error (llama-cpp-python a 500) at once,
                    // and retrying would only repeat it.
                    let attempt = self.stream_once(&body, &request);
                    let reply = tokio::time::timeout(PROBE_TIMEOUT, attempt)
                        .await
                        .unwrap_or_else(|_| Err(Failure::fatal(LlmError::Timeout(PROBE_TIMEOUT))));
                    match reply.map_err(|f| f.error) {
                        Ok(reply) => {
                            if follows_probe(&shaped(reply, options.schema.as_ref(), Some(form))) {
                                return Ok(Some(form));
                            }
                        }
                        Err(LlmError::Http { .. }) => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(None)
            })
            .await?;
        Ok(*found)
    }

    async fn chat_with_retries(&self, request: &ChatRequest<'_>) -> Result<Completion> {
        let form = match request.options.schema {
            Some(_) => self.schema_form(request.cancel).await?,
            None => None,
        };
        let body = request_body(&self.model, request.messages, request.options, form);
        let completion = with_retries(|| self.stream_once(&body, request))
            .await
            .map(|c| shaped(c, request.options.schema.as_ref(), form));
        match completion {
            Err(LlmError::Http {
                status: 404,
                message,
            }) if names_missing_model(&message) => Err(LlmError::ModelNotFound {
                url: self.base_url.clone(),
                model: self.model.clone(),
                available: self.served_models().await.unwrap_or_default(),
            }),
            other => other,
        }
    }

    async fn stream_once(
        &self,
        body: &Value,
        request: &ChatRequest<'_>,
    ) -> std::result::Result<Completion, Failure> {
        let mut response = self
            .authorized(self.client.post(self.endpoint("chat/completions")))
            .json(body)
            .send()
            .await
            .map_err(|e| self.transport_failure(&e, true))?;
        if !response.status().is_success() {
            return Err(http_failure(response).await);
        }
        let mut reply = StreamedReply::default();
        let mut decoder = SseDecoder::new();
        while !reply.done {
            let chunk = response
                .chunk()
                .await
                .map_err(|e| self.transport_failure(&e, !reply.streamed()))?;
            let Some(chunk) = chunk else { break };
            for data in decoder.push(&chunk) {
                // Checked per event as well as in `chat`, because one network
                // read can carry many tokens: none reaches the caller after
                // it cancelled.
                if request.cancel.is_cancelled() {
                    return Err(Failure::fatal(LlmError::Cancelled));
                }
                reply
                    .event(&data, request.on_token)
                    .map_err(Failure::fatal)?;
                if reply.done {
                    break;
                }
            }
        }
        if !reply.done {
            if let Some(data) = decoder.finish() {
                reply
                    .event(&data, request.on_token)
                    .map_err(Failure::fatal)?;
            }
        }
        let completion = reply
            .into_completion(request.options.logprobs)
            .map_err(Failure::fatal)?;
        if request.options.logprobs && completion.logprobs.is_none() {
            self.logprobs.store(false, Ordering::Relaxed);
        }
        Ok(completion)
    }

    fn transport_failure(&self, error: &reqwest::Error, retryable: bool) -> Failure {
        Failure {
            error: LlmError::ServerDown {
                url: self.base_url.clone(),
                reason: root_cause(error),
            },
            retryable,
            retry_after: None,
        }
    }
}

#[async_trait::async_trait]
impl Llm for OpenAiLlm {
    fn info(&self) -> ModelInfo {
        ModelInfo {
            backend: Backend::Openai,
            model: self.model.clone(),
            context_size: self.context_size,
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            streaming: true,
            logprobs: self.logprobs.load(Ordering::Relaxed),
        }
    }

    /// One short request asking for token counts and log-probabilities
    /// shows whether the server gives them; the schema probe is the one
    /// every shaped request would make.
    async fn support(&self) -> Result<Support> {
        let cancel = CancellationToken::new();
        let options = GenerateOptions {
            max_tokens: 4,
            temperature: 0.0,
            logprobs: true,
            timeout: PROBE_TIMEOUT,
            ..GenerateOptions::default()
        };
        let reply = self
            .chat(ChatRequest {
                messages: &[ChatMessage::user("Say OK.")],
                options: &options,
                on_token: None,
                cancel: &cancel,
            })
            .await?;
        let form = {
            let _turn = self
                .in_flight
                .acquire()
                .await
                .expect("the semaphore is never closed");
            self.schema_form(&cancel).await?
        };
        Ok(Support {
            usage: reply.usage.completion_tokens > 0,
            logprobs: reply.logprobs.is_some(),
            shapes: form.map(|f| f.as_str().to_string()),
        })
    }

    /// The time limit starts once the request's turn comes: a request
    /// waiting behind others (see `LlmSettings::parallel`) is not the
    /// server being slow. Cancelling works while it waits too.
    async fn chat(&self, request: ChatRequest<'_>) -> Result<Completion> {
        let limit = request.options.timeout;
        let in_turn = async {
            let _turn = self
                .in_flight
                .acquire()
                .await
                .expect("the semaphore is never closed");
            tokio::time::timeout(limit, self.chat_with_retries(&request))
                .await
                .unwrap_or(Err(LlmError::Timeout(limit)))
        };
        let outcome = tokio::select! {
            biased;
            _ = request.cancel.cancelled() => Err(LlmError::Cancelled),
            outcome = in_turn => outcome,
        };
        outcome.map_err(|e| redacted(e, self.api_key.as_ref()))
    }
}

/// A request the server answered with an error status.
async fn http_failure(response: Response) -> Failure {
    Failure::from_response(response, |status, message| LlmError::Http {
        status,
        message,
    })
    .await
}

/// Servers that check the model name per request answer 404 with wording
/// like "The model `x` does not exist" (OpenAI, vLLM) or "model \"x\" not
/// found" (Ollama).
fn names_missing_model(message: &str) -> bool {
    let message = message.to_lowercase();
    message.contains("model")
        && (message.contains("not found") || message.contains("does not exist"))
}

/// `error` without the API key in its text. A server or proxy that quotes
/// the request back (its headers in an error page, a debug echo) would
/// otherwise put the key into the error, and from there into the run's
/// stored error, the CLI's output and the app's log.
fn redacted(error: LlmError, key: Option<&ApiKey>) -> LlmError {
    match key.map(ApiKey::expose).filter(|k| !k.is_empty()) {
        Some(key) => error.map_text(|text| text.replace(key, ApiKey::SHOWN)),
        None => error,
    }
}

/// `top_logprobs` is sent along with `logprobs` because llama-cpp-python
/// returns no log-probabilities without it; 0 asks for no alternatives, which
/// every server accepts. The schema goes in `form`, where the server takes
/// one; the grammar never does, since few servers accept GBNF.
fn request_body(
    model: &str,
    messages: &[ChatMessage],
    options: &GenerateOptions,
    form: Option<SchemaForm>,
) -> Value {
    let messages: Vec<Value> = messages
        .iter()
        .map(|m| json!({ "role": m.role.as_str(), "content": m.content }))
        .collect();
    let mut body = json!({
        "model": model,
        "messages": messages,
        "stream": true,
        "stream_options": { "include_usage": true },
        "max_tokens": options.max_tokens,
        "temperature": options.temperature,
        "seed": options.seed,
    });
    if let Some(sampling) = options.sampling {
        body["top_p"] = json!(sampling.top_p);
    }
    if !options.stop.is_empty() {
        body["stop"] = json!(options.stop);
    }
    if options.logprobs {
        body["logprobs"] = json!(true);
        body["top_logprobs"] = json!(0);
    }
    if let (Some(schema), Some(form)) = (&options.schema, form) {
        body["response_format"] = form.response_format(&schema.schema);
    }
    body
}

/// A server's `GET /models` reply, as much of it as Folio reads (also
/// `discovery`'s probes).
#[derive(Deserialize)]
pub(super) struct ModelList {
    pub(super) data: Vec<ModelEntry>,
}

#[derive(Deserialize)]
pub(super) struct ModelEntry {
    pub(super) id: String,
}

#[derive(Deserialize)]
struct ChunkWire {
    #[serde(default)]
    choices: Vec<ChoiceWire>,
    usage: Option<UsageWire>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChoiceWire {
    #[serde(default)]
    index: u32,
    delta: Option<DeltaWire>,
    finish_reason: Option<String>,
    logprobs: Option<LogprobsWire>,
}

#[derive(Deserialize)]
struct DeltaWire {
    content: Option<String>,
}

#[derive(Deserialize)]
struct LogprobsWire {
    content: Option<Vec<TokenLogprob>>,
}

#[derive(Deserialize)]
struct UsageWire {
    prompt_tokens: u32,
    completion_tokens: u32,
    /// OpenAI and llama.cpp's server report prompt-cache hits here.
    #[serde(default)]
    prompt_tokens_details: Option<PromptTokensDetails>,
}

#[derive(Deserialize)]
struct PromptTokensDetails {
    #[serde(default)]
    cached_tokens: u32,
}

/// What the chunks of one streamed reply add up to.
#[derive(Default)]
struct StreamedReply {
    text: String,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    logprobs: Vec<TokenLogprob>,
    saw_logprobs: bool,
    events: usize,
    done: bool,
}

impl StreamedReply {
    /// Whether the caller has already received text, after which a failure
    /// must not be retried (the retry would stream a second answer).
    fn streamed(&self) -> bool {
        !self.text.is_empty()
    }

    fn event(&mut self, data: &str, on_token: Option<TokenSink<'_>>) -> Result<()> {
        self.events += 1;
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: ChunkWire = serde_json::from_str(data).map_err(|e| {
            LlmError::Protocol(format!(
                "a stream chunk is not valid JSON ({e}): {}",
                excerpt(data)
            ))
        })?;
        if let Some(error) = chunk.error {
            return Err(stream_error(&error));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(Usage {
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
                cached_tokens: usage.prompt_tokens_details.map_or(0, |d| d.cached_tokens),
            });
        }
        for choice in chunk.choices.into_iter().filter(|choice| choice.index == 0) {
            if let Some(content) = choice
                .delta
                .and_then(|delta| delta.content)
                .filter(|content| !content.is_empty())
            {
                if let Some(sink) = on_token {
                    sink(&content);
                }
                self.text.push_str(&content);
            }
            if let Some(tokens) = choice.logprobs.and_then(|logprobs| logprobs.content) {
                self.saw_logprobs = true;
                self.logprobs.extend(tokens);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(finish_reason(&reason));
            }
        }
        Ok(())
    }

    fn into_completion(self, logprobs_requested: bool) -> Result<Completion> {
        let Some(finish) = self.finish else {
            let chars = self.text.chars().count();
            return Err(LlmError::Protocol(if self.events == 0 {
                "the server closed the stream without sending anything; its log says why \
                 (llama-cpp-python does this for a prompt longer than its context)"
                    .to_string()
            } else if self.done {
                format!(
                    "the stream ended without saying why the answer stopped, after {chars} characters \
                     (llama-cpp-python does this when another request interrupts it)"
                )
            } else {
                format!(
                    "the stream broke off after {chars} characters, before the answer was finished"
                )
            }));
        };
        let logprobs = match (
            logprobs_requested,
            self.saw_logprobs || self.text.is_empty(),
        ) {
            (true, true) => Some(self.logprobs),
            _ => None,
        };
        Ok(Completion {
            text: self.text,
            finish,
            usage: self.usage.unwrap_or_default(),
            logprobs,
            shaping: None,
        })
    }
}

/// "length" is the one reason that leaves the text cut off; anything else
/// ("stop", "eos", "content_filter") means the server ended the turn itself.
fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "length" => FinishReason::Length,
        _ => FinishReason::Stop,
    }
}

/// Some servers (vLLM, OpenAI) report a failure after the stream has begun
/// as a chunk holding an `error` object, sometimes with the HTTP status it
/// would have had as `code`.
fn stream_error(error: &Value) -> LlmError {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| error.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| excerpt(&error.to_string()));
    let status = error
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|code| u16::try_from(code).ok())
        .filter(|code| (400..600).contains(code))
        .unwrap_or(500);
    LlmError::Http { status, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_quoting_the_key_loses_it() {
        let key = ApiKey::new("sk-folio-unit-SECRET");
        let quoted = LlmError::Http {
            status: 401,
            message: "bad header: Authorization: Bearer sk-folio-unit-SECRET".into(),
        };
        let text = redacted(quoted, Some(&key)).to_string();
        assert_eq!(
            text,
            "the LLM server answered 401: bad header: Authorization: Bearer (set)"
        );
        let down = LlmError::ServerDown {
            url: "http://sk-folio-unit-SECRET@host/v1".into(),
            reason: "refused".into(),
        };
        assert!(!redacted(down, Some(&key))
            .to_string()
            .contains(key.expose()));
    }

    #[test]
    fn missing_model_wordings_are_recognised() {
        assert!(names_missing_model(
            "The model `gpt-9` does not exist or you do not have access to it."
        ));
        assert!(names_missing_model(
            "model \"llama9\" not found, try pulling it first"
        ));
        assert!(names_missing_model("The model `x` does not exist."));
        assert!(!names_missing_model("Not Found"));
        assert!(!names_missing_model("route /v1/chat/completions not found"));
    }

    #[test]
    fn request_asks_for_usage_and_logprobs_only_when_wanted() {
        let messages = [ChatMessage::system("Be brief."), ChatMessage::user("Hi")];
        let options = GenerateOptions {
            max_tokens: 7,
            temperature: 0.0,
            seed: 3,
            ..GenerateOptions::default()
        };
        let body = request_body("m", &messages, &options, None);
        assert_eq!(
            body,
            json!({
                "model": "m",
                "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
                "stream": true,
                "stream_options": {"include_usage": true},
                "max_tokens": 7,
                "temperature": 0.0,
                "seed": 3,
            })
        );
        let options = GenerateOptions {
            logprobs: true,
            stop: vec!["\n\n".into()],
            ..options
        };
        let body = request_body("m", &messages, &options, None);
        assert_eq!(body["logprobs"], json!(true));
        assert_eq!(body["top_logprobs"], json!(0));
        assert_eq!(body["stop"], json!(["\n\n"]));
    }

    fn replay(events: &[&str], logprobs: bool) -> (Result<Completion>, Vec<String>) {
        let pieces = std::sync::Mutex::new(Vec::new());
        let sink: TokenSink = &|piece| pieces.lock().unwrap().push(piece.to_string());
        let mut reply = StreamedReply::default();
        let mut outcome = Ok(());
        for event in events {
            outcome = reply.event(event, Some(sink));
            if outcome.is_err() {
                break;
            }
        }
        let completion = outcome.and_then(|()| reply.into_completion(logprobs));
        (completion, pieces.into_inner().unwrap())
    }

    // Chunks as llama-cpp-python 0.3.36 streams them with logprobs on.
    const LLAMA_CPP_PYTHON: [&str; 5] = [
        r#"{"id": "c", "model": "m", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant"}, "logprobs": null, "finish_reason": null}]}"#,
        r#"{"id": "c", "model": "m", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "The"}, "logprobs": {"content": [{"token": "The", "bytes": null, "logprob": -1.97, "top_logprobs": [{"token": "The", "logprob": -1.97, "bytes": null}]}], "refusal": null}, "finish_reason": null}]}"#,
        r#"{"id": "c", "model": "m", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": " capital"}, "logprobs": {"content": [{"token": " capital", "bytes": null, "logprob": -0.0177, "top_logprobs": []}], "refusal": null}, "finish_reason": null}]}"#,
        r#"{"id": "c", "model": "m", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "logprobs": null, "finish_reason": "length"}]}"#,
        "[DONE]",
    ];

    #[test]
    fn llama_cpp_python_stream_gives_text_pieces_and_logprobs_but_no_usage() {
        let (completion, pieces) = replay(&LLAMA_CPP_PYTHON, true);
        let completion = completion.unwrap();
        assert_eq!(pieces, vec!["The", " capital"]);
        assert_eq!(completion.text, "The capital");
        assert_eq!(completion.finish, FinishReason::Length);
        assert_eq!(completion.usage, Usage::default());
        let logprobs = completion.logprobs.unwrap();
        assert_eq!(
            logprobs
                .iter()
                .map(|t| t.token.as_str())
                .collect::<Vec<_>>(),
            vec!["The", " capital"]
        );
        assert_eq!(logprobs[0].logprob, -1.97);
    }

    #[test]
    fn usage_chunk_after_the_finish_is_picked_up() {
        let events = [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Paris."},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}"#,
            "[DONE]",
        ];
        let completion = replay(&events, false).0.unwrap();
        assert_eq!(completion.finish, FinishReason::Stop);
        assert_eq!(
            completion.usage,
            Usage {
                prompt_tokens: 12,
                completion_tokens: 3,
                cached_tokens: 0,
            }
        );
        assert_eq!(completion.logprobs, None);
    }

    #[test]
    fn logprobs_asked_of_a_server_that_sends_none_are_none() {
        let events = [
            r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ];
        assert_eq!(replay(&events, true).0.unwrap().logprobs, None);
        let empty = [
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ];
        assert_eq!(replay(&empty, true).0.unwrap().logprobs, Some(Vec::new()));
    }

    #[test]
    fn malformed_chunk_is_a_protocol_error_quoting_it() {
        let events = [r#"{"choices":[{"index":0,"delta":{"content":"Hi"}"#];
        match replay(&events, false).0 {
            Err(LlmError::Protocol(message)) => {
                assert!(message.contains(r#"{"choices":[{"index":0"#), "{message}")
            }
            other => panic!("expected a protocol error, got {other:?}"),
        }
    }

    #[test]
    fn streams_that_end_without_a_finish_reason_are_errors() {
        for (events, wording) in [
            (&[][..], "without sending anything"),
            (
                &[
                    r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#,
                    "[DONE]",
                ][..],
                "without saying why",
            ),
            (
                &[r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#][..],
                "broke off",
            ),
        ] {
            match replay(events, false).0 {
                Err(LlmError::Protocol(message)) => assert!(message.contains(wording), "{message}"),
                other => panic!("expected a protocol error, got {other:?}"),
            }
        }
    }

    #[test]
    fn error_chunk_mid_stream_becomes_an_http_error() {
        let events = [
            r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#,
            r#"{"error":{"object":"error","message":"out of memory","type":"InternalServerError","code":503}}"#,
        ];
        match replay(&events, false).0 {
            Err(LlmError::Http {
                status: 503,
                message,
            }) => assert_eq!(message, "out of memory"),
            other => panic!("expected an HTTP error, got {other:?}"),
        }
        match stream_error(&json!("overloaded")) {
            LlmError::Http {
                status: 500,
                message,
            } => assert_eq!(message, "overloaded"),
            other => panic!("expected an HTTP error, got {other:?}"),
        }
    }
}
