//! Shared set-up for engine integration tests: real SQLite files in temp
//! dirs, the real embedding model from the kit, and the real `folio` binary.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use folio_engine::config::default_models_dir;
use folio_engine::llm::settings::SMOLLM2;
use folio_engine::pipeline::PassSummary;
use folio_engine::{Config, Library};
use sqlx::{Connection, SqliteConnection};

/// The fixtures the tests read, all in the repository (`samples/`, see
/// samples/README.md): the rust-book's chapters and questions, and a slice
/// of the HotpotQA corpus with its first dev questions.
pub fn samples() -> PathBuf {
    folio_engine::config::checkout().join("samples")
}

/// The rust-book's 112 markdown chapters.
pub fn rust_book() -> PathBuf {
    std::fs::canonicalize(samples().join("rust-book/docs"))
        .expect("samples/rust-book/docs is missing")
}

/// The kit's SmolLM2, which tests of plumbing answer with for speed (the
/// default, a Qwen model, is for tests that check an answer).
pub fn tiny_model() -> String {
    SMOLLM2.path(&default_models_dir()).display().to_string()
}

/// The built-in settings over `data_dir`, answering with [`tiny_model`].
pub fn plumbing_config(data_dir: &Path, max_file_size: Option<u64>) -> Config {
    let mut config = Config::new(Some(data_dir.to_path_buf()), max_file_size);
    config.llm.model = tiny_model();
    config
}

pub async fn open(data_dir: &Path) -> Library {
    Library::open(plumbing_config(data_dir, None))
        .await
        .expect("open library")
}

pub async fn open_with_limit(data_dir: &Path, max_file_size: u64) -> Library {
    Library::open(plumbing_config(data_dir, Some(max_file_size)))
        .await
        .expect("open library")
}

/// `folio add` as a library call: register, then run the queued job.
pub async fn ingest(library: &Library, path: &Path) -> PassSummary {
    let job = library.add(&[path.to_path_buf()]).await.expect("add");
    library
        .jobs()
        .run(job)
        .await
        .expect("ingest job")
        .expect("the new job is ours to run")
}

pub async fn scalar(library: &Library, sql: &str) -> i64 {
    sqlx::query_scalar(sql)
        .fetch_one(library.store().pool())
        .await
        .expect(sql)
}

/// Runs the real CLI against `data_dir`.
pub fn folio(data_dir: &Path, args: &[&str]) -> Output {
    folio_with_config(data_dir, None, args)
}

/// Runs the real CLI against `data_dir`, reading `config` (`FOLIO_CONFIG`)
/// when one is given.
pub fn folio_with_config(data_dir: &Path, config: Option<&Path>, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_folio"));
    match config {
        Some(config) => command.env("FOLIO_CONFIG", config),
        None => command.env("FOLIO_LLM_MODEL", tiny_model()),
    };
    command
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .output()
        .expect("run folio")
}

/// `folio watch` on `data_dir`, its output and messages in `log`.
pub fn folio_watch(data_dir: &Path, log: &Path) -> Child {
    let file = std::fs::File::create(log).unwrap();
    Command::new(env!("CARGO_BIN_EXE_folio"))
        .env("FOLIO_CONFIG", "/dev/null")
        .env("FOLIO_LLM_MODEL", tiny_model())
        .arg("--data-dir")
        .arg(data_dir)
        .arg("watch")
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .unwrap()
}

/// The file names of a trace's passages (or of anything else listed with
/// a `path`), in order.
pub fn files_of(list: &serde_json::Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let path = Path::new(p["path"].as_str().unwrap());
            path.file_name().unwrap().to_string_lossy().into_owned()
        })
        .collect()
}

