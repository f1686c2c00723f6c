//! The schema's migrations (`migrations/*.sql`), compiled into the binary.
//!
//! They are listed here rather than found by `sqlx::migrate!`: that macro
//! is all Folio used of sqlx's compile-time crates, which bring a second
//! build of SQLite, sqlx and tokio for the build host (some 150 s of CPU
//! in a clean build's cargo timings). Versions, descriptions and checksums are
//! the ones `migrate!` gave, so indexes it created open unchanged; a test
//! reads the folder the way sqlx does and compares.

use std::borrow::Cow;

use futures::future::BoxFuture;
use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};

/// Version, description (the file name's, underscores as spaces) and SQL
/// of each file in `migrations/`, in order. A new migration is a new file
/// there and a new line here.
const MIGRATIONS: [(i64, &str, &str); 18] = [
    (1, "init", include_str!("../../../migrations/0001_init.sql")),
    (2, "runs", include_str!("../../../migrations/0002_runs.sql")),
    (
        3,
        "gain graph",
        include_str!("../../../migrations/0003_gain_graph.sql"),
    ),
    (
        4,
        "ocr pages",
        include_str!("../../../migrations/0004_ocr_pages.sql"),
    ),
    (
        5,
        "chunk boxes",
        include_str!("../../../migrations/0005_chunk_boxes.sql"),
    ),
    (
        6,
        "threads",
        include_str!("../../../migrations/0006_threads.sql"),
    ),
    (
        7,
        "scope",
        include_str!("../../../migrations/0007_scope.sql"),
    ),
    (
        8,
        "section summaries",
        include_str!("../../../migrations/0008_section_summaries.sql"),
    ),
    (
        9,
        "call shaping",
        include_str!("../../../migrations/0009_call_shaping.sql"),
    ),
    (
        10,
        "text once",
        include_str!("../../../migrations/0010_text_once.sql"),
    ),
    (
        11,
        "vector log",
        include_str!("../../../migrations/0011_vector_log.sql"),
    ),
    (
        12,
        "cut off",
        include_str!("../../../migrations/0012_cut_off.sql"),
    ),
    (
        13,
        "cached tokens",
        include_str!("../../../migrations/0013_cached_tokens.sql"),
    ),
    (
        14,
        "set aside",
        include_str!("../../../migrations/0014_set_aside.sql"),
    ),
    (
        15,
        "notes",
        include_str!("../../../migrations/0015_notes.sql"),
    ),
    (
        16,
        "tables",
        include_str!("../../../migrations/0016_tables.sql"),
    ),
    (
        17,
        "collection tags",
        include_str!("../../../migrations/0017_collection_tags.sql"),
    ),
    (
        18,
        "slide tables",
        include_str!("../../../migrations/0018_slide_tables.sql"),
    ),
];

/// The first `.0` of [`MIGRATIONS`] (tests make older indexes with fewer).
#[derive(Debug)]
struct Embedded(usize);

impl MigrationSource<'static> for Embedded {
    fn resolve(self) -> BoxFuture<'static, Result<Vec<Migration>, BoxDynError>> {
        Box::pin(async move {
            Ok(MIGRATIONS[..self.0]
                .iter()
                .map(|&(version, description, sql)| {
                    Migration::new(
                        version,
                        Cow::Borrowed(description),
                        MigrationType::Simple,
                        Cow::Borrowed(sql),
                        sql.starts_with("-- no-transaction"),
                    )
                })
                .collect())
        })
    }
}

/// The migrator that brings an index's schema up to date.
pub(super) async fn migrator() -> Result<Migrator, sqlx::migrate::MigrateError> {
    Migrator::new(Embedded(MIGRATIONS.len())).await
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// What sqlx itself reads from the folder: a file added there but not
    /// listed above, or an edited description, fails here.
    #[tokio::test]
    async fn the_listed_migrations_are_the_folders_as_sqlx_reads_it() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
        let read = Migrator::new(folder.as_path()).await.unwrap();
        let listed = migrator().await.unwrap();
        let shape = |m: &Migrator| {
            m.iter()
                .map(|m| {
                    let kind = format!("{:?}", m.migration_type);
                    (
                        m.version,
                        m.description.to_string(),
                        kind,
                        m.checksum.to_vec(),
                        m.no_tx,
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(shape(&listed), shape(&read));
    }

    /// An index from before chunk text was stored once: its chunks keep
    /// their own text, and the full-text index built again from it finds
    /// them and forgets them when they go.
    #[tokio::test]
    async fn chunks_from_before_text_once_keep_their_text_and_search() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.sqlite");
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true)
            .foreign_keys(true);
        let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
        Migrator::new(Embedded(9))
            .await
            .unwrap()
            .run(&pool)
            .await
            .unwrap();
        for sql in [
            "INSERT INTO folders(id, path, added_at) VALUES (1, '/d', 0)",
            "INSERT INTO documents(id, folder_id, path, size, mtime_ns, status, indexed_at) \
             VALUES (1, 1, '/d/a.md', 1, 1, 'indexed', 0)",
            "INSERT INTO nodes(document_id, ordinal, kind, depth, text, span_start, span_end) \
             VALUES (1, 0, 'structure', 0, 'Doc', 0, 0), (1, 1, 'content', 1, ' legacy words ', 0, 14)",
            "INSERT INTO chunks(document_id, ordinal, text, heading_path, node_ordinals, span_start, span_end, text_hash) \
             VALUES (1, 0, 'legacy words', 'Doc', '[1]', 0, 14, 7)",
        ] {
            sqlx::query(sql).execute(&pool).await.unwrap();
        }
        pool.close().await;

        let store = crate::Store::open(&path).await.unwrap();
        let chunks = store.chunks_of(1).await.unwrap();
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].text, "legacy words");
        assert_eq!(store.bm25("\"legacy\"", 5, None).await.unwrap().len(), 1);
        sqlx::query("DELETE FROM documents")
            .execute(store.pool())
            .await
            .unwrap();
        assert!(store.bm25("\"legacy\"", 5, None).await.unwrap().is_empty());
        let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chunks_fts_docsize")
            .fetch_one(store.pool())
            .await
            .unwrap();
        assert_eq!(rows, 0);
    }
}
