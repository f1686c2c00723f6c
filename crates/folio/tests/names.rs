//! Names that are not UTF-8, through the real CLI: indexed by their real
//! bytes, shown with U+FFFD where the bytes say nothing, found by search,
//! followed by `folio watch` through an edit and a rename, cited and
//! exported, and read back by their keys the way the app's PDF viewer
//! reads them.

mod common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::engine::{folio, folio_json, folio_watch, open};
use common::fixtures::pdf_bytes;
use folio_engine::path_text;
use serde_json::Value;

/// A Latin-1 name and one that differs from it only in an undecodable
/// byte: two documents, though both show as `caf\u{fffd}.md`.
const CAFE: &[u8] = b"caf\xe9.md";
const CAFE_TOO: &[u8] = b"caf\xe8.md";
const LEDGER: &[u8] = b"ledger-\xff.pdf";

fn named(dir: &Path, name: &[u8]) -> PathBuf {
    dir.join(OsStr::from_bytes(name))
}

fn stdout(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The paths (keys) of the hits of `folio search query`.
fn hits(data: &Path, query: &str) -> Vec<String> {
    folio_json(data, &["search", query])
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap().to_string())
        .collect()
}

/// Polls until `check` holds (a hang guard of a minute).
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < Duration::from_secs(60), "never: {what}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn names_that_are_not_utf8_are_indexed_searched_watched_cited_and_opened() {
    let root = tempfile::tempdir().unwrap();
    let docs = std::fs::canonicalize(root.path()).unwrap().join("notes");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(
        named(&docs, CAFE),
        "# The café\n\nThe café bakes quince tarts on Tuesdays.\n",
    )
    .unwrap();
    std::fs::write(
        named(&docs, CAFE_TOO),
        "# The other café\n\nThe other café roasts chestnuts in winter.\n",
    )
    .unwrap();
    let ledger = pdf_bytes(
        Some("Harbour ledger"),
        &["The harbour ledger records forty barrels of herring."],
        &[],
    );
    std::fs::write(named(&docs, LEDGER), &ledger).unwrap();
    let data = root.path().join("data");

    let added = folio(&data, &["add", docs.to_str().unwrap()]);
    stdout(&added);
    let status = folio_json(&data, &["status"]);
    assert_eq!(status["counts"]["documents"], 3, "{status}");
    assert_eq!(status["errors"], Value::Array(vec![]), "{status}");

    // Found by search, keyed losslessly, shown lossily.
    let cafe = path_text::to_text(&named(&docs, CAFE));
    assert_eq!(hits(&data, "quince tarts")[0], cafe);
    assert_ne!(cafe, path_text::to_text(&named(&docs, CAFE_TOO)));
    let shown = stdout(&folio(&data, &["search", "quince tarts"]));
    assert!(shown.contains("caf\u{fffd}.md"), "{shown}");
    assert!(
        !shown.contains('\u{f7e9}'),
        "a key's escape leaked: {shown}"
    );

    // The app's viewer names a document by its key: its tree and the PDF's
    // own bytes come back.
    let library = open(&data).await;
    let ledger_key = path_text::to_text(&named(&docs, LEDGER));
    let bytes = library
        .pdf_bytes(&path_text::to_path(&ledger_key))
        .await
        .unwrap();
    assert_eq!(bytes, ledger);
    let tree = library.tree(&path_text::to_path(&cafe)).await.unwrap();
    assert_eq!(tree.document.path, cafe);
    library.close().await;

    // Cited by an answer, and exported with links to the real bytes.
    let asked = folio_json(
        &data,
        &[
            "ask",
            "How many barrels does the harbour ledger record?",
            "--method",
            "vanilla-rag",
            "-k",
            "3",
            "--temperature",
            "0",
            "--max-tokens",
            "60",
        ],
    );
    let citations = asked["run"]["citations"].as_array().unwrap();
    assert!(!citations.is_empty(), "{asked}");
    for c in citations {
        let key = c["path"].as_str().unwrap();
        assert!(path_text::to_path(key).exists(), "{key:?} names no file");
    }
    let id = asked["run"]["id"].to_string();
    let file = root.path().join("answer.md");
    stdout(&folio(
        &data,
        &["export", &id, "-o", file.to_str().unwrap()],
    ));
    let markdown = std::fs::read_to_string(&file).unwrap();
    assert!(markdown.contains('\u{fffd}'), "{markdown}");
    let linked = ["caf%E9.md", "caf%E8.md", "ledger-%FF.pdf"];
    assert!(
        linked.iter().any(|name| markdown.contains(name)),
        "{markdown}"
    );

    // Watched: an edit is read again, a rename to another such name moves it.
    let log = root.path().join("watch.log");
    let mut watch = folio_watch(&data, &log);
    std::thread::sleep(Duration::from_secs(2));
    std::fs::write(
        named(&docs, CAFE),
        "# The café\n\nThe café now bakes plum cakes on Fridays.\n",
    )
    .unwrap();
    eventually("the edit indexed", || {
        hits(&data, "plum cakes Fridays").first() == Some(&cafe)
    });
    let moved = named(&docs, b"r\xe9sum\xe9.md");
    std::fs::rename(named(&docs, CAFE), &moved).unwrap();
    let moved_key = path_text::to_text(&moved);
    eventually("the rename followed", || {
        let status = folio_json(&data, &["status"]);
        let paths: Vec<&str> = status["documents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["path"].as_str().unwrap())
            .collect();
        paths.contains(&moved_key.as_str()) && !paths.contains(&cafe.as_str())
    });
    // SAFETY: kill(2) on a child this test started and has not reaped.
    unsafe { libc::kill(watch.id() as libc::pid_t, libc::SIGINT) };
    watch.wait().unwrap();
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(!said.contains('\u{f7e9}'), "a key's escape leaked: {said}");
    let status = folio_json(&data, &["status"]);
    assert_eq!(status["counts"]["documents"], 3, "{status}");
    assert_eq!(status["errors"], Value::Array(vec![]), "{status}");
}
