//! Documents with their trees and chunks. [`Store::write_documents`] commits a
//! batch of whole documents in one transaction: each document is either fully
//! replaced or untouched, and batching several per commit keeps the bytes
//! written per input byte low (a commit per small file would rewrite the same
//! B-tree pages hundreds of times).
//!
//! Several processes may write one library, each from its own reads of the
//! files. A write from an older read than the library holds is dropped
//! under the write lock ([`superseded`]), so the last commit is never an
//! older version of a file than an earlier one.

use std::sync::Arc;

use serde::Serialize;
use sqlx::{Sqlite, Transaction};

use super::rows::from_row;
use super::scope::{place_bounds, IN_PLACE};
use super::vectors::VectorSpace;
use super::{now_ms, Result, Store, StoreError};
use folio_documents::loaders::{OcrPage, PdfRect};
use folio_documents::notes::NoteFacts;
use folio_documents::structure_tree::{node_ordinals, NodeKind, NodeRange, Span, StructureTree};
use folio_documents::table::{TableRows, TableShape};

/// A file's size and modification time as the disk holds them now, `None`
/// when it is gone.
pub type StatNow = fn(&str) -> Option<(u64, i64)>;

/// One chunk ready to store; `vector` is the int8 blob
/// ([`super::quantize::to_blob`]) of its embedding under the active vector space, shared between chunks with the
/// same text (a file that repeats one paragraph 100,000 times holds one
/// vector, not 100,000 copies).
#[derive(Debug, Clone)]
pub struct ChunkWrite {
    pub text: String,
    pub heading_path: String,
    /// Where `text` lies in the document's nodes; stored in its place when
    /// it reads back as `text` from the tree written with it.
    pub ranges: Vec<NodeRange>,
    pub span: Span,
    /// Where a PDF chunk is drawn on its page (see [`PdfRect`]).
    pub boxes: Vec<PdfRect>,
    pub text_hash: i64,
    pub vector: Option<Arc<[u8]>>,
    /// The table rows it holds, when it is (a piece of) one table.
    pub rows: Option<TableRows>,
}

#[derive(Debug, Clone)]
pub enum DocumentWrite {
    Indexed {
        folder_id: i64,
        path: String,
        format: &'static str,
        hash: String,
        size: u64,
        mtime_ns: i64,
        note: Option<String>,
        tree: StructureTree,
        /// Its aliases, tags and links, when it is a note.
        facts: NoteFacts,
        chunks: Vec<ChunkWrite>,
        ocr_pages: Vec<OcrPage>,
    },
    Failed {
        folder_id: i64,
        path: String,
        size: u64,
        mtime_ns: i64,
        error: String,
    },
    /// The process died while this file, and nothing else, was being read:
    /// recorded as an error that later passes skip until the file changes.
    SetAside {
        folder_id: i64,
        path: String,
        size: u64,
        mtime_ns: i64,
    },
    /// Same content under a new modification time: nothing to re-index.
    Touched {
        path: String,
        mtime_ns: i64,
    },
    Removed {
        path: String,
    },
    Renamed {
        from: String,
        to: String,
        folder_id: i64,
    },
}

impl DocumentWrite {
    pub fn path(&self) -> &str {
        match self {
            DocumentWrite::Indexed { path, .. }
            | DocumentWrite::Failed { path, .. }
            | DocumentWrite::SetAside { path, .. }
            | DocumentWrite::Touched { path, .. }
            | DocumentWrite::Removed { path } => path,
            DocumentWrite::Renamed { to, .. } => to,
        }
    }
}

/// Where a cited passage of a PDF is drawn on its page.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PassageBoxes {
    /// One box per line, in PDF user space.
    Drawn { boxes: Vec<PdfRect> },
    /// The passage is stored, but not where it is drawn: it was indexed by
    /// a Folio from before positions were kept, or is on a rotated scan.
    Unrecorded,
    /// No stored passage has this span on this page: the file has changed
    /// since the passage was cited.
    Gone,
}

/// A slice of a large folder's document list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct DocumentPage {
    pub total: i64,
    pub documents: Vec<DocumentRecord>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct DocumentRecord {
    pub id: i64,
    pub path: String,
    pub format: Option<String>,
    pub title: Option<String>,
    pub hash: Option<String>,
    pub size: i64,
    pub mtime_ns: i64,
    pub status: String,
    pub error: Option<String>,
    pub note: Option<String>,
    /// The process died while this file was read alone: later passes skip
    /// it until it changes or the person retries it.
    pub set_aside: bool,
}

