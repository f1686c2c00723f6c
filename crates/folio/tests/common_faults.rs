//! The faults a desktop meets every week, each through the real CLI with a
//! defined outcome (docs/hardening.md, "Common faults"):
//!
//! - a data folder that is read-only: one clear error, nothing changed, and
//!   the same command works once it is writable;
//! - a watched folder that disappears (an unmounted drive; a deleted folder
//!   stands in): its documents are kept and shown missing, and when it is
//!   back only what changed is read;
//! - an mtime in the future: edits are still seen;
//! - the kit's embedding model damaged after setup: refused before it
//!   embeds anything, the library kept.
//!
//! A file truncated or rewritten while it is read is `source_file`'s unit
//! test (a writer thread races the reads); a full disk is `full_disk.rs`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::engine::{assert_consistent, folio, folio_watch, open, snapshot};

fn notes(root: &Path) -> PathBuf {
    let dir = root.join("notes");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tides.md"), "# Tides\n\nThe tide turns at noon.\n").unwrap();
    std::fs::write(
        dir.join("wicks.md"),
        "# Wicks\n\nKeepers trim the wicks at dusk.\n",
    )
    .unwrap();
    std::fs::canonicalize(dir).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `folio` run with `data_dir` bind-mounted read-only over itself, in a
/// user and mount namespace of its own (no root needed; the mount goes
/// with the process).
fn folio_on_read_only(data_dir: &Path, args: &[&str]) -> Output {
    let output = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c"])
        .arg(r#"mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" || exit 99; d="$1"; b="$2"; shift 2; exec "$b" --data-dir "$d" "$@""#)
        .arg("sh")
        .arg(data_dir)
        .arg(env!("CARGO_BIN_EXE_folio"))
        .args(args)
        .env("FOLIO_CONFIG", "/dev/null")
        .env("FOLIO_LLM_MODEL", common::engine::tiny_model())
        .output()
        .unwrap();
    assert_ne!(
        output.status.code(),
        Some(99),
        "could not bind-mount the data folder read-only in a user and mount namespace: \
         this test needs unshare(1) and unprivileged user namespaces"
    );
    output
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_data_folder_is_one_clear_error_and_nothing_changes() {
    let root = tempfile::tempdir().unwrap();
    let docs = notes(root.path());
    let data = root.path().join("data");
    assert!(folio(&data, &["add", docs.to_str().unwrap()])
        .status
        .success());
    std::fs::write(
        docs.join("herons.md"),
        "# Herons\n\nHerons wade at low tide.\n",
    )
    .unwrap();
    let before = snapshot(&open(&data).await).await;

    for args in [
        vec!["add", docs.to_str().unwrap()],
        vec!["status"],
        vec!["search", "tide"],
    ] {
        let out = folio_on_read_only(&data, &args);
        assert!(!out.status.success(), "folio {args:?} worked read-only");
        let said = stderr(&out);
        assert!(
            said.contains("cannot be written: its folder is read-only, or not yours")
                && said.contains("nothing in it was changed"),
            "folio {args:?}: {said}"
        );
        assert_eq!(said.matches("read-only").count(), 1, "said once: {said}");
    }
    let library = open(&data).await;
    assert_eq!(snapshot(&library).await, before, "nothing changed");
    library.close().await;

    let out = folio(&data, &["add", docs.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let library = open(&data).await;
    assert_eq!(snapshot(&library).await.len(), 3);
    assert_consistent(&library).await;
}

/// Polls `check` for up to a minute (a guard against hangs, not a timing).
fn eventually(what: &str, check: impl Fn() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for: {what}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_watched_folder_that_disappears_keeps_its_index_and_comes_back() {
    let root = tempfile::tempdir().unwrap();
    let docs = notes(root.path());
    let data = root.path().join("data");
    assert!(folio(&data, &["add", docs.to_str().unwrap()])
        .status
        .success());
    let log = root.path().join("watch.log");
    let mut watcher = folio_watch(&data, &log);
    eventually("the watcher starts", || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("watching"))
    });

    // Unmounted: the folder and everything in it gone.
    let away = root.path().join("away");
    std::fs::create_dir(&away).unwrap();
    for name in ["tides.md", "wicks.md"] {
        std::fs::copy(docs.join(name), away.join(name)).unwrap();
    }
    std::fs::remove_dir_all(&docs).unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let status = folio(&data, &["status"]);
    let said = stdout(&status);
    assert!(
        said.contains("(missing: its 2 documents are kept until it is back"),
        "{said}"
    );
    assert!(said.contains("documents: 2 indexed"), "{said}");
    let found = stdout(&folio(&data, &["search", "tide"]));
    assert!(found.contains("tides.md"), "still searchable: {found}");

    // Back, as a fresh copy (new inodes and mtimes), with one note more.
    std::fs::create_dir(&docs).unwrap();
    for name in ["tides.md", "wicks.md"] {
        std::fs::copy(away.join(name), docs.join(name)).unwrap();
    }
    std::fs::write(
        docs.join("herons.md"),
        "# Herons\n\nHerons wade at low tide.\n",
    )
    .unwrap();
    eventually("the new note is indexed", || {
        stdout(&folio(&data, &["status"])).contains("documents: 3 indexed")
    });
    let said = stdout(&folio(&data, &["status"]));
    assert!(!said.contains("missing"), "{said}");
    watcher.kill().unwrap();
    watcher.wait().unwrap();
    let passes = std::fs::read_to_string(&log).unwrap();
    assert!(
        passes.contains("indexed 1 · unchanged 2 · failed 0 · removed 0"),
        "only the new note is read, the others are found unchanged: {passes}"
    );
    assert!(!passes.contains("removed 2"), "{passes}");
}

#[test]
fn an_mtime_in_the_future_does_not_hide_edits() {
    let root = tempfile::tempdir().unwrap();
    let docs = notes(root.path());
    let data = root.path().join("data");
    let note = docs.join("tides.md");
    let future = std::time::SystemTime::now() + Duration::from_secs(100 * 365 * 24 * 3600);
    let set_mtime = |when| {
        std::fs::File::options()
            .write(true)
            .open(&note)
            .unwrap()
            .set_modified(when)
            .unwrap()
    };
    set_mtime(future);
    assert!(folio(&data, &["add", docs.to_str().unwrap()])
        .status
        .success());
    // An edit moves the mtime back to now: earlier than what is stored.
    std::fs::write(&note, "# Tides\n\nThe tide turns at dusk now.\n").unwrap();
    let out = folio(&data, &["add", docs.to_str().unwrap()]);
    assert!(stdout(&out).contains("indexed 1"), "{}", stdout(&out));
    assert!(stdout(&folio(&data, &["search", "dusk now"])).contains("tides.md"));
    // And one to another future time, with the same size.
    std::fs::write(&note, "# Tides\n\nThe tide turns at dawn now.\n").unwrap();
    set_mtime(future + Duration::from_secs(60));
    let out = folio(&data, &["add", docs.to_str().unwrap()]);
    assert!(stdout(&out).contains("indexed 1"), "{}", stdout(&out));
}

/// A models folder that links to the kit's, with a copy of the embedding
/// model that can be damaged.
fn models_with_own_embedder(root: &Path) -> PathBuf {
    let kit = folio_engine::config::default_models_dir();
    let models = root.join("models");
    std::fs::create_dir(&models).unwrap();
    for entry in std::fs::read_dir(&kit).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == folio_engine::embed::KIT_MODEL_DIR {
            let copy = models.join(&name);
            std::fs::create_dir(&copy).unwrap();
            for file in std::fs::read_dir(entry.path()).unwrap() {
                let file = file.unwrap();
                std::fs::copy(file.path(), copy.join(file.file_name())).unwrap();
            }
        } else {
            std::os::unix::fs::symlink(entry.path(), models.join(&name)).unwrap();
        }
    }
    models
}

fn folio_with_models(models: &Path, data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_folio"))
        .env("FOLIO_CONFIG", "/dev/null")
        .env("FOLIO_MODELS_DIR", models)
        .env("FOLIO_LLM_MODEL", common::engine::tiny_model())
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kit_embedding_model_damaged_after_setup_is_refused_and_the_library_kept() {
    let root = tempfile::tempdir().unwrap();
    let docs = notes(root.path());
    let data = root.path().join("data");
    let models = models_with_own_embedder(root.path());
    let onnx = models
        .join(folio_engine::embed::KIT_MODEL_DIR)
        .join("model.onnx");
    let good = std::fs::read(&onnx).unwrap();
    let out = folio_with_models(&models, &data, &["add", docs.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::write(
        docs.join("herons.md"),
        "# Herons\n\nHerons wade at low tide.\n",
    )
    .unwrap();
    let before = snapshot(&open(&data).await).await;

    // Zeros over some weights: ONNX Runtime loads it and embeds nonsense
    // under a new name; and a truncated file, which it cannot read.
    let mut zeroed = good.clone();
    zeroed[good.len() / 2..good.len() / 2 + 4096].fill(0);
    for damaged in [zeroed, good[..1000].to_vec()] {
        std::fs::write(&onnx, &damaged).unwrap();
        for args in [vec!["add", docs.to_str().unwrap()], vec!["search", "tide"]] {
            let out = folio_with_models(&models, &data, &args);
            let said = stderr(&out);
            assert!(
                !out.status.success(),
                "folio {args:?} ran on a damaged model"
            );
            assert!(
                said.contains(&format!(
                    "the embedding model at {} is damaged",
                    onnx.display()
                )) && said.contains("run scripts/setup.sh"),
                "folio {args:?}: {said}"
            );
        }
    }
    let library = open(&data).await;
    assert_eq!(snapshot(&library).await, before, "nothing changed");
    library.close().await;

    std::fs::write(&onnx, &good).unwrap();
    let out = folio_with_models(&models, &data, &["add", docs.to_str().unwrap()]);
    assert!(stdout(&out).contains("indexed 1"), "{}", stderr(&out));
}

/// The pinned blake3 the loader checks is the hash of the file
/// scripts/kit.manifest pins by sha256.
#[test]
fn the_kit_model_hash_agrees_with_the_manifest() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/kit.manifest");
    let manifest = std::fs::read_to_string(manifest).unwrap();
    let wanted = format!("file {}/model.onnx ", folio_engine::embed::KIT_MODEL_DIR);
    let sha256 = manifest
        .lines()
        .find_map(|l| l.strip_prefix(&wanted))
        .expect("the manifest pins the kit's model")
        .trim();
    let onnx = folio_engine::config::default_models_dir()
        .join(folio_engine::embed::KIT_MODEL_DIR)
        .join("model.onnx");
    let out = Command::new("sha256sum").arg(&onnx).output().unwrap();
    assert_eq!(&stdout(&out)[..64], sha256, "the kit placed another file");
    let bytes = std::fs::read(&onnx).unwrap();
    assert_eq!(
        blake3::hash(&bytes).to_hex().as_str(),
        folio_engine::embed::KIT_MODEL_BLAKE3
    );
}
