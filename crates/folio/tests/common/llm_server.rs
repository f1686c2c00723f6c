//! A real OpenAI-compatible server for tests: llama-cpp-python 0.3.36's
//! server (installed by `scripts/setup.sh --test-deps`) serving the kit's
//! SmolLM2-135M GGUF, optionally requiring an API key, or serving
//! `/v1/embeddings` instead of chat.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

use folio_engine::config::default_models_dir;
use folio_engine::llm::settings::SMOLLM2;

/// The name the server is told to list the model under; what a user would
/// put in `folio.toml`.
pub const ALIAS: &str = "smollm2-135m-instruct";
const STARTUP_DEADLINE: Duration = Duration::from_secs(90);

/// A llama-cpp-python server process, killed when dropped.
pub struct LlmServer {
    child: Child,
    port: u16,
    api_key: Option<String>,
    log: tempfile::NamedTempFile,
}

impl LlmServer {
    /// A server that queues concurrent requests (see `start_as_shipped`).
    pub fn start(api_key: Option<&str>) -> LlmServer {
        Self::launch(api_key, false, false)
    }

    /// A server with embeddings on (`--embedding True`), answering
    /// `/v1/embeddings` with one vector per token, since llama-cpp-python
    /// names no pooling for a chat model's GGUF (Folio pools them).
    pub fn start_embeddings() -> LlmServer {
        Self::launch(None, false, true)
    }

    /// A server with llama-cpp-python's own default, which cuts the running
    /// stream short when another request arrives: what a user who starts
    /// one without flags talks to.
    pub fn start_as_shipped() -> LlmServer {
        Self::launch(None, true, false)
    }

    fn launch(api_key: Option<&str>, interrupts: bool, embeddings: bool) -> LlmServer {
        let python = server_python();
        let model = default_models_dir().join(SMOLLM2.file);
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
            .args([
                "--interrupt_requests",
                if interrupts { "True" } else { "False" },
            ])
            .stdin(Stdio::null())
            .stdout(log.reopen().expect("server log"))
            .stderr(log.reopen().expect("server log"));
        if let Some(key) = api_key {
            command.args(["--api_key", key]);
        }
        if embeddings {
            command.args(["--embedding", "True"]);
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

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn base_url(&self) -> String {
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
        .unwrap_or_else(|| folio_engine::config::checkout().join(".venv-llm-server/bin/python"));
    assert!(
        python.is_file(),
        "no Python with llama-cpp-python's server at {}: run `scripts/setup.sh --test-deps` (or point FOLIO_LLM_SERVER_PYTHON at one)",
        python.display()
    );
    python
}

pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}

/// A plain HTTP probe, so readiness does not depend on the code under test.
pub fn models_answer(port: u16, api_key: Option<&str>) -> bool {
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
pub fn shared_server() -> &'static str {
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