from_row!(DocumentRecord {
    id,
    path,
    format,
    title,
    hash,
    size,
    mtime_ns,
    status,
    error,
    note,
    set_aside
});

/// The columns [`DocumentRecord`] reads, in its order.
const DOCUMENT_COLUMNS: &str =
    "id, path, format, title, hash, size, mtime_ns, status, error, note, set_aside";

/// What a set-aside file shows as its error.
pub fn set_aside_error(path: &str) -> String {
    let path = folio_core::path_text::shown(path);
    format!("Folio stopped while reading this file; `folio retry {path}` tries again")
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeRecord {
    pub ordinal: i64,
    pub parent: Option<i64>,
    pub kind: String,
    pub depth: i64,
    pub text: String,
    pub span_start: i64,
    pub span_end: i64,
    pub page: Option<i64>,
    /// How many of a table node's lines are its header; `None` for every
    /// node that is not a table.
    pub table_header_rows: Option<i64>,
    /// A table's own number for its first row below the header, if it has one.
    pub table_first_row: Option<i64>,
}

from_row!(NodeRecord {
    ordinal,
    parent,
    kind,
    depth,
    text,
    span_start,
    span_end,
    page,
    table_header_rows,
    table_first_row
});

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChunkRecord {
    pub id: i64,
    pub ordinal: i64,
    pub text: String,
    pub heading_path: String,
    pub node_ordinals: String,
    pub text_hash: i64,
    pub embedded: bool,
}

from_row!(ChunkRecord {
    id,
    ordinal,
    text,
    heading_path,
    node_ordinals,
    text_hash,
    embedded
});

/// A chunk with the document it belongs to, as search returns it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct StoredChunk {
    pub id: i64,
    pub path: String,
    pub heading_path: String,
    pub text: String,
    pub span_start: i64,
    pub span_end: i64,
    pub page: Option<i64>,
    /// OCR's confidence in the chunk's page (0–1), when OCR read it.
    pub ocr_confidence: Option<f64>,
    /// The table rows it holds ([`StoredChunk::rows`]).
    pub row_first: Option<i64>,
    pub row_last: Option<i64>,
}

from_row!(StoredChunk {
    id,
    path,
    heading_path,
    text,
    span_start,
    span_end,
    page,
    ocr_confidence,
    row_first,
    row_last
});

impl StoredChunk {
    /// The table rows the chunk holds, when it is (a piece of) one table.
    pub fn rows(&self) -> Option<TableRows> {
        Some(TableRows {
            first: u32::try_from(self.row_first?).ok()?,
            last: u32::try_from(self.row_last?).ok()?,
        })
    }
}

/// How far a job got with a batch, recorded in the batch's own transaction
/// so progress and data never disagree after a crash.
#[derive(Debug, Clone, Copy)]
pub struct BatchProgress {
    pub job_id: i64,
    pub done: u64,
    pub failed: u64,
    pub active_ms: i64,
}

