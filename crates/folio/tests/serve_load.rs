//! `folio serve` under load: 20 clients at once, mixing searches and asks,
//! while a folder of HotpotQA passages is indexed by the same process.
//! Every request ends in an answer or a clear "busy" refusal (503, code
//! `busy`), every answered ask is stored, the folder ends fully indexed,
//! and the searches' p50 and p95 latency under load are reported beside
//! the same searches with nothing else running. CI runs it for 15 s over
//! 1,000 passages;
//! `scripts/soak.sh` (FOLIO_SOAK=full) for the two minutes over 8,000 the
//! server issue asks for.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::engine::{folio, write_hotpotqa_passages_from};
use common::served::{succeeded, ModelThreads, Server};
use common::soak::Soak;
use serde_json::{json, Value};

const CLIENTS: usize = 20;
/// One request in this many is an ask; the rest search.
const ASK_EVERY: usize = 5;
const QUERIES: &[&str] = &[
    "variables are immutable by default",
    "ownership rules",
    "heap allocation with Box",
    "shadowing a variable",
    "constants and the const keyword",
    "the stack and the heap",
    "recursive types",
    "moving a String",
];

#[derive(Debug)]
struct Outcome {
    /// When it was sent, in milliseconds since the epoch (as jobs record
    /// their times).
    sent_ms: i64,
    ask: bool,
    status: u16,
    code: String,
    seconds: f64,
    run: Option<i64>,
}

async fn request(server: &Server, client: &reqwest::Client, ask: bool, query: &str) -> Outcome {
    let started = Instant::now();
    let sent_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let (path, body) = if ask {
        let question = format!("What does the book say about {query}?");
        (
            "/api/ask",
            json!({"question": question, "method": "vanilla-rag", "max_tokens": 16, "temperature": 0, "options": {}}),
        )
    } else {
        ("/api/search", json!({"query": query, "k": 5}))
    };
    let reply = client
        .post(server.url(path))
        .bearer_auth(&server.token)
        .json(&body)
        .send()
        .await
        .expect("the server answers every request");
    let status = reply.status().as_u16();
    let body: Value = reply.json().await.expect("every reply is JSON");
    Outcome {
        sent_ms,
        ask,
        status,
        code: body["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        seconds: started.elapsed().as_secs_f64(),
        run: body["id"].as_i64().filter(|_| ask),
    }
}

fn percentile(mut seconds: Vec<f64>, p: f64) -> f64 {
    seconds.sort_by(f64::total_cmp);
    let i = ((seconds.len() as f64 - 1.0) * p).round() as usize;
    seconds[i]
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_clients_search_and_ask_while_a_folder_is_indexed() {
    let soak = Soak::from_env();
    let (passages, duration) = soak.pick((1_000, 15), (8_000, 120));
    let server = Arc::new(Server::start(ModelThreads::AllCores));
    let client = reqwest::Client::new();

    // The same searches, one at a time, with nothing else running.
    let mut quiet = Vec::new();
    for _ in 0..3 {
        for q in QUERIES {
            let outcome = request(&server, &client, false, q).await;
            assert_eq!(outcome.status, 200);
            quiet.push(outcome.seconds);
        }
    }

    let folder = tempfile::tempdir().unwrap();
    write_hotpotqa_passages_from(&soak.hotpotqa(), folder.path(), passages);
    succeeded(&folio(
        server.data.path(),
        &["add", "--no-wait", folder.path().to_str().unwrap()],
    ));

    let deadline = Instant::now() + Duration::from_secs(duration);
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (server, client) = (server.clone(), client.clone());
            tokio::spawn(async move {
                let mut outcomes = Vec::new();
                let mut i = c;
                while Instant::now() < deadline {
                    let ask = i % ASK_EVERY == 0;
                    outcomes.push(request(&server, &client, ask, QUERIES[i % QUERIES.len()]).await);
                    i += CLIENTS;
                }
                outcomes
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for c in clients {
        outcomes.extend(c.await.unwrap());
    }

    let refused: Vec<&Outcome> = outcomes.iter().filter(|o| o.status != 200).collect();
    for o in &refused {
        assert_eq!((o.status, o.code.as_str()), (503, "busy"), "{o:?}");
    }
    let searches: Vec<f64> = outcomes
        .iter()
        .filter(|o| !o.ask && o.status == 200)
        .map(|o| o.seconds)
        .collect();
    let answered: Vec<i64> = outcomes.iter().filter_map(|o| o.run).collect();
    assert!(!answered.is_empty(), "no ask was answered");
    assert!(searches.len() > CLIENTS, "{} searches", searches.len());

    // Nothing lost: every answered ask is a stored, finished run, and the
    // folder ends fully indexed.
    for run in &answered {
        let (status, stored) = server.call("GET", &format!("/api/runs/{run}"), None).await;
        assert_eq!(
            (status, stored["status"].as_str()),
            (200, Some("done")),
            "{stored}"
        );
    }
    let finished = Instant::now();
    loop {
        let (_, status) = server.call("GET", "/api/status", None).await;
        let indexed = status["folders"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["documents"].as_i64().unwrap())
            .sum::<i64>();
        let busy = status["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|j| j["state"] != "done");
        if indexed == 3 + passages as i64 && !busy {
            assert_eq!(status["counts"]["errors"], 0, "{status}");
            break;
        }
        assert!(
            finished.elapsed() < Duration::from_secs(900),
            "indexing did not finish: {status}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    // The load ran while the folder was being indexed: many requests were
    // sent between its job's start and end.
    let (_, jobs) = server.call("GET", "/api/jobs", None).await;
    let job = &jobs["jobs"][0];
    let (began, ended) = (
        job["created_at"].as_i64().unwrap(),
        job["updated_at"].as_i64().unwrap(),
    );
    let during = outcomes
        .iter()
        .filter(|o| (began..=ended).contains(&o.sent_ms))
        .count();
    assert!(
        during >= CLIENTS,
        "only {during} requests were sent while the folder was indexed: {job}"
    );

    let asks = outcomes.iter().filter(|o| o.ask).count();
    eprintln!(
        "load: {CLIENTS} clients for {duration} s while {passages} passages were indexed: {} requests \
         ({during} while indexing; {} searches, {asks} asks, {} answered, {} refused as busy)",
        outcomes.len(),
        searches.len(),
        answered.len(),
        refused.len()
    );
    eprintln!(
        "search latency: p50 {:.3} s, p95 {:.3} s under load; p50 {:.3} s, p95 {:.3} s alone ({} searches)",
        percentile(searches.clone(), 0.5),
        percentile(searches, 0.95),
        percentile(quiet.clone(), 0.5),
        percentile(quiet.clone(), 0.95),
        quiet.len()
    );
}
