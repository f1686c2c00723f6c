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
const MIGRATIONS: [(i64, &str, &str); 9] = [
    (1, "init", include_str!("../../migrations/0001_init.sql")),
    (2, "runs", include_str!("../../migrations/0002_runs.sql")),
    (
        3,
        "gain graph",
        include_str!("../../migrations/0003_gain_graph.sql"),
    ),
    (
        4,
        "ocr pages",
        include_str!("../../migrations/0004_ocr_pages.sql"),
    ),
    (
        5,
        "chunk boxes",
        include_str!("../../migrations/0005_chunk_boxes.sql"),
    ),
    (
        6,
        "threads",
        include_str!("../../migrations/0006_threads.sql"),
    ),
    (7, "scope", include_str!("../../migrations/0007_scope.sql")),
    (
        8,
        "section summaries",
        include_str!("../../migrations/0008_section_summaries.sql"),
    ),
    (
        9,
        "call shaping",
        include_str!("../../migrations/0009_call_shaping.sql"),
    ),
];

#[derive(Debug)]
struct Embedded;

impl MigrationSource<'static> for Embedded {
    fn resolve(self) -> BoxFuture<'static, Result<Vec<Migration>, BoxDynError>> {
        Box::pin(async {
            Ok(MIGRATIONS
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
    Migrator::new(Embedded).await
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// What sqlx itself reads from the folder: a file added there but not
    /// listed above, or an edited description, fails here.
    #[tokio::test]
    async fn the_listed_migrations_are_the_folders_as_sqlx_reads_it() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
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
}
