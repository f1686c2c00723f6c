//! The OpenAI-compatible backend against a real third-party server:
//! llama-cpp-python 0.3.36's server (installed by `scripts/setup.sh
//! --test-deps`) serving the kit's SmolLM2-135M GGUF. One server is started
//! lazily and shared by every test in this binary; tests that need a server
//! of their own (an API key, one to kill) start a second one.

mod common;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::llm_server::{free_port, shared_server, LlmServer, ALIAS};
use folio_engine::config::default_models_dir;
use folio_engine::llm::settings::SMOLLM2;
use folio_engine::llm::verdict::{verdict, verdict_schema};
use folio_engine::llm::{
    ApiKey, Backend, ChatMessage, ChatRequest, Completion, FinishReason, GenerateOptions, Llm,
    LlmError, LlmSettings, OpenAiLlm, Result, Shaping, TokenSink, Usage,
};
use tokio_util::sync::CancellationToken;

fn settings(base_url: &str, model: &str) -> LlmSettings {
    LlmSettings {
        backend: Backend::Openai,
        model: model.to_string(),
        base_url: base_url.to_string(),
        context_size: 2048,
        ..LlmSettings::default()
    }
}

async fn connect_shared() -> OpenAiLlm {
    OpenAiLlm::connect(&settings(shared_server(), ALIAS))
        .await
        .expect("connect to the shared server")
}

fn greedy(max_tokens: u32) -> GenerateOptions {
    GenerateOptions {
        max_tokens,
        temperature: 0.0,
        timeout: Duration::from_secs(60),
        ..GenerateOptions::default()
    }
}

async fn ask(
    llm: &OpenAiLlm,
    question: &str,
    options: &GenerateOptions,
    on_token: Option<TokenSink<'_>>,
) -> Result<Completion> {
    let messages = [ChatMessage::user(question)];
    llm.chat(ChatRequest {
        messages: &messages,
        options,
        on_token,
        cancel: &CancellationToken::new(),
    })
    .await
}

#[tokio::test]
async fn connects_and_answers() {
    let llm = connect_shared().await;
    let info = llm.info();
    assert_eq!(
        (info.backend, info.model.as_str(), info.context_size),
        (Backend::Openai, ALIAS, 2048)
    );
    assert!(llm.capabilities().streaming);

    let completion = ask(&llm, "What is the capital of France?", &greedy(24), None)
        .await
        .unwrap();
    assert!(!completion.text.trim().is_empty(), "{completion:?}");
    // llama-cpp-python 0.3.36 ignores `stream_options.include_usage` and sends
    // no usage chunk, so the counts are "not reported" rather than guessed.
    assert_eq!(completion.usage, Usage::default());
    assert_eq!(completion.logprobs, None);
}

#[tokio::test]
async fn streamed_pieces_make_up_the_text_in_order() {
    let llm = connect_shared().await;
    let pieces = Mutex::new(Vec::new());
    let sink: TokenSink = &|piece| pieces.lock().unwrap().push(piece.to_string());
    let completion = ask(&llm, "Name three colours.", &greedy(16), Some(sink))
        .await
        .unwrap();
    let pieces = pieces.into_inner().unwrap();
    assert!(pieces.len() > 1, "{pieces:?}");
    assert_eq!(pieces.concat(), completion.text);
}

#[tokio::test]
async fn small_max_tokens_cuts_the_answer_off() {
    let llm = connect_shared().await;
    let completion = ask(&llm, "Write a long story about a cat.", &greedy(3), None)
        .await
        .unwrap();
    assert_eq!(completion.finish, FinishReason::Length);
    assert!(!completion.text.is_empty());
}

#[tokio::test]
async fn logprobs_come_one_per_generated_token() {
    let llm = connect_shared().await;
    let options = GenerateOptions {
        logprobs: true,
        ..greedy(6)
    };
    let completion = ask(&llm, "Write a long story about a cat.", &options, None)
        .await
        .unwrap();
    // Cut off at max_tokens, so exactly six tokens were generated.
    assert_eq!(completion.finish, FinishReason::Length);
    let logprobs = completion
        .logprobs
        .expect("llama-cpp-python streams logprobs when top_logprobs is sent");
    assert_eq!(logprobs.len(), 6, "{logprobs:?}");
    assert!(
        logprobs
            .iter()
            .all(|t| t.logprob <= 0.0 && t.logprob.is_finite()),
        "{logprobs:?}"
    );
    let tokens: String = logprobs.iter().map(|t| t.token.as_str()).collect();
    assert_eq!(tokens, completion.text);
    assert!(llm.capabilities().logprobs);
}

