//! A `folio serve` for the server's tests (serve.rs, serve_load.rs): the
//! real binary on a small library of rust-book chapters, its address read
//! from its first line and its token from `folio serve --show-token`.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::engine::{folio, rust_book, tiny_model};

/// A `folio serve` on a library of three rust-book chapters.
pub struct Server {
    child: Child,
    pub addr: String,
    pub token: String,
    pub data: tempfile::TempDir,
    docs: tempfile::TempDir,
}

/// How many threads the served model computes on.
#[derive(Clone, Copy)]
pub enum ModelThreads {
    /// As shipped: one per core. For a test that has the machine to itself.
    AllCores,
    /// One, for a test that runs beside another test's model: two models
    /// spinning two threads each on a two-core machine slow each other down
    /// many times over.
    One,
}

impl Server {
    pub fn start(threads: ModelThreads) -> Server {
        let data = tempfile::tempdir().unwrap();
        let docs = tempfile::tempdir().unwrap();
        for chapter in [
            "ch03-01-variables-and-mutability.md",
            "ch04-01-what-is-ownership.md",
            "ch15-01-box.md",
        ] {
            std::fs::copy(rust_book().join(chapter), docs.path().join(chapter)).unwrap();
        }
        let docs_path = docs.path().to_str().unwrap().to_string();
        succeeded(&folio(data.path(), &["add", &docs_path]));
        let log = data.path().join("serve.log");
        let mut command = serve_command(data.path(), &["--addr", "127.0.0.1:0"]);
        if let ModelThreads::One = threads {
            command.env("FOLIO_LLM_THREADS", "1");
        }
        let child = command
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        let addr = loop {
            let first = std::fs::read_to_string(&log).unwrap_or_default();
            if let Some(line) = first.lines().next() {
                let serving: Value = serde_json::from_str(line).expect("the address as JSON");
                break serving["serving"].as_str().unwrap().to_string();
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "folio serve did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let shown = folio(data.path(), &["serve", "--show-token"]);
        succeeded(&shown);
        let token = String::from_utf8(shown.stdout).unwrap().trim().to_string();
        Server {
            child,
            addr,
            token,
            data,
            docs,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn docs(&self) -> String {
        std::fs::canonicalize(self.docs.path())
            .unwrap()
            .display()
            .to_string()
    }

    /// A request with the token, its status and JSON reply.
    pub async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let client = reqwest::Client::new();
        let mut request = client
            .request(method.parse().unwrap(), self.url(path))
            .bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let reply = request.send().await.unwrap();
        let status = reply.status().as_u16();
        (status, reply.json().await.unwrap_or(Value::Null))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn serve_command(data_dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_folio"));
    // A folio.toml of the test's own, empty, which `POST /api/models/use`
    // writes.
    let config = data_dir.join("folio.toml");
    if !config.exists() {
        std::fs::write(&config, "").unwrap();
    }
    command
        .env("FOLIO_CONFIG", &config)
        .env("FOLIO_LLM_MODEL", tiny_model())
        .arg("--json")
        .arg("--data-dir")
        .arg(data_dir)
        .arg("serve")
        .args(args)
        .stdin(Stdio::null());
    command
}

pub fn succeeded(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