impl Store {
    /// Commits `writes` in one transaction. With `on_disk` (writes read
    /// from the files it stats), a write another writer has superseded is
    /// dropped.
    pub async fn write_documents(
        &self,
        writes: &[DocumentWrite],
        space: &VectorSpace,
        progress: Option<BatchProgress>,
        on_disk: Option<StatNow>,
    ) -> Result<()> {
        let mut tx = self.begin_write().await?;
        for w in writes {
            if let Some(stat) = on_disk {
                if superseded(&mut tx, w, stat).await? {
                    continue;
                }
            }
            write_one(&mut tx, w, space).await?;
        }
        super::vectors::bump_vectors_version(&mut tx).await?;
        if let Some(p) = progress {
            sqlx::query("UPDATE jobs SET done = done + ?, failed = failed + ?, active_ms = ?, updated_at = ? WHERE id = ?")
                .bind(p.done as i64)
                .bind(p.failed as i64)
                .bind(p.active_ms)
                .bind(now_ms())
                .bind(p.job_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub async fn document(&self, path: &str) -> Result<Option<DocumentRecord>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {DOCUMENT_COLUMNS} FROM documents WHERE path = ?"
        ))
        .bind(path)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// The path of the indexed document with this id.
    pub async fn document_path(&self, id: i64) -> Result<Option<String>> {
        Ok(
            sqlx::query_scalar("SELECT path FROM documents WHERE id = ? AND status = 'indexed'")
                .bind(id)
                .fetch_optional(&self.pool)
                .await?,
        )
    }

    /// Documents at `root` or below it (`root` is a canonical path).
    pub async fn documents_under(&self, root: &str) -> Result<Vec<DocumentRecord>> {
        let (path, from, to) = place_bounds(root);
        Ok(sqlx::query_as(&format!(
            "SELECT {DOCUMENT_COLUMNS} FROM documents WHERE {IN_PLACE} ORDER BY path"
        ))
        .bind(path)
        .bind(from)
        .bind(to)
        .fetch_all(&self.pool)
        .await?)
    }

    /// One page of a folder's documents, by path, and how many it has in all.
    pub async fn folder_documents(
        &self,
        folder_id: i64,
        offset: i64,
        limit: i64,
    ) -> Result<DocumentPage> {
        let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM documents WHERE folder_id = ?")
            .bind(folder_id)
            .fetch_one(&self.pool)
            .await?;
        let documents = sqlx::query_as(&format!(
            "SELECT {DOCUMENT_COLUMNS} FROM documents \
             WHERE folder_id = ? ORDER BY path LIMIT ? OFFSET ?"
        ))
        .bind(folder_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(&self.pool)
        .await?;
        Ok(DocumentPage { total, documents })
    }

    /// Documents that failed to index, most recently changed first.
    pub async fn failed_documents(&self, limit: i64) -> Result<Vec<DocumentRecord>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {DOCUMENT_COLUMNS} FROM documents \
             WHERE error IS NOT NULL ORDER BY id DESC LIMIT ?"
        ))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn all_documents(&self) -> Result<Vec<DocumentRecord>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {DOCUMENT_COLUMNS} FROM documents ORDER BY path"
        ))
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn nodes(&self, document_id: i64) -> Result<Vec<NodeRecord>> {
        Ok(sqlx::query_as(
            "SELECT ordinal, parent, kind, depth, text, span_start, span_end, page, table_header_rows, table_first_row FROM nodes \
             WHERE document_id = ? ORDER BY ordinal",
        )
        .bind(document_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Where the chunk of `document_id` with this page and span is drawn.
    /// Several chunks may share a span (the pieces of a long paragraph);
    /// one with boxes is preferred.
    pub async fn passage_boxes(
        &self,
        document_id: i64,
        page: u32,
        span_start: i64,
        span_end: i64,
    ) -> Result<PassageBoxes> {
        let boxes: Option<Option<Vec<u8>>> = sqlx::query_scalar(
            "SELECT boxes FROM chunks WHERE document_id = ? AND page = ? AND span_start = ? AND span_end = ? \
             ORDER BY boxes IS NULL LIMIT 1",
        )
        .bind(document_id)
        .bind(i64::from(page))
        .bind(span_start)
        .bind(span_end)
        .fetch_optional(&self.pool)
        .await?;
        Ok(match boxes {
            None => PassageBoxes::Gone,
            Some(blob) => {
                let boxes = blob.map_or_else(Vec::new, |b| PdfRect::decode(&b));
                if boxes.is_empty() {
                    PassageBoxes::Unrecorded
                } else {
                    PassageBoxes::Drawn { boxes }
                }
            }
        })
    }

    /// The stored tree of a document, rebuilt in memory. Nodes are stored in
    /// pre-order, so every parent precedes its children.
    pub async fn structure_tree(&self, document_id: i64) -> Result<StructureTree> {
        let rows = self.nodes(document_id).await?;
        let corrupt = || {
            StoreError::Corrupt(format!(
                "document {document_id} has a malformed structure tree"
            ))
        };
        let mut rows = rows.into_iter();
        let root = rows.next().ok_or_else(corrupt)?;
        let span = |r: &NodeRecord| Span {
            start: r.span_start as usize,
            end: r.span_end as usize,
            page: r.page.map(|p| p as u32),
        };
        let mut tree = StructureTree::new(root.text.clone(), span(&root));
        for r in rows {
            let parent = r
                .parent
                .filter(|p| *p >= 0 && (*p as usize) < tree.len())
                .ok_or_else(corrupt)?;
            let kind = NodeKind::parse(&r.kind).ok_or_else(corrupt)?;
            let id = match (kind, r.table_header_rows) {
                (NodeKind::Content, Some(rows)) => {
                    let header_rows = u32::try_from(rows).map_err(|_| corrupt())?;
                    let first_row = r.table_first_row.and_then(|n| u32::try_from(n).ok());
                    let shape = TableShape {
                        header_rows,
                        first_row,
                    };
                    tree.push_table(parent as usize, r.text.clone(), shape, span(&r))
                }
                _ => tree.push(parent as usize, kind, r.text.clone(), span(&r)),
            };
            if id as i64 != r.ordinal {
                return Err(corrupt());
            }
        }
        Ok(tree)
    }

    pub async fn chunks_of(&self, document_id: i64) -> Result<Vec<ChunkRecord>> {
        Ok(sqlx::query_as(
            &format!(
                "SELECT id, ordinal, {CHUNK_TEXT} AS text, heading_path, node_ordinals, text_hash, \
                 embed_model_id IS NOT NULL AS embedded FROM chunks c WHERE document_id = ? ORDER BY ordinal"
            ),
        )
        .bind(document_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// The chunks with these ids, in the order given (ids that no longer exist
    /// are left out).
    pub async fn chunks_by_id(&self, ids: &[i64]) -> Result<Vec<StoredChunk>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let marks = vec!["?"; ids.len()].join(",");
        let sql = format!(
            "SELECT c.id, d.path, c.heading_path, {CHUNK_TEXT} AS text, c.span_start, c.span_end, c.page, \
             o.confidence AS ocr_confidence, c.row_first, c.row_last \
             FROM chunks c JOIN documents d ON d.id = c.document_id \
             LEFT JOIN ocr_pages o ON o.document_id = c.document_id AND o.page = c.page \
             WHERE c.id IN ({marks})"
        );
        let mut q = sqlx::query_as::<_, StoredChunk>(&sql);
        for id in ids {
            q = q.bind(id);
        }
        let mut rows = q.fetch_all(&self.pool).await?;
        rows.sort_by_key(|c| ids.iter().position(|i| *i == c.id));
        Ok(rows)
    }

    /// A mark that moves whenever any process commits documents, adds or
    /// removes a folder, or moves a job on: a long-lived process compares
    /// it between ticks to learn that another one changed the library.
    pub async fn change_mark(&self) -> Result<(i64, i64, i64)> {
        Ok(sqlx::query_as(
            "SELECT COALESCE((SELECT CAST(value AS INTEGER) FROM settings WHERE key = ?), 0), \
             (SELECT COALESCE(MAX(updated_at), 0) FROM jobs), (SELECT COUNT(*) FROM folders)",
        )
        .bind(super::vectors::VERSION_KEY)
        .fetch_one(&self.pool)
        .await?)
    }

    pub async fn counts(&self) -> Result<IndexCounts> {
        let (documents, errors): (i64, i64) = sqlx::query_as(
            "SELECT COALESCE(SUM(status = 'indexed'), 0), COALESCE(SUM(status = 'error'), 0) FROM documents",
        )
        .fetch_one(&self.pool)
        .await?;
        let (chunks, embedded): (i64, i64) = sqlx::query_as(
            "SELECT COUNT(*), COALESCE(SUM(embed_model_id IS NOT NULL), 0) FROM chunks",
        )
        .fetch_one(&self.pool)
        .await?;
        let nodes: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM nodes")
            .fetch_one(&self.pool)
            .await?;
        Ok(IndexCounts {
            documents,
            errors,
            nodes,
            chunks,
            embedded,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct IndexCounts {
    pub documents: i64,
    pub errors: i64,
    pub nodes: i64,
    pub chunks: i64,
    pub embedded: i64,
}

/// Whether `w` was made from an older read of its file than the library
/// holds: the stored row records what the disk holds now and `w` does not
/// (another writer read the file later and committed first). A file that
/// is gone, or a write that carries no read of it (a rename, a file that
/// could not be looked at), is never superseded.
async fn superseded(
    tx: &mut Transaction<'_, Sqlite>,
    w: &DocumentWrite,
    stat: StatNow,
) -> Result<bool> {
    let (path, read) = match w {
        DocumentWrite::Indexed {
            path,
            size,
            mtime_ns,
            ..
        }
        | DocumentWrite::Failed {
            path,
            size,
            mtime_ns,
            ..
        }
        | DocumentWrite::SetAside {
            path,
            size,
            mtime_ns,
            ..
        } if (*size, *mtime_ns) != (0, 0) => (path, Some((*size, *mtime_ns))),
        DocumentWrite::Removed { path } => (path, None),
        _ => return Ok(false),
    };
    let Some(disk) = stat(path) else {
        return Ok(false);
    };
    if read == Some(disk) {
        return Ok(false);
    }
    let stored: Option<(i64, i64)> =
        sqlx::query_as("SELECT size, mtime_ns FROM documents WHERE path = ?")
            .bind(path)
            .fetch_optional(&mut **tx)
            .await?;
    Ok(stored.is_some_and(|(size, mtime_ns)| (size as u64, mtime_ns) == disk))
}

async fn write_one(
    tx: &mut Transaction<'_, Sqlite>,
    w: &DocumentWrite,
    space: &VectorSpace,
) -> Result<()> {
    match w {
        DocumentWrite::Removed { path } => {
            sqlx::query("DELETE FROM documents WHERE path = ?")
                .bind(path)
                .execute(&mut **tx)
                .await?;
        }
        DocumentWrite::Touched { path, mtime_ns } => {
            sqlx::query("UPDATE documents SET mtime_ns = ? WHERE path = ?")
                .bind(mtime_ns)
                .bind(path)
                .execute(&mut **tx)
                .await?;
        }
        DocumentWrite::Renamed {
            from,
            to,
            folder_id,
        } => {
            // Another writer on this library may have applied the same
            // rename, or removed `from`, since this one was planned: then
            // `to` is that writer's to keep, not to delete.
            let moved: Option<i64> = sqlx::query_scalar("SELECT id FROM documents WHERE path = ?")
                .bind(from)
                .fetch_optional(&mut **tx)
                .await?;
            if moved.is_none() {
                return Ok(());
            }
            sqlx::query("DELETE FROM documents WHERE path = ?")
                .bind(to)
                .execute(&mut **tx)
                .await?;
            sqlx::query("UPDATE documents SET path = ?, folder_id = ? WHERE path = ?")
                .bind(to)
                .bind(folder_id)
                .bind(from)
                .execute(&mut **tx)
                .await?;
            if let Some(id) = moved {
                super::notes::rename(tx, id, to).await?;
            }
        }
        DocumentWrite::Failed {
            folder_id,
            path,
            size,
            mtime_ns,
            error,
        } => write_error(tx, *folder_id, path, *size, *mtime_ns, error, false).await?,
        DocumentWrite::SetAside {
            folder_id,
            path,
            size,
            mtime_ns,
        } => {
            let error = set_aside_error(path);
            write_error(tx, *folder_id, path, *size, *mtime_ns, &error, true).await?
        }
        DocumentWrite::Indexed {
            folder_id,
            path,
            format,
            hash,
            size,
            mtime_ns,
            note,
            tree,
            facts,
            chunks,
            ocr_pages,
        } => {
            sqlx::query("DELETE FROM documents WHERE path = ?")
                .bind(path)
                .execute(&mut **tx)
                .await?;
            let doc_id = sqlx::query(
                "INSERT INTO documents(folder_id, path, format, title, hash, size, mtime_ns, status, note, indexed_at) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, 'indexed', ?, ?)",
            )
            .bind(folder_id)
            .bind(path)
            .bind(format)
            .bind(tree.title())
            .bind(hash)
            .bind(*size as i64)
            .bind(mtime_ns)
            .bind(note)
            .bind(now_ms())
            .execute(&mut **tx)
            .await?
            .last_insert_rowid();
            super::notes::write_facts(tx, doc_id, path, facts).await?;
            for p in ocr_pages {
                sqlx::query(
                    "INSERT INTO ocr_pages(document_id, page, confidence) VALUES (?, ?, ?)",
                )
                .bind(doc_id)
                .bind(i64::from(p.page))
                .bind(f64::from(p.confidence))
                .execute(&mut **tx)
                .await?;
            }
            for (ordinal, n) in tree.nodes().iter().enumerate() {
                sqlx::query(
                    "INSERT INTO nodes(document_id, ordinal, parent, kind, depth, text, span_start, span_end, page, table_header_rows, table_first_row) \
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                )
                .bind(doc_id)
                .bind(ordinal as i64)
                .bind(n.parent.map(|p| p as i64))
                .bind(n.kind.as_str())
                .bind(n.depth as i64)
                .bind(&n.text)
                .bind(n.span.start as i64)
                .bind(n.span.end as i64)
                .bind(n.span.page.map(i64::from))
                .bind(n.table.map(|t| i64::from(t.header_rows)))
                .bind(n.table.and_then(|t| t.first_row).map(i64::from))
                .execute(&mut **tx)
                .await?;
            }
            for (ordinal, c) in chunks.iter().enumerate() {
                let ordinals = serde_json::to_string(&node_ordinals(&c.ranges))
                    .unwrap_or_else(|_| "[]".into());
                // The ranges stand in for the text only where they give it
                // back exactly; anything else keeps its own copy.
                let (text, ranges) = match tree.text_of(&c.ranges) {
                    Some(t) if t == c.text => ("", Some(ranges_json(&c.ranges))),
                    _ => (c.text.as_str(), None),
                };
                let chunk_id = sqlx::query(
                    "INSERT INTO chunks(document_id, ordinal, text, ranges, heading_path, node_ordinals, span_start, span_end, page, boxes, text_hash, embed_model_id, row_first, row_last) \
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                )
                .bind(doc_id)
                .bind(ordinal as i64)
                .bind(text)
                .bind(ranges)
                .bind(&c.heading_path)
                .bind(ordinals)
                .bind(c.span.start as i64)
                .bind(c.span.end as i64)
                .bind(c.span.page.map(i64::from))
                .bind((!c.boxes.is_empty()).then(|| PdfRect::encode(&c.boxes)))
                .bind(c.text_hash)
                .bind(c.vector.as_ref().map(|_| space.model_id))
                .bind(c.rows.map(|r| i64::from(r.first)))
                .bind(c.rows.map(|r| i64::from(r.last)))
                .execute(&mut **tx)
                .await?
                .last_insert_rowid();
                sqlx::query("INSERT INTO chunks_fts(rowid, text, heading_path) VALUES (?, ?, ?)")
                    .bind(chunk_id)
                    .bind(&c.text)
                    .bind(&c.heading_path)
                    .execute(&mut **tx)
                    .await?;
                if let Some(v) = &c.vector {
                    super::vectors::insert_vector(tx, chunk_id, v).await?;
                }
            }
        }
    }
    Ok(())
}

/// Replaces whatever is stored at `path` with a file that could not be
/// indexed.
async fn write_error(
    tx: &mut Transaction<'_, Sqlite>,
    folder_id: i64,
    path: &str,
    size: u64,
    mtime_ns: i64,
    error: &str,
    set_aside: bool,
) -> Result<()> {
    sqlx::query("DELETE FROM documents WHERE path = ?")
        .bind(path)
        .execute(&mut **tx)
        .await?;
    sqlx::query(
        "INSERT INTO documents(folder_id, path, size, mtime_ns, status, error, set_aside, indexed_at) \
         VALUES (?, ?, ?, ?, 'error', ?, ?, ?)",
    )
    .bind(folder_id)
    .bind(path)
    .bind(size as i64)
    .bind(mtime_ns)
    .bind(error)
    .bind(set_aside)
    .bind(now_ms())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// A chunk's text in SQL, for a query over `chunks c`: its own `text`, or
/// (once stored only in its nodes) its ranges' bytes of their nodes' text,
/// joined by a blank line as [`StructureTree::text_of`] joins them.
pub(super) const CHUNK_TEXT: &str = "CASE WHEN c.ranges IS NULL THEN c.text ELSE \
    (SELECT group_concat(CAST(substr(CAST(n.text AS BLOB), r.value->>1 + 1, r.value->>2 - r.value->>1) AS TEXT), \
     char(10, 10) ORDER BY r.key) \
     FROM json_each(c.ranges) r JOIN nodes n ON n.document_id = c.document_id AND n.ordinal = r.value->>0) END";

/// `ranges` as the `chunks.ranges` column holds them.
fn ranges_json(ranges: &[NodeRange]) -> String {
    let triples: Vec<[usize; 3]> = ranges.iter().map(|r| [r.node, r.start, r.end]).collect();
    serde_json::to_string(&triples).unwrap_or_else(|_| "[]".into())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use folio_documents::chunker::{chunk, ChunkSizes};
    use folio_documents::structure_tree::ROOT;

    /// A document indexed as `tree` with `chunks` (other store tests write them too).
    pub(crate) fn indexed(
        folder_id: i64,
        path: &str,
        tree: StructureTree,
        chunks: Vec<ChunkWrite>,
    ) -> DocumentWrite {
        DocumentWrite::Indexed {
            folder_id,
            path: path.into(),
            format: "markdown",
            hash: format!("h-{path}"),
            size: 1,
            mtime_ns: 1,
            note: None,
            tree,
            facts: NoteFacts::default(),
            chunks,
            ocr_pages: Vec::new(),
        }
    }

    /// Two processes read one file at two moments and commit in the other
    /// order: the older read is dropped, whatever kind of write it makes.
    #[tokio::test]
    async fn a_write_from_an_older_read_than_the_stored_one_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("f.sqlite")).await.unwrap();
        let (space, _) = store.ensure_vector_space("m", 4).await.unwrap();
        let folder = store.add_folder("/d").await.unwrap();
        let read = |hash: &str, size: u64, mtime_ns: i64| DocumentWrite::Indexed {
            folder_id: folder,
            path: "/d/a.md".into(),
            format: "markdown",
            hash: hash.into(),
            size,
            mtime_ns,
            facts: NoteFacts::default(),
            note: None,
            tree: StructureTree::new("A", Span::default()),
            chunks: vec![],
            ocr_pages: vec![],
        };
        let stored = || async {
            let d = store.document("/d/a.md").await.unwrap();
            d.map(|d| (d.status, d.hash))
        };
        let newer: StatNow = |_| Some((20, 200));
        store
            .write_documents(&[read("new", 20, 200)], &space, None, Some(newer))
            .await
            .unwrap();
        let older = DocumentWrite::Failed {
            folder_id: folder,
            path: "/d/a.md".into(),
            size: 10,
            mtime_ns: 100,
            error: "it was broken then".into(),
        };
        let gone_then = DocumentWrite::Removed {
            path: "/d/a.md".into(),
        };
        store
            .write_documents(
                &[read("old", 10, 100), older, gone_then.clone()],
                &space,
                None,
                Some(newer),
            )
            .await
            .unwrap();
        let kept = Some(("indexed".to_string(), Some("new".to_string())));
        assert_eq!(stored().await, kept);

        // Without a newer stored read, the write is what there is.
        let changed_again: StatNow = |_| Some((30, 300));
        store
            .write_documents(&[read("old", 10, 100)], &space, None, Some(changed_again))
            .await
            .unwrap();
        assert_eq!(stored().await.unwrap().1.as_deref(), Some("old"));
        let gone: StatNow = |_| None;
        store
            .write_documents(&[gone_then], &space, None, Some(gone))
            .await
            .unwrap();
        assert_eq!(stored().await, None);
    }

    /// Merged paragraphs with whitespace around them, a node split into
    /// pieces, text beyond ASCII: every chunk is stored as ranges alone and
    /// reads back as the chunker wrote it, through every reader.
    #[tokio::test]
    async fn chunk_text_is_stored_once_and_reads_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("f.sqlite")).await.unwrap();
        let (space, _) = store.ensure_vector_space("m", 4).await.unwrap();
        let folder = store.add_folder("/d").await.unwrap();
        let mut tree = StructureTree::new("Doc", Span::default());
        let h = tree.push(ROOT, NodeKind::Structure, "Über", Span::default());
        for text in [
            "  first paragraph, naïve café.\n",
            "\tsecond — with a dash.  ",
        ] {
            tree.push(h, NodeKind::Content, text, Span::default());
        }
        let long = "Ein Satz über Bäume und Wälder, recht lang. ".repeat(12);
        tree.push(h, NodeKind::Content, format!("\n{long}"), Span::default());
        let plans = chunk(
            &tree,
            ChunkSizes {
                target: 120,
                max: 200,
            },
        );
        assert!(plans.len() > 3, "{plans:?}");
        let writes: Vec<ChunkWrite> = plans
            .iter()
            .map(|p| ChunkWrite {
                text: p.text.clone(),
                heading_path: p.heading_path.clone(),
                ranges: p.ranges.clone(),
                span: p.span,
                boxes: Vec::new(),
                text_hash: p.text_hash(),
                vector: None,
                rows: p.rows,
            })
            .collect();
        store
            .write_documents(
                &[indexed(folder, "/d/a.md", tree, writes)],
                &space,
                None,
                None,
            )
            .await
            .unwrap();

        let stored: Vec<(String, Option<String>)> =
            sqlx::query_as("SELECT text, ranges FROM chunks ORDER BY ordinal")
                .fetch_all(store.pool())
                .await
                .unwrap();
        assert!(
            stored.iter().all(|(t, r)| t.is_empty() && r.is_some()),
            "{stored:?}"
        );
        let texts: Vec<&str> = plans.iter().map(|p| p.text.as_str()).collect();
        let doc = store.document("/d/a.md").await.unwrap().unwrap();
        let of: Vec<ChunkRecord> = store.chunks_of(doc.id).await.unwrap();
        assert_eq!(
            of.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(),
            texts
        );
        let ids: Vec<i64> = of.iter().map(|c| c.id).collect();
        let by_id = store.chunks_by_id(&ids).await.unwrap();
        assert_eq!(
            by_id.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(),
            texts
        );
        let unembedded = store.unembedded_chunks(100).await.unwrap();
        assert_eq!(
            unembedded.iter().map(|c| c.2.as_str()).collect::<Vec<_>>(),
            texts
        );
        assert_eq!(store.bm25("\"naïve\"", 5, None).await.unwrap().len(), 1);
    }

    /// The one stored chunk's ranges, and the text it reads back as.
    async fn only_chunk(store: &Store) -> (Option<String>, String) {
        let doc = store.document("/d/a.md").await.unwrap().unwrap();
        let ranges = sqlx::query_scalar("SELECT ranges FROM chunks")
            .fetch_one(store.pool())
            .await
            .unwrap();
        (
            ranges,
            store.chunks_of(doc.id).await.unwrap().remove(0).text,
        )
    }

    /// Ranges that do not give the text back (a writer's mistake) leave the
    /// chunk its own copy, and the full-text index follows every rewrite.
    #[tokio::test]
    async fn a_chunk_its_ranges_do_not_give_keeps_its_text() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("f.sqlite")).await.unwrap();
        let (space, _) = store.ensure_vector_space("m", 4).await.unwrap();
        let folder = store.add_folder("/d").await.unwrap();
        let write = |text: &str, node_text: &str| {
            let mut tree = StructureTree::new("Doc", Span::default());
            let node = tree.push(ROOT, NodeKind::Content, node_text, Span::default());
            let chunk = ChunkWrite {
                text: text.into(),
                heading_path: "Doc".into(),
                ranges: vec![NodeRange {
                    node,
                    start: 0,
                    end: 3,
                }],
                span: Span::default(),
                boxes: Vec::new(),
                text_hash: 1,
                vector: None,
                rows: None,
            };
            indexed(folder, "/d/a.md", tree, vec![chunk])
        };
        store
            .write_documents(
                &[write("elderberry wine", "elderberry wine")],
                &space,
                None,
                None,
            )
            .await
            .unwrap();
        assert_eq!(only_chunk(&store).await, (None, "elderberry wine".into()));
        assert_eq!(
            store.bm25("\"elderberry\"", 5, None).await.unwrap().len(),
            1
        );

        store
            .write_documents(&[write("abc", "abcdef")], &space, None, None)
            .await
            .unwrap();
        assert_eq!(
            only_chunk(&store).await,
            (Some("[[1,0,3]]".into()), "abc".into())
        );
        assert!(store
            .bm25("\"elderberry\"", 5, None)
            .await
            .unwrap()
            .is_empty());
        assert_eq!(store.bm25("\"abc\"", 5, None).await.unwrap().len(), 1);
    }
}
