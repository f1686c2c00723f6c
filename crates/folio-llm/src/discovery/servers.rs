//! OpenAI-compatible servers answering on 127.0.0.1 at the ports local
//! model apps listen on: their models (`GET /v1/models`) and, where the
//! server says, what each model can do (Ollama's `POST /api/show`, LM
//! Studio's `GET /api/v0/models`). Every port is asked at once, every
//! request is bounded in time ([`PROBE_WAIT`]) and in size, redirects and
//! proxies are refused so no request leaves the machine, and a port that
//! answers badly becomes an entry saying how.

use std::collections::HashMap;
use std::time::Duration;

use reqwest::{Client, RequestBuilder};
use serde::{Deserialize, Serialize};

use super::error::ProbeError;
use super::{printable, App, ServerPort};
use crate::openai::ModelList;

/// The longest one request may take, connecting included. Loopback
/// servers answer a model list in milliseconds; a port that holds a
/// connection open without answering costs this and no more.
pub const PROBE_WAIT: Duration = Duration::from_secs(2);
/// The most of a reply that is read: a model list is a few KiB.
const MAX_REPLY_BYTES: usize = 1 << 20;
/// Models asked about one by one (Ollama's `/api/show`); past these, a
/// model's capabilities are left unreported.
const MAX_SHOWN: usize = 64;
/// How much of a reply that is not a model list is quoted.
const EXCERPT_CHARS: usize = 120;

/// Something answering on a loopback port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
pub struct FoundServer {
    pub port: u16,
    /// The app that usually listens on this port; what answers may be
    /// another (a llama.cpp server started on Ollama's port is still one).
    pub usual_app: App,
    /// The API root to put in `base_url`: `http://127.0.0.1:<port>/v1`.
    pub base_url: String,
    pub models: Vec<ServedModel>,
    /// Why its answer is not a model list; `None` when it is.
    pub error: Option<String>,
}

/// A model a server serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
pub struct ServedModel {
    /// The name to ask for it by (`model` in folio.toml).
    pub id: String,
    /// What the server says it can do (Ollama: `completion`, `tools`,
    /// `vision`, `embedding`, …; LM Studio: `llm`, `vlm`, `embeddings`,
    /// `tool_use`); `None` when the server does not report it.
    pub capabilities: Option<Vec<String>>,
}

