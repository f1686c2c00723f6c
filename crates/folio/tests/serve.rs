//! `folio serve` and `folio mcp` with real clients: raw sockets for what a
//! hostile client does (no token, a wrong one, a forged Host, a body over
//! the limit, paths in place of ids, a client too slow to send its
//! headers), OpenAI's own Python client for the methods as models (a
//! streamed answer and its follow-up), the official MCP Python SDK over
//! stdio and over streamable HTTP, and a walk over every operation
//! `/openapi.json` describes, each reply checked against the document's
//! schema.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::engine::tiny_model;
use common::served::{serve_command, ModelThreads, Server};
use serde_json::{json, Value};

const QUESTION: &str = "How do I make a variable mutable?";

/// The OpenAPI walk is this binary's longest test by far (it calibrates
/// the model, among everything else) and starts first, so its server has
/// every core; the tests that run beside it, one after another, give their
/// models one thread.
const BESIDE_THE_WALK: ModelThreads = ModelThreads::One;

/// A small evaluation: two questions and the passages that answer them.
const EVAL_QUESTIONS: &str = r#"{"id": "q1", "question": "Which keyword makes a Rust variable mutable?", "answers": ["mut"]}
{"id": "q2", "question": "What does Box<T> store on the heap?", "answers": ["data", "a value"]}
"#;
const EVAL_CORPUS: &str = r#"{"id": "p1", "title": "Mutability", "text": "Variables are immutable by default. Adding mut in front of the variable name makes it mutable."}
{"id": "p2", "title": "Box", "text": "A Box<T> stores its data on the heap; what remains on the stack is the pointer to the heap data."}
{"id": "p3", "title": "Ownership", "text": "Each value in Rust has an owner, and there can only be one owner at a time."}
"#;

