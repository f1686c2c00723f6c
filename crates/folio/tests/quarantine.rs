//! Crash quarantine through the real binaries: the test build of `folio`
//! dies on a named file when `FOLIO_FAULT` says so (folio-documents'
//! `fault`: an abort, a stack overflow, a segfault, or an allocation that
//! fails under an address-space limit, while the file is read or while its
//! chunks are embedded; or a SIGKILL, at once or after a while). Whatever
//! the death, a later start sets the file aside, indexes the rest, and reports it; the file stays aside until it
//! changes or `folio retry` reads it. The same holds through `folio watch`
//! and through the app's engine (the library's background work, run here in
//! a child process of this test), and across kill -9s of later passes.

mod common;

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::engine::{assert_consistent, open, snapshot, write_hotpotqa_passages};
use serde_json::Value;

/// Innocent notes beside the bad one.
const GOOD: usize = 8;
/// The bad file's name: last by name, so an innocent read beside it is
/// read alone before it.
const BAD: &str = "zz-bad.md";

/// A folder of `GOOD` notes and the bad one.
fn corpus(root: &Path) -> PathBuf {
    let dir = root.join("notes");
    std::fs::create_dir(&dir).unwrap();
    for i in 0..GOOD {
        let body = format!(
            "# Note {i}\n\nThe keeper of note {i} grows {} quinces.\n",
            i + 3
        );
        std::fs::write(dir.join(format!("note-{i}.md")), body).unwrap();
    }
    std::fs::write(dir.join(BAD), "# Bad\n\nNothing wrong with these words.\n").unwrap();
    std::fs::canonicalize(dir).unwrap()
}

/// The CLI on `data_dir`, dying as `fault` says (`None`: never).
fn folio(data_dir: &Path, fault: Option<&str>) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_folio"));
    command
        .env("FOLIO_CONFIG", "/dev/null")
        .env("FOLIO_LLM_MODEL", common::engine::tiny_model())
        .env_remove("FOLIO_FAULT")
        .arg("--data-dir")
        .arg(data_dir)
        .stdin(Stdio::null());
    if let Some(fault) = fault {
        command.env("FOLIO_FAULT", fault);
        if fault.contains(":memory:") {
            limit_address_space(&mut command);
        }
    }
    command
}

/// Far above what `folio add` of a small folder maps (about 2 GiB of
/// address space here, most of it reserved, not used), far below the
/// machine: the memory fault reaches it within a second.
const ADDRESS_SPACE: u64 = 8 << 30;

