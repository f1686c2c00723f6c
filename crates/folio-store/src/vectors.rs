//! The sqlite-vec table of chunk vectors, int8 (`quantize.rs`). Its
//! dimension and meaning belong to one embedding model; when the model
//! changes the table is rebuilt and every chunk is marked for re-embedding,
//! so vectors of two models never mix.
//!
//! Indexes made before int8 hold their vectors as f32 in `chunk_vectors`.
//! [`Store::upgrade_vectors`] copies them into the int8 table a batch a
//! transaction, remembering how far it got, and drops the f32 table once
//! every vector is across: a kill anywhere leaves either table whole, and
//! the next open goes on from the last batch.

use std::time::Instant;

use sqlx::SqliteConnection;

use super::documents::CHUNK_TEXT;
use super::quantize;
use super::scope::{chunks_in, DocumentSet};
use super::{Result, Store};
use folio_core::events::Progress;

/// The embedding model the stored vectors come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectorSpace {
    pub model_id: i64,
    pub name: String,
    pub dim: usize,
}

const ACTIVE_MODEL_KEY: &str = "vector_model";
pub(crate) const VERSION_KEY: &str = "vectors_version";
const VEC_CHUNK_SLOTS: usize = 128;
/// The vector table and its delete trigger.
pub(super) const TABLE: &str = "chunk_vectors_int8";
const TABLE_TRIGGER: &str = "chunk_vectors_int8_delete";
/// The f32 table of indexes made before int8, and its trigger.
const LEGACY_TABLE: &str = "chunk_vectors";
const LEGACY_TRIGGER: &str = "chunk_vectors_delete";
/// The last chunk whose f32 vector has been copied into the int8 table.
const UPGRADED_TO_KEY: &str = "vectors_upgraded_to";
/// Vectors copied per transaction while upgrading.
const UPGRADE_BATCH: i64 = 2_000;

/// Counts changes to the vector table; called inside every transaction that
/// may add or remove vectors, so in-memory copies can tell they are stale.
pub(crate) async fn bump_vectors_version(conn: &mut SqliteConnection) -> Result<()> {
    sqlx::query(
        "INSERT INTO settings(key, value) VALUES (?, '1') \
         ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
    )
    .bind(VERSION_KEY)
    .execute(conn)
    .await?;
    Ok(())
}

pub(super) async fn vectors_version_in(conn: &mut SqliteConnection) -> Result<i64> {
    let v: Option<String> = sqlx::query_scalar("SELECT value FROM settings WHERE key = ?")
        .bind(VERSION_KEY)
        .fetch_optional(conn)
        .await?;
    Ok(v.and_then(|v| v.parse().ok()).unwrap_or(0))
}

async fn table_exists(conn: &mut SqliteConnection, name: &str) -> Result<bool> {
    Ok(
        sqlx::query_scalar("SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE name = ?)")
            .bind(name)
            .fetch_one(conn)
            .await?,
    )
}

async fn drop_table(conn: &mut SqliteConnection, table: &str, trigger: &str) -> Result<()> {
    sqlx::query(&format!("DROP TRIGGER IF EXISTS {trigger}"))
        .execute(&mut *conn)
        .await?;
    sqlx::query(&format!("DROP TABLE IF EXISTS {table}"))
        .execute(conn)
        .await?;
    Ok(())
}

/// An empty int8 table of `dim` dimensions whose rows go with their chunks.
async fn create_table(conn: &mut SqliteConnection, dim: usize) -> Result<()> {
    // sqlite-vec zero-fills a whole chunk of slots when it starts one;
    // small chunks keep the bytes written ahead of use small.
    sqlx::query(&format!(
        "CREATE VIRTUAL TABLE {TABLE} USING vec0(embedding int8[{dim}], chunk_size={VEC_CHUNK_SLOTS})"
    ))
    .execute(&mut *conn)
    .await?;
    sqlx::query(&format!(
        "CREATE TRIGGER {TABLE_TRIGGER} AFTER DELETE ON chunks BEGIN \
         DELETE FROM {TABLE} WHERE rowid = old.id; END"
    ))
    .execute(conn)
    .await?;
    Ok(())
}

/// Writes chunk `id`'s vector (a [`quantize::to_blob`]), replacing any.
async fn put_vector(conn: &mut SqliteConnection, id: i64, blob: &[u8]) -> Result<()> {
    sqlx::query(&format!("DELETE FROM {TABLE} WHERE rowid = ?"))
        .bind(id)
        .execute(&mut *conn)
        .await?;
    insert_vector(conn, id, blob).await
}

/// Writes the vector of chunk `id`, which has none (a new chunk).
pub(super) async fn insert_vector(conn: &mut SqliteConnection, id: i64, blob: &[u8]) -> Result<()> {
    sqlx::query(&format!(
        "INSERT INTO {TABLE}(rowid, embedding) VALUES (?, vec_int8(?))"
    ))
    .bind(id)
    .bind(blob)
    .execute(&mut *conn)
    .await?;
    super::vector_log::log_vector_written(conn, id).await
}

