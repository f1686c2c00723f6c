//! The information-gain graph's tables: which chunks were scored under which
//! rubric, at what cost, and the edges they gave. A node and its edges are
//! written in one transaction with the job's progress, so a build killed at
//! any moment resumes exactly at the first chunk it had not finished.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{now_ms, Result, Store};
use folio_core::choice::Choice;
use folio_llm::rubric::{GainClass, Rubric};

const GAIN_VERSION_KEY: &str = "gain_version";

/// How far the graph of one rubric covers the library, and what building
/// it has cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct RubricStatus {
    pub rubric: Rubric,
    /// Chunks whose neighbours were scored.
    pub scored: i64,
    /// Chunks whose scorer output could not be read, even on the retry.
    pub failed: i64,
    /// Chunks with a vector and no scoring yet.
    pub pending: i64,
    pub edges: i64,
    /// Edges per class: redundant, minor, significant, novel.
    pub edges_by_class: [i64; 4],
    /// The scoring models, as recorded with the edges.
    pub models: Vec<String>,
    pub cost: BuildCost,
    /// The most recent failures: chunk id and why.
    pub recent_failures: Vec<(i64, String)>,
}

/// What scoring has spent, summed over scored and failed nodes.
#[derive(
    Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
pub struct BuildCost {
    pub nodes: i64,
    pub calls: i64,
    pub prompt_tokens: i64,
    /// Prompt tokens served from the model's cache of the previous prompt's
    /// prefix: counted in `prompt_tokens`, but not computed again.
    pub cached_tokens: i64,
    pub completion_tokens: i64,
}

impl BuildCost {
    /// Prompt plus completion tokens per node.
    pub fn tokens_per_node(&self) -> Option<f64> {
        (self.nodes > 0)
            .then(|| (self.prompt_tokens + self.completion_tokens) as f64 / self.nodes as f64)
    }
}

/// One scored (or failed) chunk, ready to store.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeScoring {
    pub chunk_id: i64,
    pub rubric: Rubric,
    pub model: String,
    /// `Err` holds why the scorer's output could not be used.
    pub outcome: std::result::Result<Vec<GainEdge>, String>,
    pub calls: u32,
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub completion_tokens: u64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GainEdge {
    pub source: i64,
    pub target: i64,
    pub class: GainClass,
    pub score: f64,
    pub similarity: f64,
}

/// What a node write did: chunks deleted while they were being scored are
/// skipped, and so are edges to them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeWritten {
    pub stored: bool,
    pub edges: u64,
}

impl Store {
    /// Chunks with a vector and no scoring under `rubric`, oldest first:
    /// what a graph job still has to do.
    pub async fn pending_gain_chunks(&self, rubric: Rubric) -> Result<Vec<i64>> {
        Ok(sqlx::query_scalar(
            "SELECT c.id FROM chunks c WHERE c.embed_model_id IS NOT NULL AND NOT EXISTS \
             (SELECT 1 FROM gain_nodes g WHERE g.rubric = ? AND g.chunk_id = c.id) ORDER BY c.id",
        )
        .bind(rubric.as_str())
        .fetch_all(&self.pool)
        .await?)
    }