/// Evaluation `name` once its job has ended, with its report.
async fn wait_for_evaluation(server: &Server, name: &str) -> Value {
    let started = Instant::now();
    loop {
        let (status, view) = server
            .call("GET", &format!("/api/evaluations/{name}"), None)
            .await;
        assert_eq!(status, 200, "{view}");
        match view["job"]["state"].as_str() {
            Some("done") => return view,
            Some("failed" | "cancelled") => panic!("the evaluation ended: {view}"),
            _ => {}
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "the evaluation did not end: {view}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
const FOLLOW_UP: &str = "Why is that not the default?";

/// What the server answers to `request`, sent as raw bytes: the way to
/// send what a well-behaved client library would not.
fn raw(addr: &str, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream.write_all(request).unwrap();
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    String::from_utf8_lossy(&reply).into_owned()
}

fn status_of(reply: &str) -> u16 {
    reply
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// The `code` of a refusal's JSON body.
fn error_code(reply: &str) -> String {
    let body = reply.split("\r\n\r\n").nth(1).unwrap_or_default();
    let body: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    body["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn python(venv: &str) -> PathBuf {
    let python = folio_engine::config::checkout()
        .join(venv)
        .join("bin/python");
    assert!(
        python.is_file(),
        "no {} with the API clients: run `scripts/setup.sh --test-deps`",
        python.display()
    );
    python
}

fn client_script(name: &str, args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(name);
    let out = Command::new(python(".venv-clients"))
        // What `folio mcp` answers with, when the client spawns it: beside
        // the walk, on one thread.
        .env("FOLIO_CONFIG", "/dev/null")
        .env("FOLIO_LLM_MODEL", tiny_model())
        .env("FOLIO_LLM_THREADS", "1")
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Value::Array(lines)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_server_refuses_a_missing_or_wrong_token_a_forged_host_big_bodies_and_paths() {
    let server = Server::start(BESIDE_THE_WALK);
    let addr = server.addr.as_str();
    let get = |host: &str, auth: &str| {
        format!("GET /api/status HTTP/1.1\r\nHost: {host}\r\n{auth}Connection: close\r\n\r\n")
    };
    let bearer = format!("Authorization: Bearer {}\r\n", server.token);

    let reply = raw(addr, get(addr, &bearer).as_bytes());
    assert_eq!(status_of(&reply), 200, "{reply}");
    let reply = raw(addr, get(addr, "").as_bytes());
    assert_eq!(
        (status_of(&reply), error_code(&reply).as_str()),
        (401, "unauthorized")
    );
    assert!(reply.contains("www-authenticate: Bearer"), "{reply}");
    let wrong = format!("Authorization: Bearer {}0\r\n", server.token);
    assert_eq!(status_of(&raw(addr, get(addr, &wrong).as_bytes())), 401);
    // DNS rebinding: a page on evil.example resolves its name to 127.0.0.1
    // and its script sends the token-less request with its own Host.
    let port = addr.rsplit(':').next().unwrap();
    for host in [
        format!("evil.example:{port}"),
        "127.0.0.1:1".to_string(),
        String::new(),
    ] {
        let reply = raw(addr, get(&host, &bearer).as_bytes());
        assert_eq!(
            (status_of(&reply), error_code(&reply).as_str()),
            (403, "host_refused"),
            "{host}"
        );
    }
    assert_eq!(
        status_of(&raw(
            addr,
            get(&format!("localhost:{port}"), &bearer).as_bytes()
        )),
        200
    );

    // A body over the limit.
    let big = format!("{{\"query\": \"{}\"}}", "x".repeat(2 << 20));
    let (status, body) = server
        .call(
            "POST",
            "/api/search",
            Some(serde_json::from_str(&big).unwrap()),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (413, Some("too_large"))
    );

    // Documents are named by id; a path is no id, and a folder outside the
    // library lists nothing.
    for path in [
        "/api/documents/..%2F..%2F..%2Fetc%2Fpasswd",
        "/api/documents/%2Fetc%2Fpasswd",
        "/api/passages/..%2Fserve.log",
    ] {
        let (status, body) = server.call("GET", path, None).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (400, Some("bad_request")),
            "{path}"
        );
    }
    let (status, _) = server
        .call("GET", "/api/documents/../../etc/passwd", None)
        .await;
    assert_eq!(status, 404);
    let (status, body) = server.call("GET", "/api/documents?folder=/etc", None).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_found")),
        "{body}"
    );
    let (status, _) = server.call("GET", "/api/passages/999999", None).await;
    assert_eq!(status, 404);
    // The routes that take a name never take a path: a retry reads only
    // files of watched folders, an evaluation's name is no folder, and a
    // model is one the server lists.
    let refused = [
        ("POST", "/api/retry", json!({"paths": ["/etc/passwd"]})),
        (
            "POST",
            "/api/retry",
            json!({"paths": [format!("{}/../../etc/passwd", server.docs())]}),
        ),
        (
            "POST",
            "/api/evaluations",
            json!({"name": "../evil", "dataset": "", "corpus": "", "methods": ["llm-only"]}),
        ),
        (
            "POST",
            "/api/evaluations",
            json!({"name": ".hidden", "dataset": "", "corpus": "", "methods": ["llm-only"]}),
        ),
        ("POST", "/api/models/use", json!({"name": "/etc/passwd"})),
        ("POST", "/api/models/use", json!({"name": "model.gguf"})),
    ];
    for (method, path, body) in refused {
        let (status, reply) = server.call(method, path, Some(body.clone())).await;
        assert_eq!(
            (status, reply["error"]["code"].as_str()),
            (400, Some("bad_request")),
            "{body}: {reply}"
        );
    }
    let (status, _) = server.call("GET", "/api/evaluations/..%2F..", None).await;
    assert_eq!(status, 400);
    assert!(!server.data.path().join("evil").exists());
    let (status, body) = server.call("DELETE", "/api/status", None).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (405, Some("method_not_allowed"))
    );
    let (status, body) = server
        .call(
            "POST",
            "/api/ask",
            Some(json!({"question": "q", "method": "nope", "options": {}})),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("nope"),
        "{body}"
    );

    // A client that never finishes its headers is dropped, and holds
    // nobody up meanwhile.
    let started = Instant::now();
    let mut slow = TcpStream::connect(addr).unwrap();
    slow.write_all(b"GET /api/status HTTP/1.1\r\nHost: ")
        .unwrap();
    let (status, _) = server.call("GET", "/api/status", None).await;
    assert_eq!(status, 200);
    assert!(started.elapsed() < Duration::from_secs(5));
    slow.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut rest = Vec::new();
    let _ = slow.read_to_end(&mut rest);
    let held = started.elapsed();
    assert!(
        held >= Duration::from_secs(9) && held < Duration::from_secs(20),
        "the slow client was dropped after {held:?}"
    );

    // Beyond loopback only when asked.
    let out = serve_command(server.data.path(), &["--addr", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-remote"));
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_client_streams_a_methods_answer_with_footnotes_and_follows_it_up() {
    let server = Server::start(BESIDE_THE_WALK);
    let base = server.url("");
    let got = client_script(
        "openai_chat.py",
        &[&base, &server.token, QUESTION, FOLLOW_UP],
    );
    let got = &got[0];
    let models: Vec<&str> = got["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for method in [
        "folio/vanilla-rag",
        "folio/ig2rag",
        "folio/activerag",
        "folio/ircot",
    ] {
        assert!(models.contains(&method), "{models:?}");
    }
    for turn in ["first", "second"] {
        let text = got[turn]["text"].as_str().unwrap();
        assert!(
            got[turn]["chunks"].as_u64().unwrap() > 3,
            "{turn} came in one piece: {got}"
        );
        assert!(text.contains("\n[^"), "{turn} has no footnotes: {text}");
        assert!(
            text.contains("ch03-01-variables-and-mutability.md"),
            "{turn}: {text}"
        );
        assert!(text.contains("[folio-run]: folio:run/"), "{turn}: {text}");
        assert!(["stop", "length"].contains(&got[turn]["finish"].as_str().unwrap()));
    }
    assert!(got["plain"]["total_tokens"].as_i64().unwrap() > 0);
    assert!(got["plain"]["text"]
        .as_str()
        .unwrap()
        .contains("[folio-run]"));

    // The chat's two turns are one thread's two turns, the second a
    // follow-up that was rewritten.
    let (_, threads) = server.call("GET", "/api/threads", None).await;
    let threads = threads.as_array().unwrap();
    assert_eq!(threads.len(), 2, "{threads:?}");
    let chat = threads
        .iter()
        .find(|t| t["turns"] == 2)
        .expect("a thread of two turns");
    let (_, thread) = server
        .call("GET", &format!("/api/threads/{}", chat["id"]), None)
        .await;
    let runs = thread["runs"].as_array().unwrap();
    assert_eq!(runs[0]["question"], QUESTION);
    assert_eq!(runs[1]["question"], FOLLOW_UP);
    assert!(runs[1]["turn"]["rewrite"].is_object(), "{}", runs[1]);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_operation_in_the_openapi_document_answers_as_it_describes() {
    let server = Server::start(ModelThreads::AllCores);
    let docs = server.docs();
    // Ids for the walk: a run and its thread, a passage, a document, a job.
    let (status, run) = server
        .call("POST", "/api/ask", Some(json!({"question": QUESTION, "method": "vanilla-rag", "max_tokens": 48, "temperature": 0, "options": {}})))
        .await;
    assert_eq!(status, 200, "{run}");
    // The same route streams its progress when asked to.
    let events = reqwest::Client::new()
        .post(server.url("/api/ask"))
        .bearer_auth(&server.token)
        .header("Accept", "text/event-stream")
        .json(&json!({"question": QUESTION, "method": "vanilla-rag", "max_tokens": 24, "options": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(events.headers()["content-type"], "text/event-stream");
    let events = events.text().await.unwrap();
    let progress = events.matches("event: progress").count();
    assert!(progress > 3, "{events}");
    let last = events.rsplit("event: ").next().unwrap();
    assert!(last.starts_with("run\ndata: {"), "{last}");
    let (_, hits) = server
        .call(
            "POST",
            "/api/search",
            Some(json!({"query": "ownership", "k": 3, "scope": {"paths": [docs]}})),
        )
        .await;
    let hits = hits.as_array().unwrap();
    assert!(
        !hits.is_empty()
            && hits
                .iter()
                .all(|h| h["path"].as_str().unwrap().starts_with(&docs))
    );
    let (_, page) = server
        .call("GET", &format!("/api/documents?folder={docs}"), None)
        .await;
    let (_, jobs) = server.call("GET", "/api/jobs", None).await;
    // An evaluation answered to its end, for its report and its diff; the
    // walk starts it again under the same name, which reuses its answers.
    let evaluation = json!({
        "name": "first",
        "dataset": EVAL_QUESTIONS,
        "corpus": EVAL_CORPUS,
        "methods": ["llm-only", "vanilla-rag"],
        "max_tokens": 16,
        "temperature": 0,
    });
    let (status, started) = server
        .call("POST", "/api/evaluations", Some(evaluation.clone()))
        .await;
    assert_eq!(status, 200, "{started}");
    let finished = wait_for_evaluation(&server, "first").await;
    let report = &finished["report"];
    assert_eq!(report["summary"]["questions"], 2, "{finished}");
    assert_eq!(report["questions"][0]["rows"].as_array().unwrap().len(), 2);
    let examples = json!({
        "params": {
            "getApiRunsById.id": run["id"],
            "getApiRunsByIdMarkdown.id": run["id"],
            "getApiThreadsById.id": run["thread_id"],
            "getApiThreadsByIdMarkdown.id": run["thread_id"],
            "deleteApiThreadsById.id": run["thread_id"],
            "getApiDocumentsById.id": page["documents"][0]["id"],
            "getApiDocumentsByIdLinks.id": page["documents"][0]["id"],
            "getApiPassagesById.id": hits[0]["chunk_id"],
            "postApiJobsByIdCancel.id": jobs["jobs"][0]["id"],
            "name": "chapters",
            "getApiEvaluationsByName.name": "first",
            "getApiEvaluationsByNameDiff.name": "first",
            "a": "llm-only",
            "b": "vanilla-rag",
            "right_by": "em",
            "folder": docs,
        },
        "bodies": {
            "postApiSearch": {"query": "mutable", "k": 2},
            "postApiAsk": {"question": QUESTION, "method": "llm-only", "max_tokens": 24, "temperature": 0, "options": {}},
            "postApiCompare": {"question": QUESTION, "methods": ["llm-only", "vanilla-rag"], "max_tokens": 16, "temperature": 0},
            "putApiCollectionsByName": {"folders": [docs]},
            "postApiRetry": {"paths": [format!("{docs}/ch15-01-box.md")]},
            "postApiGraph": {"rubric": "coarse", "n": 2},
            "postApiModelsUse": {"name": "smollm2-135m"},
            "postApiEvaluations": evaluation,
            "postV1ChatCompletions": {"model": "folio/vanilla-rag", "messages": [{"role": "user", "content": QUESTION}], "max_tokens": 24},
        },
    });
    let walked = client_script(
        "openapi_routes.py",
        &[&server.url(""), &server.token, &examples.to_string()],
    );
    let walked = walked.as_array().unwrap();
    let (_, document) = server.call("GET", "/openapi.json", None).await;
    let operations: usize = document["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|p| p.as_object().unwrap().len())
        .sum();
    assert_eq!(walked.len(), operations);
    for call in walked {
        assert_eq!(call["errors"], json!([]), "{call}");
        assert_eq!(call["refusals"], json!([401, 403]), "{call}");
        // The walk's job is long finished: cancelling it is refused as
        // not found, in the shape the document gives refusals.
        let expected = if call["operation"] == "postApiJobsByIdCancel" {
            404
        } else {
            200
        };
        assert_eq!(call["status"], expected, "{call}");
    }
    let (status, _) = server
        .call("GET", &format!("/api/threads/{}", run["thread_id"]), None)
        .await;
    assert_eq!(status, 404, "the walk deleted the thread");
}

/// What the MCP client saw, over either transport.
fn check_mcp_session(got: &Value, docs: &str) {
    assert_eq!(got["server"], "folio");
    let tools = got["tools"].as_object().unwrap();
    let mut names: Vec<&str> = tools.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(
        names,
        ["ask", "list_collections", "list_threads", "read", "search"]
    );
    // The schemas are the engine's own types: a search's scope has every
    // kind of scope, an ask takes a method, its options and a thread.
    let search = tools["search"]["input"].to_string();
    for field in [
        "query",
        "mode",
        "paths",
        "collections",
        "formats",
        "since",
        "tags",
    ] {
        assert!(
            search.contains(&format!("\"{field}\"")),
            "search lacks {field}: {search}"
        );
    }
    assert_eq!(tools["search"]["input"]["required"], json!(["query"]));
    let ask = &tools["ask"];
    for field in ["question", "method", "options", "thread", "scope", "k"] {
        assert!(
            ask["input"]["properties"].get(field).is_some(),
            "ask lacks {field}: {ask}"
        );
    }
    let description = ask["description"].as_str().unwrap();
    for method in [
        "vanilla-rag",
        "pager",
        "rdr2",
        "ig2rag",
        "activerag",
        "crp-rag",
        "ircot",
    ] {
        assert!(
            description.contains(&format!("- {method}:")),
            "{description}"
        );
    }
    assert!(
        description.contains("retriever"),
        "the options are listed: {description}"
    );
    for tool in ["search", "ask", "read"] {
        assert_eq!(tools[tool]["output"]["type"], "object", "{tool}");
    }

    let hits = got["hits"].as_array().unwrap();
    assert!(!hits.is_empty());
    assert!(hits
        .iter()
        .all(|h| h["path"].as_str().unwrap().starts_with(docs)));
    assert_eq!(got["run"]["status"], "done", "{}", got["run"]);
    assert!(!got["run"]["answer"].as_str().unwrap().trim().is_empty());
    let progress: Vec<&str> = got["progress"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["message"].as_str())
        .collect();
    assert!(
        progress.iter().any(|m| m.starts_with("retrieved")),
        "{progress:?}"
    );
    assert!(
        progress.iter().any(|m| m.starts_with("answer")),
        "{progress:?}"
    );
    assert!(!got["passage"]["text"].as_str().unwrap().is_empty());
    assert_eq!(got["bad_read"], true);
    assert!(got["threads"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["id"] == got["run"]["thread_id"]));
    assert_eq!(got["collections"], json!([]));
    let resources = got["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 3, "{resources:?}");
    assert!(resources
        .iter()
        .all(|r| r["uri"].as_str().unwrap().starts_with("folio://document/")));
    assert!(got["resource_text"].as_str().unwrap().contains('#'));
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_sdk_client_over_stdio_searches_asks_with_progress_and_reads() {
    let server = Server::start(BESIDE_THE_WALK);
    let data = server.data.path().to_str().unwrap();
    let got = client_script(
        "mcp_client.py",
        &[
            "stdio",
            env!("CARGO_BIN_EXE_folio"),
            data,
            &server.docs(),
            QUESTION,
        ],
    );
    check_mcp_session(&got[0], &server.docs());
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_sdk_client_over_streamable_http_needs_the_token_and_gets_the_same() {
    let server = Server::start(BESIDE_THE_WALK);
    let got = client_script(
        "mcp_client.py",
        &[
            "http",
            &server.url(""),
            &server.token,
            &server.docs(),
            QUESTION,
        ],
    );
    check_mcp_session(&got[0], &server.docs());
    let (status, _) = reqwest::Client::new()
        .post(server.url("/mcp"))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
        .send()
        .await
        .map(|r| (r.status().as_u16(), ()))
        .unwrap();
    assert_eq!(status, 401, "MCP over HTTP without the token");
}
