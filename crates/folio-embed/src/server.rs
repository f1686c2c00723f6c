//! Embeddings from an OpenAI-compatible server (`POST /v1/embeddings`:
//! vLLM, Hugging Face TEI, Ollama, llama.cpp's server, llama-cpp-python),
//! for libraries that outgrow one machine's CPU. Texts go in batches of
//! [`ServerSettings::batch`], [`ServerSettings::parallel`] requests at once;
//! overload and server faults are retried with backoff
//! ([`folio_core::server_http`]). Every vector is checked (count, dimension,
//! finite) and scaled to unit length, as the embedded model's are, since
//! servers differ in whether they normalise.
//!
//! A server may mix up texts sent together: llama-cpp-python 0.3.36
//! serving a model whose file names no pooling returns the first text's
//! vector right and the others' wrong. So batching is checked once when the
//! client connects (two texts together must come back as each alone), and a
//! server that fails is sent one text a request, with a note saying so.
//!
//! The embedder's callers are synchronous (indexing and queries call it on
//! blocking threads), so the client runs its requests on a small runtime of
//! its own.

use std::sync::Arc;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};

use super::{EmbedError, Result};
use folio_core::server_http::{excerpt, root_cause, with_retries, ApiKey};

/// The `[embedding]` keys for a server, as `folio.toml` and Settings give them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSettings {
    /// The API root, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// The model id the server knows; stored with the vectors, so a
    /// different id re-embeds the library.
    pub model: String,
    /// Sent as a bearer token when set.
    pub api_key: Option<ApiKey>,
    /// Texts per request.
    pub batch: u32,
    /// Requests in flight at once.
    pub parallel: u32,
    /// Longest wait for one request, retries included.
    pub timeout_secs: u64,
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            base_url: "http://127.0.0.1:8080/v1".into(),
            model: String::new(),
            api_key: None,
            batch: 32,
            parallel: 4,
            timeout_secs: 120,
        }
    }
}

pub(super) struct ServerEmbeddings {
    /// `None` only while dropping: the runtime is shut down without waiting,
    /// since the embedder may be dropped on an async thread.
    runtime: Option<tokio::runtime::Runtime>,
    client: Arc<Client>,
    /// Texts a request: the setting, or 1 when the batching check failed.
    batch: usize,
    /// Set when the batching check failed and texts go one a request.
    note: Option<String>,
}

/// What the requests need, shared with the tasks that send them.
struct Client {
    http: reqwest::Client,
    endpoint: String,
    settings: ServerSettings,
}

/// What the batching check sends: two texts with little in common.
const BATCH_PROBE: [&str; 2] = [
    "Folio checks how this server embeds texts sent together.",
    "Rivers carry sand and silt down to the sea.",
];
/// Cosine below which a text's vector in a batch is not its vector alone;
/// the same text embedded twice agrees far closer than this.
const SAME_VECTOR: f32 = 0.999;

#[derive(Serialize)]
struct EmbeddingRequest<'a> {
    model: &'a str,
    input: &'a [String],
}

#[derive(Deserialize)]
struct EmbeddingList {
    data: Vec<EmbeddingEntry>,
}

#[derive(Deserialize)]
struct EmbeddingEntry {
    /// Which input this vector belongs to; servers may answer out of order.
    index: Option<usize>,
    embedding: Pooled,
}

/// A vector, or one vector per token: llama-cpp-python serving a model
/// whose file names no pooling (a chat model's GGUF) answers with the
/// latter, which is mean-pooled here as the embedded model pools.
#[derive(Deserialize)]
#[serde(untagged)]
enum Pooled {
    Vector(Vec<f32>),
    Tokens(Vec<Vec<f32>>),
}