    /// Stores a node's scoring and its edges, and counts it in the job.
    pub async fn write_gain_node(
        &self,
        node: &NodeScoring,
        job: Option<(i64, i64)>,
    ) -> Result<NodeWritten> {
        let mut tx = self.begin_write().await?;
        let exists: Option<i64> = sqlx::query_scalar("SELECT id FROM chunks WHERE id = ?")
            .bind(node.chunk_id)
            .fetch_optional(&mut *tx)
            .await?;
        let mut written = NodeWritten::default();
        if exists.is_some() {
            sqlx::query(
                "INSERT OR REPLACE INTO gain_nodes(chunk_id, rubric, status, model, error, calls, \
                 prompt_tokens, cached_tokens, completion_tokens, scored_at) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(node.chunk_id)
            .bind(node.rubric.as_str())
            .bind(if node.outcome.is_ok() {
                "scored"
            } else {
                "failed"
            })
            .bind(&node.model)
            .bind(node.outcome.as_ref().err())
            .bind(node.calls)
            .bind(node.prompt_tokens as i64)
            .bind(node.cached_tokens as i64)
            .bind(node.completion_tokens as i64)
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
            written.stored = true;
            for edge in node.outcome.as_deref().unwrap_or_default() {
                let inserted = sqlx::query(
                    "INSERT OR REPLACE INTO gain_edges(source_chunk, target_chunk, rubric, class, score, similarity, model) \
                     SELECT ?, id, ?, ?, ?, ?, ? FROM chunks WHERE id = ?",
                )
                .bind(edge.source)
                .bind(node.rubric.as_str())
                .bind(edge.class.as_str())
                .bind(edge.score)
                .bind(edge.similarity)
                .bind(&node.model)
                .bind(edge.target)
                .execute(&mut *tx)
                .await?;
                written.edges += inserted.rows_affected();
            }
            sqlx::query(
                "INSERT INTO settings(key, value) VALUES (?, '1') \
                 ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            )
            .bind(GAIN_VERSION_KEY)
            .execute(&mut *tx)
            .await?;
        }
        if let Some((job_id, active_ms)) = job {
            sqlx::query(
                "UPDATE jobs SET done = done + 1, failed = failed + ?, active_ms = ?, updated_at = ? WHERE id = ?",
            )
            .bind(i64::from(written.stored && node.outcome.is_err()))
            .bind(active_ms)
            .bind(now_ms())
            .bind(job_id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(written)
    }

    /// Changes whenever an edge can have appeared or gone: a node written,
    /// or chunks (and with them their edges) deleted or added.
    pub async fn gain_graph_version(&self) -> Result<(i64, i64)> {
        let mut conn = self.pool.acquire().await?;
        let gain: Option<String> = sqlx::query_scalar("SELECT value FROM settings WHERE key = ?")
            .bind(GAIN_VERSION_KEY)
            .fetch_optional(&mut *conn)
            .await?;
        let vectors = super::vectors::vectors_version_in(&mut conn).await?;
        Ok((vectors, gain.and_then(|v| v.parse().ok()).unwrap_or(0)))
    }

    /// Every edge of one rubric's graph.
    pub async fn gain_edges(&self, rubric: Rubric) -> Result<Vec<GainEdge>> {
        let rows: Vec<(i64, i64, String, f64, f64)> = sqlx::query_as(
            "SELECT source_chunk, target_chunk, class, score, similarity FROM gain_edges WHERE rubric = ?",
        )
        .bind(rubric.as_str())
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(source, target, class, score, similarity)| GainEdge {
                source,
                target,
                class: GainClass::parse(&class).unwrap_or(GainClass::Redundant),
                score,
                similarity,
            })
            .collect())
    }

    /// The ids of chunks with a vector, ascending.
    pub async fn embedded_chunk_ids(&self) -> Result<Vec<i64>> {
        Ok(
            sqlx::query_scalar(
                "SELECT id FROM chunks WHERE embed_model_id IS NOT NULL ORDER BY id",
            )
            .fetch_all(&self.pool)
            .await?,
        )
    }

    /// Chunks with a vector: the nodes of a complete graph.
    pub async fn embedded_chunks(&self) -> Result<i64> {
        Ok(
            sqlx::query_scalar("SELECT COUNT(*) FROM chunks WHERE embed_model_id IS NOT NULL")
                .fetch_one(&self.pool)
                .await?,
        )
    }

    /// Coverage and cost of one rubric's graph.
    pub async fn rubric_status(&self, rubric: Rubric, chunks: i64) -> Result<RubricStatus> {
        let r = rubric.as_str();
        let (scored, failed, calls, prompt, cached, completion): (i64, i64, i64, i64, i64, i64) =
            sqlx::query_as(
                "SELECT COALESCE(SUM(status = 'scored'), 0), COALESCE(SUM(status = 'failed'), 0), \
                 COALESCE(SUM(calls), 0), COALESCE(SUM(prompt_tokens), 0), \
                 COALESCE(SUM(cached_tokens), 0), COALESCE(SUM(completion_tokens), 0) \
                 FROM gain_nodes WHERE rubric = ?",
            )
            .bind(r)
            .fetch_one(&self.pool)
            .await?;
        let by_class: HashMap<String, i64> = sqlx::query_as::<_, (String, i64)>(
            "SELECT class, COUNT(*) FROM gain_edges WHERE rubric = ? GROUP BY class",
        )
        .bind(r)
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .collect();
        let models: Vec<String> = sqlx::query_scalar(
            "SELECT DISTINCT model FROM gain_nodes WHERE rubric = ? AND status = 'scored' ORDER BY model",
        )
        .bind(r)
        .fetch_all(&self.pool)
        .await?;
        let recent_failures: Vec<(i64, String)> = sqlx::query_as(
            "SELECT chunk_id, COALESCE(error, '') FROM gain_nodes WHERE rubric = ? AND status = 'failed' \
             ORDER BY scored_at DESC LIMIT 20",
        )
        .bind(r)
        .fetch_all(&self.pool)
        .await?;
        let edges_by_class = GainClass::ALL.map(|c| by_class.get(c.as_str()).copied().unwrap_or(0));
        Ok(RubricStatus {
            rubric,
            scored,
            failed,
            pending: (chunks - scored - failed).max(0),
            edges: edges_by_class.iter().sum(),
            edges_by_class,
            models,
            cost: BuildCost {
                nodes: scored + failed,
                calls,
                prompt_tokens: prompt,
                cached_tokens: cached,
                completion_tokens: completion,
            },
            recent_failures,
        })
    }

    /// The rubrics with any scored or failed node.
    pub async fn built_rubrics(&self) -> Result<Vec<Rubric>> {
        let names: Vec<String> =
            sqlx::query_scalar("SELECT DISTINCT rubric FROM gain_nodes ORDER BY rubric")
                .fetch_all(&self.pool)
                .await?;
        Ok(names.iter().filter_map(|n| Rubric::parse(n).ok()).collect())
    }
}