#[tokio::test]
async fn unknown_model_names_the_served_one() {
    let base_url = shared_server();
    // A natural mistake: the file path, while the server lists its alias.
    let path = default_models_dir()
        .join(SMOLLM2.file)
        .display()
        .to_string();
    match OpenAiLlm::connect(&settings(base_url, &path)).await {
        Err(LlmError::ModelNotFound {
            url,
            model,
            available,
        }) => {
            assert_eq!(url, base_url);
            assert_eq!(model, path);
            assert_eq!(available, vec![ALIAS.to_string()]);
        }
        Err(other) => panic!("expected ModelNotFound, got {other}"),
        Ok(_) => panic!("expected ModelNotFound, got a connection"),
    }
}

#[tokio::test]
async fn the_served_models_are_listed_to_pick_from() {
    let base_url = shared_server();
    let served = OpenAiLlm::served(&settings(base_url, "not-a-served-model"))
        .await
        .expect("list the served models");
    assert_eq!(served, vec![ALIAS.to_string()]);

    let data = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_folio"))
        .arg("--data-dir")
        .arg(data.path())
        .arg("models")
        .env("FOLIO_CONFIG", "/dev/null")
        .env("FOLIO_LLM_BACKEND", "openai")
        .env("FOLIO_LLM_BASE_URL", base_url)
        .env("FOLIO_LLM_MODEL", ALIAS)
        .output()
        .expect("run folio models");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("served        {ALIAS} (configured)")),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `folio models calibrate` against the real server: its log-probabilities
/// separate the probe set's answers as well as the issue asks (80%), and
/// the threshold is stored under the served model at that address.
#[tokio::test]
async fn the_served_model_is_calibrated_from_its_log_probabilities() {
    let base_url = shared_server();
    let data = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_folio"))
        .arg("--data-dir")
        .arg(data.path())
        .args(["--json", "models", "calibrate"])
        .env("FOLIO_CONFIG", "/dev/null")
        .env("FOLIO_LLM_BACKEND", "openai")
        .env("FOLIO_LLM_BASE_URL", base_url)
        .env("FOLIO_LLM_MODEL", ALIAS)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run folio models calibrate");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let measured: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let accuracy = measured["accuracy"].as_f64().unwrap();
    assert!(accuracy >= 0.8, "{measured}");
    assert_eq!(measured["known"].as_array().unwrap().len(), 20);
    let stored = std::fs::read_to_string(data.path().join("calibrations.json")).unwrap();
    assert!(
        stored.contains(&format!("openai {ALIAS} at {base_url}")),
        "{stored}"
    );
    assert!(
        stderr.contains("answer 40 of 40"),
        "progress is shown: {stderr}"
    );
}

/// llama-cpp-python 0.3 honours a JSON schema only in the `json_object`
/// form; the probe finds that, and a shaped reply comes back as the text
/// the method's grammar describes.
#[tokio::test]
async fn a_json_schema_holds_the_reply_in_the_form_the_server_takes() {
    let llm = connect_shared().await;
    let support = llm.support().await.expect("probe the server");
    assert_eq!(
        support.shapes.as_deref(),
        Some("json_object"),
        "{support:?}"
    );
    assert!(support.logprobs, "{support:?}");
    assert!(
        !support.usage,
        "llama-cpp-python reports no counts while streaming"
    );
    let options = GenerateOptions {
        schema: Some(verdict_schema()),
        ..greedy(48)
    };
    let reply = ask(&llm, "Is the sky green? Say why.", &options, None)
        .await
        .expect("a shaped reply");
    assert_eq!(reply.shaping, Some(Shaping::Schema), "{reply:?}");
    assert!(verdict(&reply.text).is_some(), "{reply:?}");
    let free = ask(&llm, "Say OK.", &greedy(4), None).await.unwrap();
    assert_eq!(free.shaping, None, "nothing shaped when no shape is asked");
}

