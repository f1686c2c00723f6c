//! The OpenAI-compatible backend against a real third-party server:
//! llama-cpp-python 0.3.36's server (installed by `scripts/setup.sh
//! --test-deps`) serving the kit's SmolLM2-135M GGUF. One server is started
//! lazily and shared by every test in this binary; tests that need a server
//! of their own (an API key, one to kill) start a second one.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use folio::config::default_models_dir;
use folio::llm::settings::KIT_MODEL;
use folio::llm::{
    Backend, ChatMessage, ChatRequest, Completion, FinishReason, GenerateOptions, Llm, LlmError,
    LlmSettings, OpenAiLlm, Result, TokenSink, Usage,
};
use tokio_util::sync::CancellationToken;

/// The name the server is told to list the model under; what a user would
/// put in `folio.toml`.
const ALIAS: &str = "smollm2-135m-instruct";
const STARTUP_DEADLINE: Duration = Duration::from_secs(90);

/// A llama-cpp-python server process, killed when dropped.
struct LlmServer {
    child: Child,
    port: u16,
    api_key: Option<String>,
    log: tempfile::NamedTempFile,
}

impl LlmServer {
    fn start(api_key: Option<&str>) -> LlmServer {
        let python = server_python();
        let model = default_models_dir().join(KIT_MODEL);
        assert!(
            model.is_file(),
            "{} is missing; run scripts/setup.sh to fetch the model kit",
            model.display()
        );
        let port = free_port();
        let log = tempfile::NamedTempFile::new().expect("temp file for the server log");
        // The server is told to die with the thread that started it (Linux
        // PR_SET_PDEATHSIG), so no python process outlives this test binary,
        // not even when the binary itself is killed.
        let launcher = "import ctypes, os, runpy, signal, sys\n\
                        try:\n    ctypes.CDLL('libc.so.6').prctl(1, signal.SIGKILL)\nexcept OSError:\n    pass\n\
                        if os.getppid() != int(sys.argv[1]):\n    sys.exit('the test binary is gone')\n\
                        sys.argv = ['llama_cpp.server'] + sys.argv[2:]\n\
                        runpy.run_module('llama_cpp.server', run_name='__main__', alter_sys=True)\n";
        let mut command = Command::new(&python);
        command
            .arg("-c")
            .arg(launcher)
            .arg(std::process::id().to_string())
            .args([
                "--model",
                &model.display().to_string(),
                "--model_alias",
                ALIAS,
            ])
            .args([
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--n_ctx",
                "2048",
                "--verbose",
                "False",
            ])
            // Queue concurrent tests' requests instead of cutting the running
            // stream short, which is this server's default.
            .args(["--interrupt_requests", "False"])
            .stdin(Stdio::null())
            .stdout(log.reopen().expect("server log"))
            .stderr(log.reopen().expect("server log"));
        if let Some(key) = api_key {
            command.args(["--api_key", key]);
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", python.display()));
        let mut server = LlmServer {
            child,
            port,
            api_key: api_key.map(str::to_string),
            log,
        };
        server.wait_until_ready();
        server
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn wait_until_ready(&mut self) {
        let started = Instant::now();
        while started.elapsed() < STARTUP_DEADLINE {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "the llama-cpp-python server exited ({status}) before answering:\n{}",
                    self.log_text()
                );
            }
            if models_answer(self.port, self.api_key.as_deref()) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the llama-cpp-python server did not answer GET /v1/models within {STARTUP_DEADLINE:?}:\n{}", self.log_text());
    }

    fn log_text(&self) -> String {
        let mut text = String::new();
        self.log
            .reopen()
            .and_then(|mut file| file.read_to_string(&mut text))
            .map(|_| text)
            .unwrap_or_else(|e| format!("(log unreadable: {e})"))
    }
}

impl Drop for LlmServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn server_python() -> PathBuf {
    let python = std::env::var_os("FOLIO_LLM_SERVER_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv-llm-server/bin/python")
        });
    assert!(
        python.is_file(),
        "no Python with llama-cpp-python's server at {}: run `scripts/setup.sh --test-deps` (or point FOLIO_LLM_SERVER_PYTHON at one)",
        python.display()
    );
    python
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}

/// A plain HTTP probe, so readiness does not depend on the code under test.
fn models_answer(port: u16, api_key: Option<&str>) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let authorization = api_key
        .map(|key| format!("Authorization: Bearer {key}\r\n"))
        .unwrap_or_default();
    let request = format!("GET /v1/models HTTP/1.0\r\nHost: 127.0.0.1\r\n{authorization}\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply.starts_with("HTTP/1.1 200") || reply.starts_with("HTTP/1.0 200")
}

/// The shared server's base URL. Its owner thread never ends, so the server
/// lives as long as the test binary and dies with it (see `LlmServer::start`).
fn shared_server() -> &'static str {
    static BASE_URL: OnceLock<String> = OnceLock::new();
    BASE_URL.get_or_init(|| {
        let (ready, base_url) = mpsc::channel();
        std::thread::spawn(move || {
            let server = LlmServer::start(None);
            let _ = ready.send(server.base_url());
            loop {
                std::thread::park();
            }
        });
        base_url
            .recv()
            .expect("the shared llama-cpp-python server did not start (see the panic above)")
    })
}

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
    let path = default_models_dir().join(KIT_MODEL).display().to_string();
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
        api_key: Some("s3cret".to_string()),
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