pub fn folio_json(data_dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = folio(data_dir, &all);
    assert!(
        out.status.success(),
        "folio {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "folio {args:?}: bad JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Every invariant that ties the tables together: vectors and FTS rows exist
/// exactly for live chunks, SQLite's own checks pass.
pub async fn assert_consistent(library: &Library) {
    let chunks = scalar(library, "SELECT COUNT(*) FROM chunks").await;
    // The vector table is made when the first model is chosen; a kill
    // before that leaves a store that has none, and then no chunks either.
    let vector_table = scalar(
        library,
        "SELECT COUNT(*) FROM sqlite_master WHERE name = 'chunk_vectors_int8'",
    )
    .await;
    // An index from before int8 vectors, part way through its upgrade,
    // holds each chunk's vector in one table or the other.
    let legacy_table = scalar(
        library,
        "SELECT COUNT(*) FROM sqlite_master WHERE name = 'chunk_vectors'",
    )
    .await;
    if vector_table == 0 && legacy_table == 0 {
        assert_eq!(chunks, 0, "chunks stored before their vector table");
    } else {
        // A kill before the upgrade makes the int8 table leaves the f32 one
        // alone, whole.
        let (mut vectors, mut orphans) = (0, 0);
        if vector_table > 0 {
            vectors += scalar(library, "SELECT COUNT(*) FROM chunk_vectors_int8").await;
            orphans += scalar(
                library,
                "SELECT COUNT(*) FROM chunk_vectors_int8 WHERE rowid NOT IN (SELECT id FROM chunks)",
            )
            .await;
        }
        if legacy_table > 0 {
            let not_across = if vector_table > 0 {
                "SELECT COUNT(*) FROM chunk_vectors \
                 WHERE rowid NOT IN (SELECT rowid FROM chunk_vectors_int8)"
            } else {
                "SELECT COUNT(*) FROM chunk_vectors"
            };
            vectors += scalar(library, not_across).await;
            orphans += scalar(
                library,
                "SELECT COUNT(*) FROM chunk_vectors WHERE rowid NOT IN (SELECT id FROM chunks)",
            )
            .await;
        }
        assert_eq!(orphans, 0, "vectors without chunks");
        assert_eq!(vectors, chunks, "every chunk has exactly one vector");
    }
    let unembedded = scalar(
        library,
        "SELECT COUNT(*) FROM chunks WHERE embed_model_id IS NULL",
    )
    .await;
    assert_eq!(unembedded, 0);
    // The FTS index keeps no text (contentless): its rows are the chunks',
    // and FTS5 checks its own structure.
    let fts_strays = scalar(
        library,
        "SELECT (SELECT COUNT(*) FROM chunks_fts_docsize WHERE id NOT IN (SELECT id FROM chunks)) \
              + (SELECT COUNT(*) FROM chunks WHERE id NOT IN (SELECT id FROM chunks_fts_docsize))",
    )
    .await;
    assert_eq!(fts_strays, 0, "FTS rows and chunks differ");
    sqlx::query("INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')")
        .execute(library.store().pool())
        .await
        .expect("FTS index sound");
    // Every chunk's text can be read: its own, or ranges inside its nodes.
    let textless = scalar(
        library,
        "SELECT (SELECT COUNT(*) FROM chunks WHERE ranges IS NULL AND text = '') \
              + (SELECT COUNT(*) FROM chunks c, json_each(c.ranges) r WHERE NOT EXISTS \
                 (SELECT 1 FROM nodes n WHERE n.document_id = c.document_id \
                  AND n.ordinal = r.value->>0 AND r.value->>2 <= length(CAST(n.text AS BLOB))))",
    )
    .await;
    assert_eq!(textless, 0, "chunks whose text cannot be read");
    // On a fresh connection: SQLite 3.46's integrity pragma checks the FTS5
    // index against the structure a connection cached at its last search,
    // so a pooled connection that searched before others wrote reports
    // "malformed inverted index" for a sound index.
    let mut fresh = SqliteConnection::connect_with(&library.store().pool().connect_options())
        .await
        .unwrap();
    let check: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&mut fresh)
        .await
        .unwrap();
    assert_eq!(check, "ok");
    let dangling_nodes = scalar(
        library,
        "SELECT COUNT(*) FROM nodes WHERE document_id NOT IN (SELECT id FROM documents)",
    )
    .await;
    assert_eq!(dangling_nodes, 0);
    let dangling_gain = scalar(
        library,
        "SELECT (SELECT COUNT(*) FROM gain_nodes WHERE chunk_id NOT IN (SELECT id FROM chunks)) \
              + (SELECT COUNT(*) FROM gain_edges WHERE source_chunk NOT IN (SELECT id FROM chunks) \
                                                   OR target_chunk NOT IN (SELECT id FROM chunks))",
    )
    .await;
    assert_eq!(dangling_gain, 0, "gain-graph rows for chunks that are gone");
}

/// The first `n` passages of the HotpotQA sample, one text file each:
/// enough of them make ingestion take many batches.
pub fn write_hotpotqa_passages(dir: &Path, n: usize) {
    write_hotpotqa_passages_from(&samples().join("hotpotqa"), dir, n)
}

/// The first `n` passages of `hotpotqa/corpus.jsonl` (the sample, or the
/// whole corpus for the full-size soak), one text file each; a corpus with
/// fewer than `n` is an error, not a smaller test.
pub fn write_hotpotqa_passages_from(hotpotqa: &Path, dir: &Path, n: usize) {
    let path = hotpotqa.join("corpus.jsonl");
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut written = 0;
    for (i, line) in std::io::BufReader::new(file).lines().take(n).enumerate() {
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        let body = format!(
            "{}\n\n{}\n",
            v["title"].as_str().unwrap(),
            v["text"].as_str().unwrap()
        );
        std::fs::write(dir.join(format!("passage-{i:05}.txt")), body).unwrap();
        written += 1;
    }
    assert_eq!(
        written,
        n,
        "{} holds {written} passages, {n} asked for",
        path.display()
    );
}

/// Per document: content hash and chunk texts, the things a resumed ingest
/// must reproduce exactly.
pub async fn snapshot(library: &Library) -> BTreeMap<String, (Option<String>, Vec<String>)> {
    let mut out = BTreeMap::new();
    for d in library.store().all_documents().await.unwrap() {
        let chunks = library
            .store()
            .chunks_of(d.id)
            .await
            .unwrap()
            .into_iter()
            .map(|c| c.text)
            .collect();
        out.insert(d.path.clone(), (d.hash.clone(), chunks));
    }
    out
}

/// Each chunk's stored int8 vector, by chunk id.
pub async fn int8_vectors(library: &Library) -> BTreeMap<i64, Vec<u8>> {
    sqlx::query_as::<_, (i64, Vec<u8>)>("SELECT rowid, embedding FROM chunk_vectors_int8")
        .fetch_all(library.store().pool())
        .await
        .unwrap()
        .into_iter()
        .collect()
}

/// Turns an index into one made before int8 vectors: every vector back in
/// an f32 `chunk_vectors` table (its int8 values scaled back, so the
/// upgrade must give the same bytes again), no int8 table. `copies` more
/// of every chunk, each with its vector, make the upgrade long enough to
/// interrupt. Returns every chunk's int8 vector as the upgrade must leave it.
pub async fn downgrade_to_f32_vectors(library: &Library, copies: usize) -> BTreeMap<i64, Vec<u8>> {
    let pool = library.store().pool();
    let mut tx = pool.begin().await.unwrap();
    let mut vectors: BTreeMap<i64, Vec<u8>> =
        sqlx::query_as::<_, (i64, Vec<u8>)>("SELECT rowid, embedding FROM chunk_vectors_int8")
            .fetch_all(&mut *tx)
            .await
            .unwrap()
            .into_iter()
            .collect();
    let originals: Vec<(i64, Vec<u8>)> = vectors.clone().into_iter().collect();
    let ids: Vec<i64> = vectors.keys().copied().collect();
    let texts = library.store().chunks_by_id(&ids).await.unwrap();
    assert_eq!(texts.len(), ids.len(), "a chunk without its vector");
    for copy in 1..=copies as i64 {
        for ((id, v), chunk) in originals.iter().zip(&texts) {
            let new_id = sqlx::query(
                "INSERT INTO chunks(document_id, ordinal, text, ranges, heading_path, node_ordinals, \
                 span_start, span_end, page, boxes, text_hash, embed_model_id) \
                 SELECT document_id, ordinal + ? * 1000000, text, ranges, heading_path, node_ordinals, \
                 span_start, span_end, page, boxes, text_hash, embed_model_id FROM chunks WHERE id = ?",
            )
            .bind(copy)
            .bind(id)
            .execute(&mut *tx)
            .await
            .unwrap()
            .last_insert_rowid();
            sqlx::query("INSERT INTO chunks_fts(rowid, text, heading_path) VALUES (?, ?, ?)")
                .bind(new_id)
                .bind(&chunk.text)
                .bind(&chunk.heading_path)
                .execute(&mut *tx)
                .await
                .unwrap();
            vectors.insert(new_id, v.clone());
        }
    }
    let dim = originals.first().map_or(384, |(_, v)| v.len());
    for sql in [
        "DROP TRIGGER chunk_vectors_int8_delete".to_string(),
        "DROP TABLE chunk_vectors_int8".to_string(),
        format!("CREATE VIRTUAL TABLE chunk_vectors USING vec0(embedding float[{dim}])"),
        "CREATE TRIGGER chunk_vectors_delete AFTER DELETE ON chunks BEGIN \
         DELETE FROM chunk_vectors WHERE rowid = old.id; END"
            .to_string(),
    ] {
        sqlx::query(&sql).execute(&mut *tx).await.unwrap();
    }
    for (id, v) in &vectors {
        let int8: Vec<i8> = v.iter().map(|&b| b as i8).collect();
        let f32_bytes: Vec<u8> = folio_engine::store::quantize::dequantize(&int8)
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        sqlx::query("INSERT INTO chunk_vectors(rowid, embedding) VALUES (?, ?)")
            .bind(id)
            .bind(f32_bytes)
            .execute(&mut *tx)
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    vectors
}