/// A method over the real server: RDR²'s routing replies are held to their
/// JSON schema, every routing call records that, and `folio models` says
/// which form the server takes.
#[test]
fn a_method_over_the_server_has_its_replies_held_and_says_so() {
    let base_url = shared_server();
    let root = tempfile::tempdir().unwrap();
    let corpus = root.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    std::fs::write(
        corpus.join("park.md"),
        "# Seaside Park\n\n## Rides\n\n### Coasters\n\nThe Titan coaster is 245 feet tall.\n\n\
         ### Towers\n\nThe SkyScreamer swing ride is 400 feet tall.\n\n## History\n\nThe park opened in 1961.\n",
    )
    .unwrap();
    let config = root.path().join("folio.toml");
    std::fs::write(
        &config,
        format!("[llm]\nbackend = \"openai\"\nbase_url = \"{base_url}\"\nmodel = \"{ALIAS}\"\ncontext_size = 2048\n"),
    )
    .unwrap();
    let folio = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_folio"))
            .arg("--data-dir")
            .arg(root.path().join("data"))
            .args(args)
            .env("FOLIO_CONFIG", &config)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run folio")
    };
    let added = folio(&["add", corpus.to_str().unwrap()]);
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let asked = folio(&[
        "--json",
        "ask",
        "How tall is the SkyScreamer swing ride?",
        "--method",
        "rdr2",
        "--max-tokens",
        "96",
        "-k",
        "2",
    ]);
    assert!(
        asked.status.success(),
        "{}",
        String::from_utf8_lossy(&asked.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&asked.stdout).unwrap();
    let calls = result["calls"].as_array().unwrap();
    let routes: Vec<&serde_json::Value> = calls.iter().filter(|c| c["step"] == "route").collect();
    assert!(!routes.is_empty(), "{result}");
    for call in routes {
        assert_eq!(call["shaping"], "schema", "{call}");
    }
    let steps = &result["run"]["trace"]["routes"][0]["steps"];
    assert!(
        steps
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["ignored"].as_array().unwrap().is_empty()),
        "a held reply leaves nothing to ignore: {steps}"
    );
    let models = folio(&["models"]);
    let shown = String::from_utf8_lossy(&models.stdout);
    assert!(
        shown.contains("reply shapes  JSON schema (response_format json_object)"),
        "{shown}"
    );
}

/// llama-cpp-python cuts a stream short when a second request arrives
/// ("the stream ended without saying why"): RDR²'s routes, asked at once,
/// all failed that way. The backend sends one request at a time unless
/// `parallel` says the server takes more, so requests made at once finish.
#[tokio::test]
async fn requests_made_at_once_reach_the_server_one_at_a_time() {
    let llm = connect_shared().await;
    let options = greedy(24);
    let replies = futures::future::join_all(
        ["Name a colour.", "Name a fruit.", "Name a city."]
            .map(|question| ask(&llm, question, &options, None)),
    )
    .await;
    for reply in replies {
        let reply = reply.expect("every request finishes");
        assert!(!reply.text.is_empty(), "{reply:?}");
    }
}

/// llama-cpp-python, as shipped, cuts a stream short when a second request
/// arrives ("the stream ended without saying why"): RDR²'s routes, asked at
/// once, all failed that way. The backend sends one request at a time
/// unless `parallel` says the server takes more, so requests made at once
/// all finish.
#[tokio::test]
async fn requests_made_at_once_reach_a_server_that_interrupts_one_at_a_time() {
    let server = LlmServer::start_as_shipped();
    let llm = OpenAiLlm::connect(&settings(&server.base_url(), ALIAS))
        .await
        .expect("connect");
    let options = greedy(48);
    let later = |i: u64, question: &'static str| {
        let (llm, options) = (&llm, &options);
        async move {
            tokio::time::sleep(Duration::from_millis(200 * i)).await;
            ask(llm, question, options, None).await
        }
    };
    let replies = futures::future::join_all([
        later(0, "Write a long story about a colour."),
        later(1, "Write a long story about a fruit."),
        later(2, "Write a long story about a city."),
    ])
    .await;
    for reply in replies {
        let reply = reply.expect("every request finishes");
        assert!(!reply.text.is_empty(), "{reply:?}");
    }
}

