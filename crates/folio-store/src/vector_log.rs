//! The vector log (migration 11): which chunks' vectors changed since a
//! point, so a copy of the vectors kept outside the database (the
//! approximate index, `retrieve::ann`) catches up by reading what changed,
//! not every vector.
//!
//! The log is written only while it is on, and it is on in epochs: each
//! start ([`Store::start_vector_log`]) names a new epoch, and a copy made
//! in one epoch is only brought up to date from the same epoch's entries.
//! Stopping the log, or rebuilding the vector table for another model,
//! ends the epoch, so a copy from before can never miss a change.

use sqlx::SqliteConnection;

use super::vectors::TABLE;
use super::{Result, Store};

/// The setting whose presence turns logging on; its value is the epoch.
/// Migration 11's trigger names it too.
const LOG_KEY: &str = "vector_log";
/// The last entry pruned: nothing from before it can be caught up.
const PRUNED_KEY: &str = "vector_log_pruned_to";

/// Where the log stands: its epoch and the last entry written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogPosition {
    pub epoch: i64,
    pub seq: i64,
}

/// The chunks whose vectors changed after a [`LogPosition`], each with its
/// vector now (`None`: the chunk is gone), read in one transaction.
#[derive(Debug, Default)]
pub struct VectorChanges {
    pub to: i64,
    /// (chunk, document, int8 vector) of each changed chunk that has one.
    pub present: Vec<(i64, i64, Vec<u8>)>,
    /// Every changed chunk, present or gone.
    pub changed: Vec<i64>,
}

/// Logs that chunk `id` has a new vector, if the log is on.
pub(super) async fn log_vector_written(conn: &mut SqliteConnection, id: i64) -> Result<()> {
    sqlx::query(
        "INSERT INTO vector_log(chunk_id) SELECT ? \
         WHERE EXISTS (SELECT 1 FROM settings WHERE key = ?)",
    )
    .bind(id)
    .bind(LOG_KEY)
    .execute(conn)
    .await?;
    Ok(())
}

/// Turns the log off and forgets it: nothing kept outside the database can
/// be caught up across this point.
pub(super) async fn end_vector_log(conn: &mut SqliteConnection) -> Result<()> {
    sqlx::query("DELETE FROM settings WHERE key IN (?, ?)")
        .bind(LOG_KEY)
        .bind(PRUNED_KEY)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM vector_log").execute(conn).await?;
    Ok(())
}

async fn position_in(conn: &mut SqliteConnection) -> Result<Option<LogPosition>> {
    let epoch: Option<String> = sqlx::query_scalar("SELECT value FROM settings WHERE key = ?")
        .bind(LOG_KEY)
        .fetch_optional(&mut *conn)
        .await?;
    let Some(epoch) = epoch.and_then(|e| e.parse().ok()) else {
        return Ok(None);
    };
    // The sequence survives pruning, so the last number handed out is
    // sqlite_sequence's, not the table's largest.
    let seq: Option<i64> =
        sqlx::query_scalar("SELECT seq FROM sqlite_sequence WHERE name = 'vector_log'")
            .fetch_optional(conn)
            .await?;
    Ok(Some(LogPosition {
        epoch,
        seq: seq.unwrap_or(0),
    }))
}

impl Store {
    /// Where the log stands, or `None` while it is off.
    pub async fn vector_log_position(&self) -> Result<Option<LogPosition>> {
        let mut conn = self.pool.acquire().await?;
        position_in(&mut conn).await
    }

    /// Turns the log on in a new epoch (ending any running one) and returns
    /// its start: every vector change from here on is logged.
    pub async fn start_vector_log(&self) -> Result<LogPosition> {
        let mut tx = self.begin_write().await?;
        let previous = position_in(&mut tx).await?.map_or(0, |p| p.epoch);
        end_vector_log(&mut tx).await?;
        let epoch = previous.max(unix_nanos()) + 1;
        sqlx::query("INSERT INTO settings(key, value) VALUES (?, ?)")
            .bind(LOG_KEY)
            .bind(epoch.to_string())
            .execute(&mut *tx)
            .await?;
        let position = position_in(&mut tx).await?;
        tx.commit().await?;
        Ok(position.expect("the log was turned on in this transaction"))
    }