fn limit_address_space(command: &mut Command) {
    // SAFETY: setrlimit is async-signal-safe, as pre_exec requires.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// `folio COMMAND PATH` on `data_dir`, dying as `fault` says, to its end.
fn run(data_dir: &Path, fault: Option<&str>, command: &str, path: &Path) -> Output {
    folio(data_dir, fault)
        .arg(command)
        .arg(path)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `command` again and again until it ends cleanly, at most
/// `MOST_DEATHS` deaths. Every run before must have died of a signal, not
/// failed with an error. Returns how many died.
fn until_clean(mut command: impl FnMut() -> Command, what: &str) -> usize {
    for deaths in 0..=MOST_DEATHS {
        let out = command().stdout(Stdio::null()).output().unwrap();
        if out.status.success() {
            return deaths;
        }
        assert!(
            out.status.signal().is_some(),
            "{what} failed instead of dying ({}): {}",
            out.status,
            stderr(&out)
        );
    }
    panic!(
        "{what} still dies after {} runs: the bad file was never set aside",
        MOST_DEATHS + 1
    );
}

/// The ways a bug in a reader kills the process, as the fault hook names
/// them; each is tried through the CLI, `folio watch` and the app's engine.
const DEATHS: [&str; 4] = ["abort", "stack", "segv", "memory"];

/// A crash sets the file aside in two deaths at most; a kill from outside
/// that catches the file at once takes six (see the test below).
const MOST_DEATHS: usize = 6;

fn status(data_dir: &Path) -> Value {
    let out = folio(data_dir, None)
        .args(["--json", "status"])
        .output()
        .unwrap();
    assert!(out.status.success(), "folio status: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The index holds every good note and reports the bad one as set aside,
/// with the words that say how to retry it.
fn assert_set_aside(data_dir: &Path, corpus: &Path) {
    let status = status(data_dir);
    assert_eq!(status["counts"]["documents"], GOOD as i64, "{status}");
    let errors = status["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let bad = corpus.join(BAD);
    assert_eq!(errors[0]["path"], bad.to_str().unwrap());
    assert_eq!(errors[0]["set_aside"], true);
    let message = errors[0]["error"].as_str().unwrap();
    assert!(
        message.contains("Folio stopped while reading this file")
            && message.contains(&format!("folio retry {}", bad.display())),
        "{message}"
    );
}

/// `folio add` with the fault in place until it ends cleanly.
fn add_until_clean(data_dir: &Path, corpus: &Path, fault: &str) -> usize {
    until_clean(
        || {
            let mut c = folio(data_dir, Some(fault));
            c.arg("add").arg(corpus);
            c
        },
        &format!("folio add with FOLIO_FAULT={fault}"),
    )
}

#[test]
fn every_way_of_dying_sets_the_file_aside_and_the_rest_is_indexed() {
    let root = tempfile::tempdir().unwrap();
    let corpus = corpus(root.path());
    for fault in DEATHS
        .map(|kind| format!("read:{kind}:{BAD}"))
        .into_iter()
        .chain([format!("embed:abort:{BAD}")])
    {
        let data = root.path().join(fault.replace(':', "-"));
        let deaths = add_until_clean(&data, &corpus, &fault);
        // One death if the file was alone in progress; a second, reading
        // it alone, if something was read beside it.
        assert!(
            (1..=2).contains(&deaths),
            "{fault}: {deaths} deaths before the file was set aside"
        );
        assert_set_aside(&data, &corpus);

        // It stays aside: another pass does not read it again.
        let again = run(&data, Some(&fault), "add", &corpus);
        assert!(again.status.success(), "{fault}: {}", stderr(&again));
        assert_set_aside(&data, &corpus);
    }

    // Retried once the fault is gone, it is indexed.
    let data = root.path().join("read-abort-zz-bad.md");
    let bad = corpus.join(BAD);
    let out = run(&data, None, "retry", &bad);
    assert!(out.status.success(), "{}", stderr(&out));
    let status = status(&data);
    assert_eq!(status["counts"]["documents"], GOOD as i64 + 1, "{status}");
    assert_eq!(status["errors"], Value::Array(vec![]));
}

#[test]
fn a_file_killed_from_outside_takes_two_strikes_if_it_lasted_and_five_if_not() {
    let root = tempfile::tempdir().unwrap();
    let corpus = corpus(root.path());
    // A first death makes a suspect of it (a kill blames no file read
    // beside others, or alone in a pass); each later one, while the
    // suspect is read alone, is a strike.
    for (kind, deaths) in [("oom", 3), ("kill", 6)] {
        let fault = format!("read:{kind}:{BAD}");
        let data = root.path().join(kind);
        assert_eq!(add_until_clean(&data, &corpus, &fault), deaths, "{fault}");
        assert_set_aside(&data, &corpus);
    }
}

#[test]
fn a_retry_that_dies_again_sets_the_file_aside_again_and_a_change_reads_it_anew() {
    let root = tempfile::tempdir().unwrap();
    let corpus = corpus(root.path());
    let data = root.path().join("data");
    let fault = format!("read:segv:{BAD}");
    add_until_clean(&data, &corpus, &fault);
    let bad = corpus.join(BAD);

    // The retry reads it alone and dies: the next start sets it aside at
    // once, without dying again.
    let retried = run(&data, Some(&fault), "retry", &bad);
    assert_eq!(
        retried.status.signal(),
        Some(libc::SIGSEGV),
        "{}",
        stderr(&retried)
    );
    let next = run(&data, Some(&fault), "add", &corpus);
    assert!(next.status.success(), "{}", stderr(&next));
    assert_set_aside(&data, &corpus);

    // A path outside the library is refused with words that say why.
    let outside = run(&data, None, "retry", root.path());
    assert!(!outside.status.success());
    assert!(
        stderr(&outside).contains("is not in a watched folder"),
        "{}",
        stderr(&outside)
    );

    // Changed, it is read again by the next pass.
    std::fs::write(&bad, "# Bad\n\nMended: the quinces are fine.\n").unwrap();
    let out = run(&data, None, "add", &corpus);
    assert!(out.status.success(), "{}", stderr(&out));
    let status = status(&data);
    assert_eq!(status["counts"]["documents"], GOOD as i64 + 1, "{status}");
}

/// Polls `folio status` until the library has indexed the good notes and
/// set the bad one aside, while `child` (a watcher) keeps running.
fn wait_for_set_aside(data: &Path, corpus: &Path, child: &mut Child, what: &str) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("{what} ended ({status}) after the bad file was set aside");
        }
        let s = status(data);
        let aside = s["errors"]
            .as_array()
            .is_some_and(|e| e.iter().any(|e| e["set_aside"] == true));
        if aside && s["counts"]["documents"] == GOOD as i64 {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(180), "{what}: {s}");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_set_aside(data, corpus);
}

/// Starts `start` until a start survives the bad file: each earlier one
/// must die of a signal, within 3 starts. Returns the live one.
fn start_until_it_survives(mut start: impl FnMut() -> Child, data: &Path, what: &str) -> Child {
    for _ in 0..3 {
        let mut child = start();
        let begun = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                assert!(
                    status.signal().is_some(),
                    "{what} ended without dying: {status}"
                );
                break;
            }
            let s = status(data);
            if s["errors"]
                .as_array()
                .is_some_and(|e| e.iter().any(|e| e["set_aside"] == true))
            {
                return child;
            }
            assert!(begun.elapsed() < Duration::from_secs(180), "{what}: {s}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    panic!("{what} still dies after 3 starts");
}

#[test]
fn folio_watch_sets_the_file_aside_and_keeps_watching() {
    for kind in DEATHS {
        watch_sets_the_file_aside(&format!("read:{kind}:{BAD}"));
    }
}

fn watch_sets_the_file_aside(fault: &str) {
    let root = tempfile::tempdir().unwrap();
    let corpus = corpus(root.path());
    let data = root.path().join("data");
    let queued = folio(&data, None)
        .args(["add", "--no-wait"])
        .arg(&corpus)
        .output()
        .unwrap();
    assert!(queued.status.success(), "{}", stderr(&queued));
    let watch = || {
        folio(&data, Some(fault))
            .arg("watch")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let what = format!("folio watch with FOLIO_FAULT={fault}");
    let mut watcher = start_until_it_survives(watch, &data, &what);
    wait_for_set_aside(&data, &corpus, &mut watcher, &what);
    // Still watching: a new note is indexed.
    std::fs::write(corpus.join("later.md"), "# Later\n\nA pear tree.\n").unwrap();
    let start = Instant::now();
    while status(&data)["counts"]["documents"] != GOOD as i64 + 1 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what}: the watcher stopped watching"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    watcher.kill().unwrap();
    watcher.wait().unwrap();
}

/// What the app runs (`src-tauri`'s engine: the library and its background
/// work), in a child process of this test binary, since the fault ends the
/// process: see [`the_apps_engine_sets_the_file_aside`].
#[tokio::test(flavor = "multi_thread")]
#[ignore = "run by the_apps_engine_sets_the_file_aside in a process of its own"]
async fn app_engine_child() {
    let data = PathBuf::from(std::env::var("FOLIO_QUARANTINE_DATA").unwrap());
    let library = std::sync::Arc::new(open(&data).await);
    library.jobs().restore_pause().await.unwrap();
    let background = common::wait::Background::start(&library);
    common::wait::eventually("the bad file set aside", || async {
        let status = library.status().await.unwrap();
        status.errors.iter().any(|e| e.set_aside) && status.counts.documents == GOOD as i64
    })
    .await;
    background.stop().await;
}

#[test]
fn the_apps_engine_sets_the_file_aside() {
    let readers = DEATHS.map(|kind| format!("read:{kind}:{BAD}"));
    for fault in readers.iter().chain([&format!("embed:stack:{BAD}")]) {
        app_engine_sets_the_file_aside(fault);
    }
}

fn app_engine_sets_the_file_aside(fault: &str) {
    let root = tempfile::tempdir().unwrap();
    let corpus = corpus(root.path());
    let data = root.path().join("data");
    let queued = folio(&data, None)
        .args(["add", "--no-wait"])
        .arg(&corpus)
        .output()
        .unwrap();
    assert!(queued.status.success(), "{}", stderr(&queued));
    let deaths = until_clean(
        || {
            let mut c = Command::new(std::env::current_exe().unwrap());
            c.args(["--exact", "app_engine_child", "--ignored", "--nocapture"])
                .env("FOLIO_QUARANTINE_DATA", &data)
                .env("FOLIO_FAULT", fault)
                .stderr(Stdio::piped());
            if fault.contains(":memory:") {
                limit_address_space(&mut c);
            }
            c
        },
        &format!("the app's engine with FOLIO_FAULT={fault}"),
    );
    assert!((1..=2).contains(&deaths), "{fault}: {deaths}");
    assert_set_aside(&data, &corpus);
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_9_around_a_set_aside_file_leaves_the_library_a_clean_run_leaves() {
    let root = tempfile::tempdir().unwrap();
    let corpus = corpus(root.path());
    let fault = format!("read:abort:{BAD}");
    let killed = root.path().join("killed");
    add_until_clean(&killed, &corpus, &fault);

    // More to index, and passes killed at random points while they do it.
    write_hotpotqa_passages(&corpus, 120);
    // FOLIO_KILL_SEED replays a failed run's delays (a 32-bit seed).
    let seed = common::soak::kill_seed() as u32;
    println!("kill delays from seed {seed}");
    for i in 0..4u32 {
        let mut child = folio(&killed, Some(&fault))
            .arg("add")
            .arg(&corpus)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let delay = 300 + (seed.wrapping_mul(2654435761).rotate_left(i * 7) % 2500);
        std::thread::sleep(Duration::from_millis(delay as u64));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
        }
        child.wait().unwrap();
        let library = open(&killed).await;
        assert_consistent(&library).await;
        library.close().await;
    }
    let last = run(&killed, Some(&fault), "add", &corpus);
    assert!(last.status.success(), "{}", stderr(&last));

    let clean = root.path().join("clean");
    add_until_clean(&clean, &corpus, &fault);
    let (a, b) = (open(&killed).await, open(&clean).await);
    assert_eq!(snapshot(&a).await, snapshot(&b).await);
    let aside = |s: folio_engine::library::Status| {
        s.errors
            .into_iter()
            .map(|e| (e.path, e.set_aside))
            .collect::<Vec<_>>()
    };
    let expected = vec![(corpus.join(BAD).to_string_lossy().into_owned(), true)];
    assert_eq!(aside(a.status().await.unwrap()), expected);
    assert_eq!(aside(b.status().await.unwrap()), expected);
    a.close().await;
    b.close().await;
}
