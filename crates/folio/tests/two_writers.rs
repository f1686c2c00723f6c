//! Two writers, one library: a `folio watch`, the app's engine and a
//! `folio add` on one data folder, while files are created, edited, renamed and
//! deleted under them, end with the library one `folio add` makes of the
//! final folder, and no "database is locked" reaches anyone. A read that
//! commits after a newer read of its file does not undo it, and the app's
//! engine tells its window what another process changed.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::engine::{assert_consistent, folio, folio_watch, open, snapshot};
use folio_engine::eval::job::EvalJobs;
use folio_engine::events::EngineEvent;

/// Rounds of changes, a quarter second apart: each creates, edits, renames
/// and deletes notes, so events reach both watchers while their passes
/// and the other's commits are under way.
const ROUNDS: usize = 12;

fn note(dir: &Path, name: &str, body: &str) {
    std::fs::write(dir.join(name), format!("# {name}\n\n{body}\n")).unwrap();
}

/// Waits until none of `logs` has grown for `quiet`: both watchers have
/// applied everything they saw. Fails after two minutes (a hang guard).
fn settle(logs: &[PathBuf], quiet: Duration) {
    let size = || -> u64 {
        logs.iter()
            .map(|l| std::fs::metadata(l).map_or(0, |m| m.len()))
            .sum()
    };
    let start = Instant::now();
    let (mut last, mut since) = (size(), Instant::now());
    while since.elapsed() < quiet {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the watchers never settled"
        );
        std::thread::sleep(Duration::from_millis(200));
        let now = size();
        if now != last {
            (last, since) = (now, Instant::now());
        }
    }
}

/// The shared library at `data` passes every check and equals what one
/// `folio add` of `docs` makes in a fresh one under `root`.
async fn assert_as_one_process_would(root: &Path, docs: &Path, data: &Path) {
    let clean = root.join("clean");
    assert!(folio(&clean, &["add", docs.to_str().unwrap()])
        .status
        .success());
    let (shared, alone) = (open(data).await, open(&clean).await);
    assert_consistent(&shared).await;
    assert_eq!(snapshot(&shared).await, snapshot(&alone).await);
}

fn interrupt(mut child: Child) {
    // SAFETY: kill(2) on a child this test started and has not reaped.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    child.wait().unwrap();
}