impl ServerEmbeddings {
    pub(super) fn connect(settings: &ServerSettings) -> Result<ServerEmbeddings> {
        let base_url = settings.base_url.trim_end_matches('/').to_string();
        if settings.model.trim().is_empty() {
            return Err(EmbedError::Config(
                "[embedding] model is empty: name the model the server embeds with".into(),
            ));
        }
        let setup_failed = |reason: String| EmbedError::ServerDown {
            url: base_url.clone(),
            reason,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("folio-embed-http")
            .enable_all()
            .build()
            .map_err(|e| setup_failed(format!("cannot start the HTTP client: {e}")))?;
        let http = {
            let _context = runtime.enter();
            folio_core::server_http::client()
                .map_err(|e| setup_failed(format!("cannot set up HTTP: {}", root_cause(&e))))?
        };
        let settings = ServerSettings {
            base_url: base_url.clone(),
            api_key: settings.api_key.clone().filter(|k| !k.expose().is_empty()),
            batch: settings.batch.max(1),
            parallel: settings.parallel.max(1),
            ..settings.clone()
        };
        let mut server = ServerEmbeddings {
            runtime: Some(runtime),
            batch: settings.batch as usize,
            client: Arc::new(Client {
                http,
                endpoint: format!("{base_url}/embeddings"),
                settings,
            }),
            note: None,
        };
        if server.batch > 1 && !server.batches_faithfully()? {
            server.batch = 1;
            server.note = Some(format!(
                "the server at {base_url} returns other vectors for texts sent together than for each alone, so texts are sent one a request"
            ));
        }
        Ok(server)
    }

    /// Whether the texts of one request come back as each would alone.
    fn batches_faithfully(&self) -> Result<bool> {
        let together = self.embed(&BATCH_PROBE)?;
        for (text, vector) in BATCH_PROBE.iter().zip(&together) {
            let alone = self.embed(&[text])?;
            let cosine: f32 = vector.iter().zip(&alone[0]).map(|(a, b)| a * b).sum();
            if cosine < SAME_VECTOR {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// How this server is used, where it differs from the settings.
    pub(super) fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// What the vectors are stored under: the server's model id, not its
    /// address, since the same model served elsewhere gives the same vectors.
    pub(super) fn name(&self) -> String {
        format!("{} (server)", self.client.settings.model)
    }

    /// Texts a turn of bulk work sends: every request slot full once.
    pub(super) fn turn(&self) -> usize {
        self.batch * self.client.settings.parallel as usize
    }

    /// Unit vectors for `texts`, in order. The requests run on the client's
    /// own runtime and this thread waits for their answer, so a caller may
    /// be on any thread, an async one included.
    pub(super) fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let runtime = self.runtime.as_ref().expect("the runtime lives until drop");
        let (answer, answered) = std::sync::mpsc::channel();
        let client = self.client.clone();
        let texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
        let batch = self.batch;
        runtime.spawn(async move {
            let _ = answer.send(client.embed(texts, batch).await);
        });
        answered.recv().map_err(|_| {
            EmbedError::Inference("the embedding requests ended without an answer".into())
        })?
    }
}

impl Client {
    async fn embed(self: Arc<Self>, texts: Vec<String>, batch: usize) -> Result<Vec<Vec<f32>>> {
        let parts: Vec<Vec<String>> = texts.chunks(batch).map(<[String]>::to_vec).collect();
        let parallel = self.settings.parallel as usize;
        let batches: Vec<Vec<Vec<f32>>> = futures::stream::iter(parts)
            .map(|part| {
                let client = self.clone();
                async move { client.request(&part).await }
            })
            .buffered(parallel)
            .try_collect()
            .await?;
        Ok(batches.into_iter().flatten().collect())
    }

    async fn request(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let limit = Duration::from_secs(self.settings.timeout_secs.max(1));
        let attempts = with_retries(|| async {
            let mut post = self.http.post(&self.endpoint).json(&EmbeddingRequest {
                model: &self.settings.model,
                input: texts,
            });
            if let Some(key) = &self.settings.api_key {
                post = post.bearer_auth(key.expose());
            }
            let response = post.send().await.map_err(|e| Failure {
                error: self.down(root_cause(&e)),
                retryable: true,
                retry_after: None,
            })?;
            if !response.status().is_success() {
                return Err(Failure::from_response(response, |status, message| {
                    EmbedError::ServerAnswered {
                        url: self.settings.base_url.clone(),
                        status,
                        message,
                    }
                })
                .await);
            }
            let body = response.text().await.map_err(|e| Failure {
                error: self.down(root_cause(&e)),
                retryable: true,
                retry_after: None,
            })?;
            Ok(body)
        });
        let body = tokio::time::timeout(limit, attempts)
            .await
            .map_err(|_| EmbedError::ServerTimeout {
                url: self.settings.base_url.clone(),
                limit,
            })?
            .map_err(|e| self.redacted(e))?;
        vectors_from(&body, texts.len()).map_err(|reason| EmbedError::ServerReply {
            url: self.settings.base_url.clone(),
            reason,
        })
    }

    fn down(&self, reason: String) -> EmbedError {
        EmbedError::ServerDown {
            url: self.settings.base_url.clone(),
            reason,
        }
    }

    /// `error` without the API key, should the server have quoted it back.
    fn redacted(&self, error: EmbedError) -> EmbedError {
        match &self.settings.api_key {
            Some(key) => match error {
                EmbedError::ServerAnswered {
                    url,
                    status,
                    message,
                } => EmbedError::ServerAnswered {
                    url,
                    status,
                    message: message.replace(key.expose(), ApiKey::SHOWN),
                },
                other => other,
            },
            None => error,
        }
    }
}

type Failure = folio_core::server_http::Failure<EmbedError>;

impl Drop for ServerEmbeddings {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// The unit vectors of a reply to `expected` inputs, in input order, or
/// what is wrong with the reply.
fn vectors_from(body: &str, expected: usize) -> std::result::Result<Vec<Vec<f32>>, String> {
    let list: EmbeddingList =
        serde_json::from_str(body).map_err(|e| format!("{e} in {}", excerpt(body.trim())))?;
    if list.data.len() != expected {
        return Err(format!("{} vectors for {expected} texts", list.data.len()));
    }
    let mut ordered: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (position, entry) in list.data.into_iter().enumerate() {
        let index = entry.index.unwrap_or(position);
        let slot = ordered
            .get_mut(index)
            .ok_or_else(|| format!("a vector for input {index} of {expected}"))?;
        if slot.is_some() {
            return Err(format!("two vectors for input {index}"));
        }
        *slot = Some(unit(pooled(entry.embedding)?)?);
    }
    let vectors: Vec<Vec<f32>> = ordered.into_iter().flatten().collect();
    if vectors
        .windows(2)
        .any(|pair| pair[0].len() != pair[1].len())
    {
        return Err("vectors of different lengths in one reply".into());
    }
    Ok(vectors)
}

fn pooled(embedding: Pooled) -> std::result::Result<Vec<f32>, String> {
    match embedding {
        Pooled::Vector(vector) => Ok(vector),
        Pooled::Tokens(tokens) => {
            let dim = tokens.first().map(Vec::len).unwrap_or(0);
            if tokens.iter().any(|t| t.len() != dim) {
                return Err("token vectors of different lengths".into());
            }
            let mut mean = vec![0f32; dim];
            for token in &tokens {
                for (sum, value) in mean.iter_mut().zip(token) {
                    *sum += value;
                }
            }
            mean.iter_mut().for_each(|v| *v /= tokens.len() as f32);
            Ok(mean)
        }
    }
}

fn unit(mut vector: Vec<f32>) -> std::result::Result<Vec<f32>, String> {
    if vector.is_empty() {
        return Err("an empty vector".into());
    }
    if vector.iter().any(|v| !v.is_finite()) {
        return Err("a vector with a value that is not a number".into());
    }
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
    if norm == 0.0 {
        return Err("a vector of zeros".into());
    }
    vector.iter_mut().for_each(|v| *v /= norm);
    Ok(vector)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_come_back_in_input_order_at_unit_length() {
        let body = r#"{"data":[{"index":1,"embedding":[0,2]},{"index":0,"embedding":[3,4]}]}"#;
        let vectors = vectors_from(body, 2).unwrap();
        assert_eq!(vectors, vec![vec![0.6, 0.8], vec![0.0, 1.0]]);
    }

    #[test]
    fn token_vectors_are_mean_pooled() {
        let body = r#"{"data":[{"embedding":[[1,0],[3,0]]}]}"#;
        assert_eq!(vectors_from(body, 1).unwrap(), vec![vec![1.0, 0.0]]);
    }

    #[test]
    fn malformed_replies_say_what_is_wrong() {
        let cases = [
            ("not json", "expected"),
            (r#"{"data":[{"embedding":[1]}]}"#, "1 vectors for 2 texts"),
            (
                r#"{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}"#,
                "two vectors for input 0",
            ),
            (
                r#"{"data":[{"index":5,"embedding":[1]},{"embedding":[1]}]}"#,
                "input 5 of 2",
            ),
            (
                r#"{"data":[{"embedding":[0,0]},{"embedding":[1,0]}]}"#,
                "zeros",
            ),
            (r#"{"data":[{"embedding":[]},{"embedding":[1]}]}"#, "empty"),
            (
                r#"{"data":[{"embedding":[1,0]},{"embedding":[1]}]}"#,
                "different lengths",
            ),
        ];
        for (body, wanted) in cases {
            let error = vectors_from(body, 2).unwrap_err();
            assert!(error.contains(wanted), "{body}: {error}");
        }
    }
}