    /// Turns the log off: a library searched exactly keeps no log.
    pub async fn stop_vector_log(&self) -> Result<()> {
        let mut tx = self.begin_write().await?;
        end_vector_log(&mut tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// What changed after `from`, or `None` if the log cannot say: it is
    /// off, in another epoch, or pruned past `from` (a newer copy was
    /// saved). Then the copy must be opened or built again.
    pub async fn vector_changes(&self, from: LogPosition) -> Result<Option<VectorChanges>> {
        let mut tx = self.pool.begin().await?;
        let now = match position_in(&mut tx).await? {
            Some(now) if now.epoch == from.epoch && now.seq >= from.seq => now,
            _ => return Ok(None),
        };
        let pruned: Option<String> = sqlx::query_scalar("SELECT value FROM settings WHERE key = ?")
            .bind(PRUNED_KEY)
            .fetch_optional(&mut *tx)
            .await?;
        if pruned
            .and_then(|p| p.parse::<i64>().ok())
            .is_some_and(|p| p > from.seq)
        {
            return Ok(None);
        }
        let changed: Vec<i64> = sqlx::query_scalar(
            "SELECT DISTINCT chunk_id FROM vector_log WHERE seq > ? AND seq <= ? ORDER BY chunk_id",
        )
        .bind(from.seq)
        .bind(now.seq)
        .fetch_all(&mut *tx)
        .await?;
        let present = if changed.is_empty() {
            Vec::new()
        } else {
            sqlx::query_as(&format!(
                "SELECT c.id, c.document_id, v.embedding FROM chunks c \
                 JOIN {TABLE} v ON v.rowid = c.id \
                 WHERE c.id IN (SELECT DISTINCT chunk_id FROM vector_log WHERE seq > ? AND seq <= ?)"
            ))
            .bind(from.seq)
            .bind(now.seq)
            .fetch_all(&mut *tx)
            .await?
        };
        tx.commit().await?;
        Ok(Some(VectorChanges {
            to: now.seq,
            present,
            changed,
        }))
    }

    /// Forgets the entries up to `seq`: a copy holding them was saved.
    pub async fn prune_vector_log(&self, seq: i64) -> Result<()> {
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM vector_log WHERE seq <= ?")
            .bind(seq)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE \
             SET value = MAX(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))",
        )
        .bind(PRUNED_KEY)
        .bind(seq.to_string())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// The vectors of chunks after `after`, by id, at most `limit`: an index
    /// built from the store reads them a batch at a time.
    pub async fn vectors_after(&self, after: i64, limit: usize) -> Result<Vec<(i64, Vec<u8>)>> {
        Ok(sqlx::query_as(&format!(
            "SELECT c.id, v.embedding FROM chunks c CROSS JOIN {TABLE} v ON v.rowid = c.id \
             WHERE c.id > ? AND c.embed_model_id IS NOT NULL ORDER BY c.id LIMIT ?"
        ))
        .bind(after)
        .bind(limit as i64)
        .fetch_all(&self.pool)
        .await?)
    }

    /// How many chunks have a vector.
    pub async fn vector_count(&self) -> Result<u64> {
        let n: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM chunks WHERE embed_model_id IS NOT NULL")
                .fetch_one(&self.pool)
                .await?;
        Ok(n as u64)
    }
}

fn unix_nanos() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::documents::tests::indexed;
    use crate::{ChunkWrite, VectorSpace};
    use folio_documents::structure_tree::{NodeKind, Span, StructureTree, ROOT};

