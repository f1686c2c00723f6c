//! The sqlite-vec table of chunk vectors. Its dimension and meaning belong to
//! one embedding model; when the model changes the table is rebuilt and every
//! chunk is marked for re-embedding, so vectors of two models never mix.

use sqlx::SqliteConnection;

use super::scope::{chunks_in, DocumentSet};
use super::{Result, Store};

/// The embedding model the vectors in `chunk_vectors` come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectorSpace {
    pub model_id: i64,
    pub name: String,
    pub dim: usize,
}

const ACTIVE_MODEL_KEY: &str = "vector_model";
const VERSION_KEY: &str = "vectors_version";
const VEC_CHUNK_SLOTS: usize = 128;

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

pub fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

impl Store {
    /// Makes `chunk_vectors` hold vectors of model `name` (dimension `dim`).
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
        let table_exists: bool = sqlx::query_scalar(
            "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE name = 'chunk_vectors')",
        )
        .fetch_one(&mut *tx)
        .await?;
        let rebuilt = active.as_deref() != Some(name) || !table_exists;
        if rebuilt {
            sqlx::query("DROP TRIGGER IF EXISTS chunk_vectors_delete")
                .execute(&mut *tx)
                .await?;
            sqlx::query("DROP TABLE IF EXISTS chunk_vectors")
                .execute(&mut *tx)
                .await?;
            // sqlite-vec zero-fills a whole chunk of slots when it starts one;
            // small chunks keep the bytes written ahead of use small.
            sqlx::query(&format!("CREATE VIRTUAL TABLE chunk_vectors USING vec0(embedding float[{dim}], chunk_size={VEC_CHUNK_SLOTS})"))
                .execute(&mut *tx)
                .await?;
            sqlx::query(
                "CREATE TRIGGER chunk_vectors_delete AFTER DELETE ON chunks BEGIN \
                 DELETE FROM chunk_vectors WHERE rowid = old.id; END",
            )
            .execute(&mut *tx)
            .await?;
            sqlx::query("UPDATE chunks SET embed_model_id = NULL")
                .execute(&mut *tx)
                .await?;
            bump_vectors_version(&mut tx).await?;
            sqlx::query("INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
                .bind(ACTIVE_MODEL_KEY)
                .bind(name)
                .execute(&mut *tx)
                .await?;
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
        let rows = sqlx::query_as(
            "SELECT v.rowid, c.document_id, v.embedding FROM chunk_vectors v JOIN chunks c ON c.id = v.rowid",
        )
            .fetch_all(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok((version, rows))
    }

    /// The `k` chunks nearest to `query` (a unit vector) by L2 distance,
    /// among the chunks of `scope`'s documents when one is given (sqlite-vec
    /// filters by rowid before it ranks, so the `k` are the scope's best).
    pub async fn nearest_chunks(
        &self,
        query: &[f32],
        k: usize,
        scope: Option<&DocumentSet>,
    ) -> Result<Vec<(i64, f32)>> {
        let knn = "SELECT rowid, distance FROM chunk_vectors WHERE embedding MATCH ?1 AND k = ?2";
        let sql = match scope {
            None => format!("{knn} ORDER BY distance"),
            Some(_) => format!("{knn} AND rowid IN ({}) ORDER BY distance", chunks_in(3)),
        };
        let mut q = sqlx::query_as::<_, (i64, f64)>(&sql)
            .bind(to_blob(query))
            .bind(k as i64);
        if let Some(documents) = scope {
            q = q.bind(documents.chunks_json());
        }
        let rows = q.fetch_all(&self.pool).await?;
        Ok(rows.into_iter().map(|(id, d)| (id, d as f32)).collect())
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
                "SELECT c.text_hash, v.embedding FROM chunks c JOIN chunk_vectors v ON v.rowid = c.id \
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
        Ok(sqlx::query_as(
            "SELECT id, heading_path, text FROM chunks WHERE embed_model_id IS NULL ORDER BY id LIMIT ?",
        )
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
            sqlx::query("DELETE FROM chunk_vectors WHERE rowid = ?")
                .bind(chunk_id)
                .execute(&mut *tx)
                .await?;
            sqlx::query("INSERT INTO chunk_vectors(rowid, embedding) VALUES (?, ?)")
                .bind(chunk_id)
                .bind(to_blob(v))
                .execute(&mut *tx)
                .await?;
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
