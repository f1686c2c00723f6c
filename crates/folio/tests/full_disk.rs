//! A full disk: `folio add` into a data folder on a 1 MiB tmpfs stops with an
//! error that says what happened and what to do, the store it leaves passes
//! every check, and once there is room the same command finishes the job
//! with an index equal to a clean one.

mod common;

use std::process::Command;

use common::engine::{assert_consistent, folio_json, open, snapshot, write_hotpotqa_passages};

const PASSAGES: usize = 400;

/// Mounts a 1 MiB tmpfs on $1 in a mount namespace of its own (with a user
/// namespace, so no root is needed, and the mount goes when the process
/// does), runs `folio --data-dir $1 add $3` with $2 as the binary, and copies
/// what it left, its stderr and its exit status into $4.
const ON_A_SMALL_DISK: &str = r#"
mount -t tmpfs -o size=1m tmpfs "$1" || exit 99
"$2" --data-dir "$1" add "$3" 2> "$4/.stderr"
echo $? > "$4/.status"
cp -a "$1"/. "$4"/
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_is_a_clear_error_and_corrupts_nothing() {
    let root = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(root.path()).unwrap();
    let corpus = root.join("passages");
    let (disk, data) = (root.join("disk"), root.join("data"));
    for dir in [&corpus, &disk, &data] {
        std::fs::create_dir(dir).unwrap();
    }
    write_hotpotqa_passages(&corpus, PASSAGES);

    let status = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c"])
        .arg(ON_A_SMALL_DISK)
        .arg("sh")
        .arg(&disk)
        .arg(env!("CARGO_BIN_EXE_folio"))
        .arg(&corpus)
        .arg(&data)
        .env("FOLIO_CONFIG", "/dev/null")
        .status()
        .unwrap();
    assert!(
        status.success(),
        "could not mount a small tmpfs in a user and mount namespace ({status}): \
         this test needs unshare(1) and unprivileged user namespaces"
    );
    let exit: i32 = std::fs::read_to_string(data.join(".status"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let stderr = std::fs::read_to_string(data.join(".stderr")).unwrap();
    assert_ne!(exit, 0, "folio add fit on the small disk: {stderr}");
    assert!(
        stderr.contains("the disk holding the index is full: free some space"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("full").count(),
        1,
        "the cause is said once: {stderr}"
    );

    let library = open(&data).await;
    assert_consistent(&library).await;
    let documents = library.store().counts().await.unwrap().documents;
    assert!(
        (documents as usize) < PASSAGES,
        "{documents} documents on a full disk"
    );
    library.close().await;

    let resumed = folio_json(&data, &["add", corpus.to_str().unwrap()]);
    assert_eq!(resumed["counts"]["documents"], PASSAGES as i64, "{resumed}");
    let clean = root.join("clean");
    folio_json(&clean, &["add", corpus.to_str().unwrap()]);
    let (a, b) = (open(&data).await, open(&clean).await);
    assert_consistent(&a).await;
    assert_eq!(snapshot(&a).await, snapshot(&b).await);
}