    async fn write(store: &Store, space: &VectorSpace, folder: i64, path: &str, texts: &[&str]) {
        let mut tree = StructureTree::new("Doc", Span::default());
        let chunks = texts
            .iter()
            .enumerate()
            .map(|(i, text)| {
                tree.push(ROOT, NodeKind::Content, *text, Span::default());
                ChunkWrite {
                    text: text.to_string(),
                    heading_path: String::new(),
                    ranges: Vec::new(),
                    span: Span::default(),
                    boxes: Vec::new(),
                    text_hash: i as i64,
                    vector: Some(Arc::from(vec![i as u8; space.dim])),
                    rows: None,
                }
            })
            .collect();
        let doc = indexed(folder, path, tree, chunks);
        store
            .write_documents(&[doc], space, None, None)
            .await
            .unwrap();
    }

    async fn chunk_ids(store: &Store, path: &str) -> Vec<i64> {
        let doc = store.document(path).await.unwrap().unwrap();
        let mut ids: Vec<i64> = store
            .chunks_of(doc.id)
            .await
            .unwrap()
            .iter()
            .map(|c| c.id)
            .collect();
        ids.sort();
        ids
    }

    /// Off, nothing is logged; on, every vector written and every chunk
    /// deleted is, and the changes read back with the vectors as they are
    /// now; pruning forgets what a saved copy holds; a model change ends
    /// the epoch, so nothing from before it can be caught up.
    #[tokio::test]
    async fn the_log_records_vector_changes_only_while_on_and_only_within_its_epoch() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("f.sqlite")).await.unwrap();
        let (space, _) = store.ensure_vector_space("m", 4).await.unwrap();
        let folder = store.add_folder("/d").await.unwrap();
        write(&store, &space, folder, "/d/a.md", &["one", "two"]).await;
        assert_eq!(store.vector_log_position().await.unwrap(), None);
        let logged: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM vector_log")
            .fetch_one(store.pool())
            .await
            .unwrap();
        assert_eq!(logged, 0, "nothing is logged while the log is off");

        let start = store.start_vector_log().await.unwrap();
        let a = chunk_ids(&store, "/d/a.md").await;
        write(&store, &space, folder, "/d/b.md", &["three"]).await;
        let b = chunk_ids(&store, "/d/b.md").await;
        sqlx::query("DELETE FROM chunks WHERE id = ?")
            .bind(a[0])
            .execute(store.pool())
            .await
            .unwrap();
        let changes = store.vector_changes(start).await.unwrap().unwrap();
        let mut expected = vec![a[0], b[0]];
        expected.sort();
        assert_eq!(changes.changed, expected);
        assert_eq!(changes.present.len(), 1, "the deleted chunk has no vector");
        assert_eq!(changes.present[0].0, b[0]);
        assert_eq!(changes.present[0].2, vec![0u8; 4]);
        assert_eq!(
            store.vector_log_position().await.unwrap().unwrap().seq,
            changes.to
        );

        store.prune_vector_log(changes.to).await.unwrap();
        assert!(
            store.vector_changes(start).await.unwrap().is_none(),
            "entries before the prune are gone, so a copy from before cannot catch up"
        );
        let after = LogPosition {
            seq: changes.to,
            ..start
        };
        let none = store.vector_changes(after).await.unwrap().unwrap();
        assert!(none.changed.is_empty() && none.present.is_empty());
        write(&store, &space, folder, "/d/c.md", &["four"]).await;
        let later = store.vector_changes(after).await.unwrap().unwrap();
        assert_eq!(later.changed.len(), 1);
        assert!(
            later.to > changes.to,
            "sequence numbers are not reused after pruning"
        );

        store.ensure_vector_space("another model", 4).await.unwrap();
        assert_eq!(store.vector_log_position().await.unwrap(), None);
        assert!(store.vector_changes(after).await.unwrap().is_none());
        let restarted = store.start_vector_log().await.unwrap();
        assert_ne!(restarted.epoch, start.epoch);
        assert!(
            store.vector_changes(after).await.unwrap().is_none(),
            "another epoch"
        );
    }
}
