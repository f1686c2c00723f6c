//! kill -9 again and again: during ingestion, while an index made before
//! int8 vectors is converted, while the information-gain graph is built
//! with the real model, and in the middle of an evaluation.
//! After every kill the store passes SQLite's integrity check and Folio's own
//! (no chunk without its vector, no node, vector or gain edge without its
//! chunk) and the work is resumable; when a run is finally left alone, what
//! it leaves equals a clean run's.
//!
//! Kill points are random: half come a random moment after the start (while
//! the process loads models, opens or migrates the store), half once the
//! work has reached a random point. The seed is printed; FOLIO_KILL_SEED
//! repeats a sequence. A run that finishes before its kill comes (the last
//! few documents on an idle machine) starts its stage over, so each stage
//! takes all its kills.
//!
//! Full size (`FOLIO_SOAK=full`, scripts/soak.sh): 7 kills per stage, 28 in
//! all, over 1,500 passages (31,500 vectors to convert), a graph of 40 and 6
//! questions. CI size: 3 kills per stage over 200 passages (12,200 vectors),
//! a graph of 10 and 2 questions. Each stage
//! still takes both kinds of kill point (kills alternate early, work point,
//! early), and every check after a kill and at the end is the same.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::engine::{
    assert_consistent, downgrade_to_f32_vectors, int8_vectors, open, snapshot,
    write_hotpotqa_passages_from,
};
use common::soak::Soak;
use serde_json::Value;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::ConnectOptions;

/// How much each stage does.
struct Size {
    /// Kills per stage, alternately early and at a work point: at least two,
    /// so that both kinds land in every stage.
    kills: usize,
    /// Passages ingested in the first stage.
    passages: u64,
    /// Passages the graph is built over; also the evaluation's corpus.
    graph_passages: usize,
    /// Evaluation questions, each answered by two methods.
    questions: usize,
    /// Copies of each ingested chunk in the f32 index the vector-upgrade
    /// stage converts, so that its batches take long enough to kill.
    upgrade_copies: usize,
}

const CI: Size = Size {
    kills: 3,
    passages: 200,
    graph_passages: 10,
    questions: 2,
    upgrade_copies: 60,
};
const FULL: Size = Size {
    kills: 7,
    passages: 1500,
    graph_passages: 40,
    questions: 6,
    upgrade_copies: 20,
};
// Kills alternate early and at a work point: two or more per stage, and
// every stage takes both kinds.
const _: () = assert!(CI.kills >= 2 && FULL.kills >= 2);

/// A small deterministic generator (xorshift64*): the test needs
/// repeatable randomness, not a dependency.
struct Rng(u64);