/// The app's engine (`src-tauri`'s: the library, its watcher and job
/// runtime, as `Engine` runs them) as a seat of its own, in a child process
/// of this test binary. Says a line per pass; stops once the file
/// `FOLIO_SEAT_STOP` names exists.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "run by a_watch_the_apps_engine_and_an_add_on_one_library_end_as_one_process_would"]
async fn app_engine_seat() {
    let data = PathBuf::from(std::env::var("FOLIO_SEAT_DATA").unwrap());
    let stop = PathBuf::from(std::env::var("FOLIO_SEAT_STOP").unwrap());
    let library = std::sync::Arc::new(open(&data).await);
    library.jobs().restore_pause().await.unwrap();
    let stopped = async {
        while !stop.exists() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    library
        .jobs()
        .run_background(stopped, &|pass| println!("pass: {pass:?}"), &[&EvalJobs])
        .await
        .unwrap();
}

/// [`app_engine_seat`] on `data_dir`, its output in `log`; it stops when
/// `stop` is created.
fn app_engine(data_dir: &Path, log: &Path, stop: &Path) -> Child {
    let file = std::fs::File::create(log).unwrap();
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "app_engine_seat", "--ignored", "--nocapture"])
        .env("FOLIO_SEAT_DATA", data_dir)
        .env("FOLIO_SEAT_STOP", stop)
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_watch_the_apps_engine_and_an_add_on_one_library_end_as_one_process_would() {
    let root = tempfile::tempdir().unwrap();
    let docs = root.path().join("notes");
    std::fs::create_dir(&docs).unwrap();
    let docs = std::fs::canonicalize(docs).unwrap();
    for i in 0..20 {
        note(
            &docs,
            &format!("n{i:02}.md"),
            &format!("Note {i} keeps {i} quinces."),
        );
    }
    let data = root.path().join("data");
    let out = folio(&data, &["add", docs.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let logs = [root.path().join("watch.log"), root.path().join("app.log")];
    let stop = root.path().join("stop");
    let watcher = folio_watch(&data, &logs[0]);
    let app = app_engine(&data, &logs[1], &stop);
    settle(&logs, Duration::from_secs(3));

    let mut adds = Vec::new();
    for round in 0..ROUNDS {
        note(
            &docs,
            &format!("new-{round:02}.md"),
            &format!("Round {round} brings a heron."),
        );
        let edited = format!("n{:02}.md", round % 20);
        note(
            &docs,
            &edited,
            &format!("Note {edited} was edited in round {round}."),
        );
        if round % 3 == 1 {
            let from = docs.join(format!("new-{:02}.md", round - 1));
            std::fs::rename(from, docs.join(format!("moved-{round:02}.md"))).unwrap();
        }
        if round % 4 == 2 {
            std::fs::remove_file(docs.join(format!("n{:02}.md", 19 - round))).unwrap();
        }
        if round == ROUNDS / 2 {
            adds.push(folio(&data, &["add", docs.to_str().unwrap()]));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    settle(&logs, Duration::from_secs(5));
    interrupt(watcher);
    std::fs::write(&stop, "").unwrap();
    let app = app.wait_with_output().unwrap();
    assert!(
        app.status.success(),
        "the app's engine: {}",
        std::fs::read_to_string(&logs[1]).unwrap()
    );

    let mut said = String::new();
    for log in &logs {
        said += &std::fs::read_to_string(log).unwrap();
    }
    for add in &adds {
        assert!(
            add.status.success(),
            "{}",
            String::from_utf8_lossy(&add.stderr)
        );
        said += &String::from_utf8_lossy(&add.stdout);
        said += &String::from_utf8_lossy(&add.stderr);
    }
    assert!(
        said.contains("pass: PassSummary"),
        "the app's engine made no pass: {said}"
    );
    for word in ["locked", "busy", "error"] {
        assert!(!said.to_lowercase().contains(word), "{word}: {said}");
    }

    assert_as_one_process_would(root.path(), &docs, &data).await;
}

/// Two `folio add`s read one file at two moments, and the older read
/// reaches its commit last: the library keeps the newer one.
#[tokio::test(flavor = "multi_thread")]
async fn an_older_read_committed_last_does_not_replace_a_newer_one() {
    let root = tempfile::tempdir().unwrap();
    let docs = root.path().join("notes");
    std::fs::create_dir(&docs).unwrap();
    let docs = std::fs::canonicalize(docs).unwrap();
    note(&docs, "a.md", "The first version keeps one quince.");
    let data = root.path().join("data");

    // The first reads a.md, then stops until told to go on.
    let mut older = Command::new(env!("CARGO_BIN_EXE_folio"))
        .env("FOLIO_CONFIG", "/dev/null")
        .env("FOLIO_LLM_MODEL", common::engine::tiny_model())
        .env("FOLIO_FAULT", "read:hold:a.md")
        .arg("--data-dir")
        .arg(&data)
        .arg("add")
        .arg(&docs)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = BufReader::new(older.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("FOLIO_FAULT: holding a.md") {
        line.clear();
        assert!(
            said.read_line(&mut line).unwrap() > 0,
            "the first add ended before it held a.md"
        );
    }

    // The file changes; the second reads the new version and commits.
    note(
        &docs,
        "a.md",
        "The second version, read later, keeps two quinces.",
    );
    let newer = folio(&data, &["add", docs.to_str().unwrap()]);
    assert!(
        newer.status.success(),
        "{}",
        String::from_utf8_lossy(&newer.stderr)
    );

    // SAFETY: kill(2) on a child this test started and has not reaped.
    unsafe { libc::kill(older.id() as libc::pid_t, libc::SIGCONT) };
    let mut rest = String::new();
    said.read_to_string(&mut rest).unwrap();
    assert!(older.wait().unwrap().success(), "{rest}");

    assert_as_one_process_would(root.path(), &docs, &data).await;
}

/// The app's engine hears that a `folio add` beside it changed the
/// library, so its Library view does not go stale.
#[tokio::test(flavor = "multi_thread")]
async fn the_apps_engine_tells_its_window_what_a_cli_beside_it_did() {
    let root = tempfile::tempdir().unwrap();
    let docs = root.path().join("notes");
    std::fs::create_dir(&docs).unwrap();
    note(&docs, "a.md", "A note the CLI indexes.");
    let data = root.path().join("data");
    let library = std::sync::Arc::new(open(&data).await);
    let mut events = library.subscribe();
    let background = common::wait::Background::start(&library);
    // Nothing changes while the engine only watches.
    tokio::time::sleep(Duration::from_secs(5)).await;
    while let Ok(event) = events.try_recv() {
        assert_ne!(
            event,
            EngineEvent::LibraryChanged,
            "no one changed the library"
        );
    }

    let out = folio(&data, &["add", docs.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let heard = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if events.recv().await.unwrap() == EngineEvent::LibraryChanged {
                break;
            }
        }
    })
    .await;
    assert!(heard.is_ok(), "the engine never said the library changed");
    background.stop().await;
}
