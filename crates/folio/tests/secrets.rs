//! An API key given to Folio reaches the server that asks for it and
//! nothing else: not what any command prints (answers, errors, `models`,
//! `status`, `show`), not an exported run, not a stored trace, not a byte
//! of any file in the data folder (the SQLite database and its WAL
//! included). The server is llama-cpp-python started with `--api_key`, so a
//! run that succeeds proves the key was sent; a second, hostile server
//! quotes every request it gets back in its error, so the key is in the
//! reply yet must not come out of Folio.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use common::engine::folio_with_config;
use common::llm_server::{models_answer, LlmServer, ALIAS};

const KEY: &str = "sk-folio-test-SECRET-1234";
/// The key's distinctive end, to catch a key that leaks cut short.
const KEY_TAIL: &str = "SECRET-1234";

/// Everything Folio produced that a person or another program could read.
#[derive(Default)]
struct Produced {
    items: Vec<(String, Vec<u8>)>,
}

impl Produced {
    fn add(&mut self, what: impl Into<String>, bytes: Vec<u8>) {
        self.items.push((what.into(), bytes));
    }

    /// Runs the CLI and keeps what it printed; returns stdout.
    fn folio(&mut self, data: &Path, config: &Path, args: &[&str]) -> Output {
        let out = folio_with_config(data, Some(config), args);
        self.add(format!("stdout of folio {args:?}"), out.stdout.clone());
        self.add(format!("stderr of folio {args:?}"), out.stderr.clone());
        out
    }

    fn assert_no_key(&self) {
        assert!(!self.items.is_empty());
        for (what, bytes) in &self.items {
            for needle in [KEY, KEY_TAIL] {
                assert!(
                    !bytes
                        .windows(needle.len())
                        .any(|window| window == needle.as_bytes()),
                    "{what} holds the API key ({needle})"
                );
            }
        }
    }
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|entry| entry.unwrap())
        .filter(|entry| entry.file_type().is_file())
        .map(|entry| entry.into_path())
        .collect()
}

fn write_config(path: &Path, base_url: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        format!(
            "[llm]\nbackend = \"openai\"\nbase_url = \"{base_url}\"\nmodel = \"{ALIAS}\"\n\
             api_key = \"{KEY}\"\ncontext_size = 2048\ntemperature = 0.0\nmax_tokens = 96\n"
        ),
    )
    .unwrap();
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A server that refuses every request with 401 and quotes the request,
/// headers and all, in its error message; returns its base URL and the
/// requests it received.
fn echoing_server() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut buffer = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buffer[..n]),
                }
            }
            let request = String::from_utf8_lossy(&request).into_owned();
            let body =
                serde_json::json!({ "error": { "message": format!("rejected:\n{request}") } })
                    .to_string();
            record.lock().unwrap().push(request);
            let _ = write!(
                stream,
                "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (base_url, seen)
}

#[test]
fn the_api_key_is_sent_to_the_server_and_kept_nowhere_else() {
    let server = LlmServer::start(Some(KEY));
    assert!(
        !models_answer(server.port(), None),
        "the server must refuse requests without the key"
    );
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let corpus = root.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    std::fs::write(
        corpus.join("otters.md"),
        "# Otters\n\nSea otters hold hands while they sleep so that they do not drift apart.\n\n\
         ## Food\n\nThey eat sea urchins, crabs and clams, and use stones as tools to open shells.\n",
    )
    .unwrap();
    // folio.toml is where the person put the key: the one file allowed to hold it.
    let config = root.path().join("config/folio.toml");
    write_config(&config, &server.base_url());
    let mut produced = Produced::default();

    json(&produced.folio(&data, &config, &["--json", "add", corpus.to_str().unwrap()]));
    let mut runs = Vec::new();
    for method in ["vanilla-rag", "activerag"] {
        let asked = json(&produced.folio(
            &data,
            &config,
            &[
                "--json",
                "ask",
                "Why do otters hold hands?",
                "--method",
                method,
            ],
        ));
        let run = &asked["run"];
        assert_eq!(run["status"], "done", "the server accepted the key: {run}");
        assert!(run["trace"].is_object(), "{run}");
        runs.push(run["id"].as_i64().unwrap().to_string());
    }
    let exported = root.path().join("exported/answer.md");
    std::fs::create_dir(exported.parent().unwrap()).unwrap();
    let out = produced.folio(
        &data,
        &config,
        &["export", &runs[0], "-o", exported.to_str().unwrap()],
    );
    assert!(out.status.success());
    produced.add("the exported run", std::fs::read(&exported).unwrap());
    let models = json(&produced.folio(&data, &config, &["--json", "models"]));
    assert_eq!(models["llm"]["settings"]["api_key"], "(set)");
    assert!(models["llm"]["error"].is_null(), "{models}");
    for args in [
        &["models"][..],
        &["status"],
        &["--json", "status"],
        &["runs"],
        &["--json", "runs"],
        &["methods"],
    ] {
        produced.folio(&data, &config, args);
    }
    for id in &runs {
        let shown = json(&produced.folio(&data, &config, &["--json", "show", id]));
        produced.add(
            format!("the trace of run {id}"),
            shown["run"]["trace"].to_string().into_bytes(),
        );
        produced.folio(&data, &config, &["show", id]);
    }

    // A server that quotes the key back: the failed run's error, the CLI's
    // messages and `models` must not repeat it.
    let (echo_url, seen) = echoing_server();
    let echo_config = root.path().join("echo/folio.toml");
    write_config(&echo_config, &echo_url);
    let failed = produced.folio(
        &data,
        &echo_config,
        &[
            "--json",
            "ask",
            "Why do otters hold hands?",
            "--method",
            "llm-only",
        ],
    );
    let models = produced.folio(&data, &echo_config, &["models"]);
    for out in [&failed, &models] {
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !out.status.success() && printed.contains("401"),
            "{printed}"
        );
    }
    assert!(
        seen.lock().unwrap().iter().any(|r| r.contains(KEY)),
        "the echoing server got the key, so its replies quoted it"
    );

    let files = files_under(&data);
    assert!(
        files.iter().any(|f| f.ends_with("folio.sqlite")),
        "{files:?}"
    );
    for file in files {
        produced.add(file.display().to_string(), std::fs::read(&file).unwrap());
    }
    produced.assert_no_key();
}