impl Rng {
    fn seeded() -> Rng {
        let seed = common::soak::kill_seed();
        eprintln!("kill points from FOLIO_KILL_SEED={seed}");
        Rng(seed | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

fn folio(data_dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_folio"));
    command
        .env("FOLIO_CONFIG", "/dev/null")
        .env("FOLIO_LLM_MODEL", common::engine::tiny_model())
        .env("FOLIO_LLM_THREADS", "1")
        // Ingestion commits every few dozen chunks, so kills at a work
        // point fall between commits.
        .env("FOLIO_COMMIT_CHUNKS", "40")
        .arg("--data-dir")
        .arg(data_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

fn run_to_the_end(mut command: Command, what: &str) {
    let out = command.stderr(Stdio::piped()).output().unwrap();
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A count read from a store another process is writing, without migrating
/// or otherwise touching it; 0 while there is no store yet.
async fn count_in(db: &Path, sql: &str) -> u64 {
    if !db.exists() {
        return 0;
    }
    let connected = SqliteConnectOptions::new()
        .filename(db)
        .read_only(true)
        .connect()
        .await;
    let Ok(mut connection) = connected else {
        return 0;
    };
    sqlx::query_scalar::<_, i64>(sql)
        .fetch_one(&mut connection)
        .await
        .map_or(0, |n| n as u64)
}

/// Runs `start` and kills it with SIGKILL until `kills` kills have landed,
/// each at a random point; `progress` says how much of `total` is done. A
/// run that finishes before its kill comes is no kill: `reset` puts the
/// stage back to where it began and the kills go on, so a fast machine
/// cannot leave a stage short of kills. Returns how many runs finished.
async fn kill_repeatedly<F, P, C, R>(
    rng: &mut Rng,
    kills: usize,
    total: u64,
    start: impl Fn() -> Command,
    progress: F,
    mut after_kill: C,
    mut reset: R,
) -> usize
where
    F: Fn() -> P,
    P: std::future::Future<Output = u64>,
    C: AsyncFnMut(),
    R: AsyncFnMut(),
{
    let (mut landed, mut finished) = (0, 0);
    while landed < kills {
        let done = progress().await;
        let mut child: Child = start().spawn().unwrap();
        let started = Instant::now();
        let early = Duration::from_millis(200 + rng.below(1500));
        let target = done + 1 + rng.below(total.saturating_sub(done + 1).max(1));
        let outran = loop {
            if child.try_wait().unwrap().is_some() {
                break true;
            }
            let due = if landed % 2 == 0 {
                started.elapsed() >= early
            } else {
                progress().await >= target
            };
            if due {
                break false;
            }
            assert!(
                started.elapsed() < Duration::from_secs(600),
                "no progress in 10 minutes"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        };
        if outran {
            finished += 1;
            assert!(
                finished <= kills,
                "{finished} runs finished before their kill: the stage is too small to kill"
            );
            reset().await;
            continue;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        landed += 1;
        after_kill().await;
    }
    finished
}

/// What a restart finds: a consistent store whose unfinished job, if any,
/// is seen as interrupted and so is taken up again.
async fn assert_recoverable(data_dir: &Path) {
    if !data_dir.join("folio.sqlite").exists() {
        return;
    }
    let library = open(data_dir).await;
    assert_consistent(&library).await;
    let status = library.status().await.unwrap();
    for job in &status.jobs {
        assert!(
            job.state != folio_engine::store::JobState::Running || job.interrupted,
            "a killed job still looks alive: {job:?}"
        );
    }
    library.close().await;
}

/// The graph as (source text, target text, class): chunk ids differ from
/// one library to another, their texts do not.
async fn gain_edges(data_dir: &Path) -> Vec<(String, String, String)> {
    let library = open(data_dir).await;
    let edges = sqlx::query_as(
        "SELECT s.text, t.text, e.class FROM gain_edges e \
         JOIN chunks s ON s.id = e.source_chunk JOIN chunks t ON t.id = e.target_chunk \
         ORDER BY 1, 2",
    )
    .fetch_all(library.store().pool())
    .await
    .unwrap();
    library.close().await;
    edges
}

/// An evaluation's answers by question and method.
fn answers(out: &Path) -> BTreeMap<(String, String), (String, Option<String>)> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| {
            let key = (
                r["question_id"].as_str().unwrap().to_string(),
                r["spec"].as_str().unwrap().to_string(),
            );
            let answer = r["answer"].as_str().map(str::to_string);
            (key, (r["status"].as_str().unwrap().to_string(), answer))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn kills_in_ingestion_graph_building_and_evaluation() {
    let soak = Soak::from_env();
    let size = soak.pick(CI, FULL);
    let hotpotqa = soak.hotpotqa();
    let mut rng = Rng::seeded();
    let root = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(root.path()).unwrap();
    let mut outran = Vec::new();

    // Ingestion.
    let corpus = root.join("passages");
    std::fs::create_dir(&corpus).unwrap();
    write_hotpotqa_passages_from(&hotpotqa, &corpus, size.passages as usize);
    let crashed = root.join("ingest-killed");
    let db = crashed.join("folio.sqlite");
    let add = || {
        let mut c = folio(&crashed);
        c.arg("add").arg(&corpus);
        c
    };
    let documents = || count_in(&db, "SELECT COUNT(*) FROM documents");
    outran.push(
        kill_repeatedly(
            &mut rng,
            size.kills,
            size.passages,
            add,
            documents,
            async || assert_recoverable(&crashed).await,
            async || std::fs::remove_dir_all(&crashed).unwrap(),
        )
        .await,
    );
    run_to_the_end(add(), "the last folio add");
    let clean = root.join("ingest-clean");
    run_to_the_end(
        {
            let mut c = folio(&clean);
            c.arg("add").arg(&corpus);
            c
        },
        "a clean folio add",
    );
    let (a, b) = (open(&crashed).await, open(&clean).await);
    assert_consistent(&a).await;
    assert_eq!(snapshot(&a).await, snapshot(&b).await);
    a.close().await;
    b.close().await;

    // Upgrading an index made before int8 vectors, on a copy of the clean
    // one: `folio search` converts it before it searches.
    let upgrading = root.join("upgrade-killed");
    let upgrade_db = upgrading.join("folio.sqlite");
    let downgraded = async || {
        if upgrading.exists() {
            std::fs::remove_dir_all(&upgrading).unwrap();
        }
        std::fs::create_dir(&upgrading).unwrap();
        // The index's files; folders (the reading log's) are not the index.
        for file in std::fs::read_dir(&clean).unwrap() {
            let file = file.unwrap().path();
            if file.is_file() {
                std::fs::copy(&file, upgrading.join(file.file_name().unwrap())).unwrap();
            }
        }
        let library = open(&upgrading).await;
        let expected = downgrade_to_f32_vectors(&library, size.upgrade_copies).await;
        library.close().await;
        expected
    };
    let expected = downgraded().await;
    let search = || {
        let mut c = folio(&upgrading);
        c.args(["search", "Which city is the band from?"]);
        c
    };
    let converted = || {
        count_in(
            &upgrade_db,
            "SELECT COUNT(*) FROM chunks WHERE id <= \
             (SELECT CAST(value AS INTEGER) FROM settings WHERE key = 'vectors_upgraded_to')",
        )
    };
    outran.push(
        kill_repeatedly(
            &mut rng,
            size.kills,
            expected.len() as u64,
            search,
            converted,
            async || assert_recoverable(&upgrading).await,
            async || {
                downgraded().await;
            },
        )
        .await,
    );
    run_to_the_end(search(), "the last folio search");
    let upgraded = open(&upgrading).await;
    assert_consistent(&upgraded).await;
    assert!(!upgraded.store().vectors_need_upgrade().await.unwrap());
    assert_eq!(int8_vectors(&upgraded).await, expected);
    upgraded.close().await;

    // Graph building, with the real model, over a small library.
    let small = root.join("small");
    std::fs::create_dir(&small).unwrap();
    write_hotpotqa_passages_from(&hotpotqa, &small, size.graph_passages);
    let graph_dirs = [root.join("graph-killed"), root.join("graph-clean")];
    let add_small = |dir: &Path| {
        let mut c = folio(dir);
        c.arg("add").arg(&small);
        run_to_the_end(c, "folio add for the graph");
    };
    graph_dirs.iter().for_each(|dir| add_small(dir));
    let build = |dir: &Path| {
        let mut c = folio(dir);
        c.args(["graph", "build", "--n", "2"]);
        c
    };
    let graph_db = graph_dirs[0].join("folio.sqlite");
    let chunks = count_in(&graph_db, "SELECT COUNT(*) FROM chunks").await;
    let scored = || count_in(&graph_db, "SELECT COUNT(*) FROM gain_nodes");
    outran.push(
        kill_repeatedly(
            &mut rng,
            size.kills,
            chunks,
            || build(&graph_dirs[0]),
            scored,
            async || assert_recoverable(&graph_dirs[0]).await,
            async || {
                std::fs::remove_dir_all(&graph_dirs[0]).unwrap();
                add_small(&graph_dirs[0]);
            },
        )
        .await,
    );
    run_to_the_end(build(&graph_dirs[0]), "the last graph build");
    run_to_the_end(build(&graph_dirs[1]), "a clean graph build");
    let killed_edges = gain_edges(&graph_dirs[0]).await;
    assert!(!killed_edges.is_empty());
    assert_eq!(killed_edges, gain_edges(&graph_dirs[1]).await);

    // An evaluation: its own index, then one answer after another.
    let dataset = root.join("dev.jsonl");
    let questions: Vec<String> = std::fs::read_to_string(hotpotqa.join("dev.jsonl"))
        .unwrap()
        .lines()
        .take(size.questions)
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(questions.len(), size.questions, "questions in {hotpotqa:?}");
    std::fs::write(&dataset, questions.concat()).unwrap();
    let eval = |out: &PathBuf| {
        let mut c = folio(&root.join("unused"));
        c.arg("eval")
            .arg("--dataset")
            .arg(&dataset)
            .arg("--corpus")
            .arg(&small)
            .args(["--methods", "llm-only,vanilla-rag", "-k", "3"])
            .args(["--temperature", "0", "--max-tokens", "48", "--out"])
            .arg(out);
        c
    };
    let (killed_out, clean_out) = (root.join("eval-killed"), root.join("eval-clean"));
    let rows = || async {
        std::fs::read_to_string(killed_out.join("results.jsonl"))
            .map_or(0, |t| t.lines().count() as u64)
    };
    outran.push(
        kill_repeatedly(
            &mut rng,
            size.kills,
            2 * questions.len() as u64,
            || eval(&killed_out),
            rows,
            async || assert_recoverable(&killed_out.join("index")).await,
            async || std::fs::remove_dir_all(&killed_out).unwrap(),
        )
        .await,
    );
    run_to_the_end(eval(&killed_out), "the last folio eval");
    run_to_the_end(eval(&clean_out), "a clean folio eval");
    assert_eq!(answers(&killed_out), answers(&clean_out));

    eprintln!(
        "{} kills survived in each stage; runs that finished before their \
         kill and started the stage over: ingestion {}, vector upgrade {}, graph {}, evaluation {}",
        size.kills, outran[0], outran[1], outran[2], outran[3]
    );
}