#[tokio::test]
async fn nothing_listening_is_server_down_after_quick_retries() {
    let base_url = format!("http://127.0.0.1:{}/v1", free_port());
    let started = Instant::now();
    let outcome = OpenAiLlm::connect(&settings(&base_url, ALIAS)).await;
    let elapsed = started.elapsed();
    match outcome {
        Err(error @ LlmError::ServerDown { .. }) => {
            let message = error.to_string();
            assert!(
                message.contains(&base_url)
                    && message.contains("refused")
                    && message.contains("base_url"),
                "{message}"
            );
        }
        Err(other) => panic!("expected ServerDown, got {other}"),
        Ok(_) => panic!("expected ServerDown, got a connection"),
    }
    // Three retries after 0.5 s, 1 s and 2 s.
    assert!(
        elapsed >= Duration::from_millis(3500) && elapsed < Duration::from_secs(10),
        "{elapsed:?}"
    );
}

#[tokio::test]
async fn cancelling_mid_stream_stops_the_call() {
    let llm = connect_shared().await;
    let cancel = CancellationToken::new();
    let pieces = Mutex::new(0usize);
    let sink: TokenSink = &|_| {
        *pieces.lock().unwrap() += 1;
        cancel.cancel();
    };
    let messages = [ChatMessage::user("Write a long story about a cat.")];
    let options = greedy(400);
    let outcome = llm
        .chat(ChatRequest {
            messages: &messages,
            options: &options,
            on_token: Some(sink),
            cancel: &cancel,
        })
        .await;
    assert!(matches!(outcome, Err(LlmError::Cancelled)), "{outcome:?}");
    assert_eq!(
        pieces.into_inner().unwrap(),
        1,
        "pieces arrived after the cancel"
    );
    // The server noticed the closed stream and is free for the next call.
    let completion = ask(&llm, "Say hi.", &greedy(4), None).await.unwrap();
    assert!(!completion.text.is_empty());
}

#[tokio::test]
async fn a_tiny_timeout_times_out() {
    let llm = connect_shared().await;
    let options = GenerateOptions {
        timeout: Duration::from_millis(200),
        ..greedy(500)
    };
    let started = Instant::now();
    let outcome = ask(&llm, "Write a long story about a cat.", &options, None).await;
    assert!(
        matches!(outcome, Err(LlmError::Timeout(limit)) if limit == Duration::from_millis(200)),
        "{outcome:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_prompt_longer_than_the_context_is_an_empty_stream() {
    // llama-cpp-python answers a streaming request whose prompt exceeds
    // n_ctx with 200 and an empty body (the 400 it gives without streaming
    // never reaches the client), so the backend can only say so.
    let llm = connect_shared().await;
    let outcome = ask(&llm, &"hello world ".repeat(1500), &greedy(4), None).await;
    match outcome {
        Err(LlmError::Protocol(message)) => {
            assert!(message.contains("without sending anything"), "{message}")
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[tokio::test]
async fn api_key_is_sent_and_a_server_gone_after_connect_is_server_down() {
    let server = LlmServer::start(Some("s3cret"));
    let base_url = server.base_url();

    match OpenAiLlm::connect(&settings(&base_url, ALIAS)).await {
        Err(LlmError::Http { status, message }) => {
            assert_eq!((status, message.as_str()), (401, "Invalid API key"))
        }
        Err(other) => panic!("expected 401, got {other}"),
        Ok(_) => panic!("connected without the API key"),
    }

    let keyed = LlmSettings {
        api_key: Some(ApiKey::new("s3cret")),
        ..settings(&base_url, ALIAS)
    };
    let llm = OpenAiLlm::connect(&keyed)
        .await
        .expect("connect with the API key");
    assert!(!ask(&llm, "Say hi.", &greedy(4), None)
        .await
        .unwrap()
        .text
        .is_empty());

    drop(server);
    let started = Instant::now();
    let outcome = ask(&llm, "Say hi.", &greedy(4), None).await;
    assert!(
        matches!(&outcome, Err(LlmError::ServerDown { url, .. }) if *url == base_url),
        "{outcome:?}"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(3500),
        "no retries: {:?}",
        started.elapsed()
    );
}
