//! The cache of section summaries that whole-document answers are built
//! from, keyed by what a summary summarises (see
//! `methods::whole_document::plan`). Entries are never invalid: a changed
//! section has a new key. Clearing the table only costs model calls.

use std::collections::HashMap;

use super::{now_ms, Result, Store};

impl Store {
    /// The cached summaries among `keys`, by key.
    pub async fn section_summaries(&self, keys: &[&str]) -> Result<HashMap<String, String>> {
        let mut found = HashMap::new();
        for batch in keys.chunks(500) {
            let marks = vec!["?"; batch.len()].join(",");
            let sql = format!("SELECT key, summary FROM section_summaries WHERE key IN ({marks})");
            let mut q = sqlx::query_as::<_, (String, String)>(&sql);
            for key in batch {
                q = q.bind(*key);
            }
            found.extend(q.fetch_all(&self.pool).await?);
        }
        Ok(found)
    }

    /// Keeps `summary` under `key`, as soon as it is written, so a stopped
    /// answer loses none of the summaries it paid for.
    pub async fn save_section_summary(&self, key: &str, summary: &str) -> Result<()> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO section_summaries(key, summary, created_at) VALUES (?, ?, ?) \
             ON CONFLICT(key) DO UPDATE SET summary = excluded.summary",
        )
        .bind(key)
        .bind(summary)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }
}