impl Store {
    /// Makes the vector table hold vectors of model `name` (dimension `dim`).
    /// Returns the space and whether it was (re)created, in which case every
    /// chunk now waits for re-embedding.
    pub async fn ensure_vector_space(&self, name: &str, dim: usize) -> Result<(VectorSpace, bool)> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO embedding_models(name, dim) VALUES (?, ?) ON CONFLICT(name) DO NOTHING",
        )
        .bind(name)
        .bind(dim as i64)
        .execute(&mut *tx)
        .await?;
        let model_id: i64 = sqlx::query_scalar("SELECT id FROM embedding_models WHERE name = ?")
            .bind(name)
            .fetch_one(&mut *tx)
            .await?;
        let active: Option<String> = sqlx::query_scalar("SELECT value FROM settings WHERE key = ?")
            .bind(ACTIVE_MODEL_KEY)
            .fetch_optional(&mut *tx)
            .await?;
        let table = table_exists(&mut tx, TABLE).await?;
        let legacy = table_exists(&mut tx, LEGACY_TABLE).await?;
        let same_model = active.as_deref() == Some(name);
        let rebuilt = !same_model || !(table || legacy);
        if rebuilt {
            drop_table(&mut tx, LEGACY_TABLE, LEGACY_TRIGGER).await?;
            drop_table(&mut tx, TABLE, TABLE_TRIGGER).await?;
            create_table(&mut tx, dim).await?;
            sqlx::query("DELETE FROM settings WHERE key = ?")
                .bind(UPGRADED_TO_KEY)
                .execute(&mut *tx)
                .await?;
            sqlx::query("UPDATE chunks SET embed_model_id = NULL")
                .execute(&mut *tx)
                .await?;
            // Copies of the old model's vectors cannot be caught up.
            super::vector_log::end_vector_log(&mut tx).await?;
            bump_vectors_version(&mut tx).await?;
            sqlx::query("INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
                .bind(ACTIVE_MODEL_KEY)
                .bind(name)
                .execute(&mut *tx)
                .await?;
        } else if !table {
            // An f32 index of this model: its vectors are copied, not re-embedded.
            create_table(&mut tx, dim).await?;
        }
        tx.commit().await?;
        Ok((
            VectorSpace {
                model_id,
                name: name.to_string(),
                dim,
            },
            rebuilt,
        ))
    }

    /// Whether f32 vectors from before int8 wait to be copied
    /// ([`Store::upgrade_vectors`]).
    pub async fn vectors_need_upgrade(&self) -> Result<bool> {
        let mut conn = self.pool.acquire().await?;
        table_exists(&mut conn, LEGACY_TABLE).await
    }

    /// Copies an older index's f32 vectors into the int8 table, a batch a
    /// transaction, reporting after each, and drops the f32 table when all
    /// are across. Resumes where a killed upgrade stopped. Vectors that new
    /// writes put in the int8 table meanwhile are kept, not overwritten.
    pub async fn upgrade_vectors(&self, mut report: impl FnMut(Progress)) -> Result<()> {
        let started = Instant::now();
        let total: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM chunks WHERE embed_model_id IS NOT NULL")
                .fetch_one(&self.pool)
                .await?;
        loop {
            let mut tx = self.begin_write().await?;
            if !table_exists(&mut tx, LEGACY_TABLE).await? {
                return Ok(());
            }
            let cursor: i64 =
                sqlx::query_scalar::<_, String>("SELECT value FROM settings WHERE key = ?")
                    .bind(UPGRADED_TO_KEY)
                    .fetch_optional(&mut *tx)
                    .await?
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
            let rows: Vec<(i64, Vec<u8>)> = sqlx::query_as(&format!(
                "SELECT c.id, v.embedding FROM chunks c CROSS JOIN {LEGACY_TABLE} v ON v.rowid = c.id \
                 WHERE c.id > ? ORDER BY c.id LIMIT ?"
            ))
            .bind(cursor)
            .bind(UPGRADE_BATCH)
            .fetch_all(&mut *tx)
            .await?;
            let Some(&(last, _)) = rows.last() else {
                drop_table(&mut tx, LEGACY_TABLE, LEGACY_TRIGGER).await?;
                sqlx::query("DELETE FROM settings WHERE key = ?")
                    .bind(UPGRADED_TO_KEY)
                    .execute(&mut *tx)
                    .await?;
                bump_vectors_version(&mut tx).await?;
                tx.commit().await?;
                report(Progress::after(
                    total as u64,
                    total as u64,
                    0,
                    started.elapsed(),
                ));
                return Ok(());
            };
            for (id, blob) in &rows {
                let present: bool = sqlx::query_scalar(&format!(
                    "SELECT EXISTS(SELECT 1 FROM {TABLE} WHERE rowid = ?)"
                ))
                .bind(id)
                .fetch_one(&mut *tx)
                .await?;
                if !present {
                    let v = f32_from_blob(*id, blob)?;
                    insert_vector(&mut tx, *id, &quantize::to_blob(&v)).await?;
                }
            }
            sqlx::query("INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
                .bind(UPGRADED_TO_KEY)
                .bind(last.to_string())
                .execute(&mut *tx)
                .await?;
            let done: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM chunks WHERE embed_model_id IS NOT NULL AND id <= ?",
            )
            .bind(last)
            .fetch_one(&mut *tx)
            .await?;
            tx.commit().await?;
            report(Progress::after(
                done as u64,
                total as u64,
                0,
                started.elapsed(),
            ));
        }
    }

    pub async fn vectors_version(&self) -> Result<i64> {
        let mut conn = self.pool.acquire().await?;
        vectors_version_in(&mut conn).await
    }

    /// Every vector of the active space as (chunk, document, vector), with
    /// the vector version it was read at. Both come from one read
    /// transaction, so the tag matches the data.
    pub async fn all_vectors(&self) -> Result<(i64, Vec<(i64, i64, Vec<u8>)>)> {
        let mut tx = self.pool.begin().await?;
        let version = vectors_version_in(&mut tx).await?;
        let rows = sqlx::query_as(&format!(
            "SELECT v.rowid, c.document_id, v.embedding FROM {TABLE} v JOIN chunks c ON c.id = v.rowid"
        ))
            .fetch_all(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok((version, rows))
    }

    /// The `k` chunks nearest to `query` (a unit vector) by L2 distance,
    /// among the chunks of `scope`'s documents when one is given (sqlite-vec
    /// filters by rowid before it ranks, so the `k` are the scope's best).
    /// sqlite-vec compares int8 with int8, so the query is quantized too and
    /// the distance scaled back.
    pub async fn nearest_chunks(
        &self,
        query: &[f32],
        k: usize,
        scope: Option<&DocumentSet>,
    ) -> Result<Vec<(i64, f32)>> {
        let knn = format!(
            "SELECT rowid, distance FROM {TABLE} WHERE embedding MATCH vec_int8(?1) AND k = ?2"
        );
        let sql = match scope {
            None => format!("{knn} ORDER BY distance"),
            Some(_) => format!("{knn} AND rowid IN ({}) ORDER BY distance", chunks_in(3)),
        };
        let mut q = sqlx::query_as::<_, (i64, f64)>(&sql)
            .bind(quantize::to_blob(query))
            .bind(k as i64);
        if let Some(documents) = scope {
            q = q.bind(documents.chunks_json());
        }
        let rows = q.fetch_all(&self.pool).await?;
        let s = quantize::scale(query.len());
        Ok(rows.into_iter().map(|(id, d)| (id, d as f32 / s)).collect())
    }

    /// Vectors already computed for any of these text hashes, so unchanged
    /// text (an edited file's other paragraphs, a renamed file) is not embedded again.
    pub async fn vectors_by_text_hash(
        &self,
        space: &VectorSpace,
        hashes: &[i64],
    ) -> Result<Vec<(i64, Vec<u8>)>> {
        let mut found = Vec::new();
        for batch in hashes.chunks(500) {
            let marks = vec!["?"; batch.len()].join(",");
            let sql = format!(
                "SELECT c.text_hash, v.embedding FROM chunks c JOIN {TABLE} v ON v.rowid = c.id \
                 WHERE c.embed_model_id = ? AND c.text_hash IN ({marks}) GROUP BY c.text_hash"
            );
            let mut q = sqlx::query_as::<_, (i64, Vec<u8>)>(&sql).bind(space.model_id);
            for h in batch {
                q = q.bind(h);
            }
            found.extend(q.fetch_all(&self.pool).await?);
        }
        Ok(found)
    }

    /// Chunks without a vector from the active model (after a model change or
    /// an interrupted embedding), oldest first.
    pub async fn unembedded_chunks(&self, limit: usize) -> Result<Vec<(i64, String, String)>> {
        Ok(sqlx::query_as(&format!(
            "SELECT id, heading_path, {CHUNK_TEXT} FROM chunks c WHERE embed_model_id IS NULL ORDER BY id LIMIT ?"
        ))
        .bind(limit as i64)
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn store_vectors(
        &self,
        space: &VectorSpace,
        vectors: &[(i64, Vec<f32>)],
    ) -> Result<()> {
        let mut tx = self.begin_write().await?;
        for (chunk_id, v) in vectors {
            put_vector(&mut tx, *chunk_id, &quantize::to_blob(v)).await?;
            sqlx::query("UPDATE chunks SET embed_model_id = ? WHERE id = ?")
                .bind(space.model_id)
                .bind(chunk_id)
                .execute(&mut *tx)
                .await?;
        }
        bump_vectors_version(&mut tx).await?;
        tx.commit().await?;
        Ok(())
    }
}

/// An f32 vector from an index made before int8.
fn f32_from_blob(id: i64, blob: &[u8]) -> Result<Vec<f32>> {
    if !blob.len().is_multiple_of(4) {
        return Err(super::StoreError::Corrupt(format!(
            "f32 vector {id} has {} bytes, not a whole number of floats",
            blob.len()
        )));
    }
    Ok(blob
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}