pub(super) async fn probe(ports: &[ServerPort]) -> Vec<FoundServer> {
    let client = match client() {
        Ok(client) => client,
        Err(e) => {
            let reason = format!("not asked: the HTTP client could not be set up ({e})");
            return ports
                .iter()
                .map(|port| entry(*port, Err(reason.clone())))
                .collect();
        }
    };
    let probes = ports.iter().map(|port| probe_one(&client, *port));
    futures::future::join_all(probes)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// A client that talks to loopback only: no proxy from the environment,
/// no redirects (a redirect could point anywhere), bounded waits.
fn client() -> reqwest::Result<Client> {
    Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(PROBE_WAIT)
        .timeout(PROBE_WAIT)
        .build()
}

fn root_url(port: u16) -> String {
    format!("http://127.0.0.1:{port}")
}

fn entry(port: ServerPort, models: Result<Vec<ServedModel>, String>) -> FoundServer {
    let (models, error) = match models {
        Ok(models) => (models, None),
        Err(error) => (Vec::new(), Some(error)),
    };
    FoundServer {
        port: port.port,
        usual_app: port.app,
        base_url: format!("{}/v1", root_url(port.port)),
        models,
        error,
    }
}

async fn probe_one(client: &Client, port: ServerPort) -> Option<FoundServer> {
    let root = root_url(port.port);
    let listed = match fetch(client.get(format!("{root}/v1/models"))).await {
        Err(Reach::Nobody) => return None,
        Err(Reach::Failed(e)) => Err(e),
        Ok(body) => model_ids(&body),
    };
    let ids = match listed {
        Ok(ids) => ids,
        Err(e) => return Some(entry(port, Err(e.to_string()))),
    };
    let mut capabilities = match port.app {
        App::Ollama => ollama_capabilities(client, &root, &ids).await,
        App::LmStudio => lm_studio_capabilities(client, &root).await,
        _ => HashMap::new(),
    };
    let models = ids
        .into_iter()
        .map(|id| ServedModel {
            capabilities: capabilities.remove(&id),
            id,
        })
        .collect();
    Some(entry(port, Ok(models)))
}

/// How far a request got.
enum Reach {
    /// Nothing listens on the port.
    Nobody,
    Failed(ProbeError),
}

/// A successful reply's body, read within [`PROBE_WAIT`] and
/// [`MAX_REPLY_BYTES`].
async fn fetch(request: RequestBuilder) -> Result<Vec<u8>, Reach> {
    let reading = async {
        let mut response = request.send().await.map_err(failure)?;
        if !response.status().is_success() {
            return Err(Reach::Failed(ProbeError::Status {
                status: response.status().as_u16(),
            }));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(failure)? {
            if body.len() + chunk.len() > MAX_REPLY_BYTES {
                return Err(Reach::Failed(ProbeError::TooLong(MAX_REPLY_BYTES)));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    };
    // The client's own timeout covers each request; this covers the whole
    // exchange, however the server paces its bytes.
    tokio::time::timeout(PROBE_WAIT, reading)
        .await
        .unwrap_or(Err(Reach::Failed(ProbeError::NoAnswer(PROBE_WAIT))))
}

fn failure(e: reqwest::Error) -> Reach {
    if e.is_connect() {
        Reach::Nobody
    } else if e.is_timeout() {
        Reach::Failed(ProbeError::NoAnswer(PROBE_WAIT))
    } else {
        Reach::Failed(ProbeError::NotHttp(root_cause(&e)))
    }
}

/// The innermost cause of an error: reqwest's own message ("error sending
/// request") says nothing of what the server did.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(source) = cause.source() {
        cause = source;
    }
    printable(&cause.to_string(), EXCERPT_CHARS)
}

fn model_ids(body: &[u8]) -> Result<Vec<String>, ProbeError> {
    serde_json::from_slice::<ModelList>(body)
        .map(|list| list.data.into_iter().map(|m| m.id).collect())
        .map_err(|e| ProbeError::NotAModelList {
            reason: e.to_string(),
            excerpt: printable(&String::from_utf8_lossy(body), EXCERPT_CHARS),
        })
}

#[derive(Serialize)]
struct ShowRequest<'a> {
    model: &'a str,
}

#[derive(Deserialize)]
struct ShowReply {
    capabilities: Option<Vec<String>>,
}

/// Ollama's `capabilities` of each model, asked all at once; a model whose
/// answer is missing or unreadable is left out.
async fn ollama_capabilities(
    client: &Client,
    root: &str,
    ids: &[String],
) -> HashMap<String, Vec<String>> {
    let shows = ids.iter().take(MAX_SHOWN).map(|id| async move {
        let request = client
            .post(format!("{root}/api/show"))
            .json(&ShowRequest { model: id });
        let reported = ollama_reported(&fetch(request).await.ok()?)?;
        Some((id.clone(), reported))
    });
    futures::future::join_all(shows)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// The `capabilities` of an Ollama `/api/show` reply.
fn ollama_reported(body: &[u8]) -> Option<Vec<String>> {
    serde_json::from_slice::<ShowReply>(body).ok()?.capabilities
}

#[derive(Deserialize)]
struct LmStudioList {
    data: Vec<LmStudioModel>,
}

#[derive(Deserialize)]
struct LmStudioModel {
    id: String,
    #[serde(rename = "type")]
    kind: Option<String>,
    capabilities: Option<Vec<String>>,
}

/// LM Studio's model `type` and `capabilities`, from its own REST API.
async fn lm_studio_capabilities(client: &Client, root: &str) -> HashMap<String, Vec<String>> {
    match fetch(client.get(format!("{root}/api/v0/models"))).await {
        Ok(body) => lm_studio_reported(&body),
        Err(_) => HashMap::new(),
    }
}

/// Each model's `type` and `capabilities` in LM Studio's `/api/v0/models`.
fn lm_studio_reported(body: &[u8]) -> HashMap<String, Vec<String>> {
    let Ok(list) = serde_json::from_slice::<LmStudioList>(body) else {
        return HashMap::new();
    };
    list.data
        .into_iter()
        .filter_map(|model| {
            let reported: Vec<String> = model
                .kind
                .into_iter()
                .chain(model.capabilities.unwrap_or_default())
                .collect();
            (!reported.is_empty()).then_some((model.id, reported))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_list_gives_its_ids_and_anything_else_is_quoted() {
        let ids = model_ids(br#"{"object":"list","data":[{"id":"qwen2.5:0.5b","object":"model","owned_by":"library"}]}"#);
        assert_eq!(ids.unwrap(), ["qwen2.5:0.5b"]);
        let error = model_ids(b"<html>\x1b[2J hello</html>")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("something other than a model list"),
            "{error}"
        );
        assert!(error.contains("<html>"), "{error}");
        assert!(!error.contains('\u{1b}'), "{error}");
    }

    /// Replies in the shapes Ollama 0.12's `/api/show` and LM Studio 0.3's
    /// `/api/v0/models` send (trimmed).
    #[test]
    fn capabilities_are_read_where_the_server_reports_them() {
        let show = br#"{"license":"Apache","modelfile":"FROM x","template":"{{ .Prompt }}","details":{"format":"gguf","family":"qwen2","quantization_level":"Q4_K_M"},"model_info":{"general.architecture":"qwen2"},"capabilities":["completion","tools"],"modified_at":"2025-01-01T00:00:00Z"}"#;
        assert_eq!(ollama_reported(show).unwrap(), ["completion", "tools"]);
        assert_eq!(
            ollama_reported(br#"{"license":"x"}"#),
            None,
            "an older Ollama reports none"
        );
        assert_eq!(ollama_reported(b"not json"), None);
        let lm = br#"{"object":"list","data":[{"id":"qwen2-vl-7b-instruct","object":"model","type":"vlm","publisher":"mlx-community","arch":"qwen2_vl","compatibility_type":"mlx","quantization":"4bit","state":"not-loaded","max_context_length":32768},{"id":"granite-3.0-2b-instruct","object":"model","type":"llm","capabilities":["tool_use"],"state":"loaded","max_context_length":4096},{"id":"mystery","object":"model"}]}"#;
        let reported = lm_studio_reported(lm);
        assert_eq!(reported["qwen2-vl-7b-instruct"], ["vlm"]);
        assert_eq!(reported["granite-3.0-2b-instruct"], ["llm", "tool_use"]);
        assert!(!reported.contains_key("mystery"));
        assert!(lm_studio_reported(b"[]").is_empty());
    }
}
