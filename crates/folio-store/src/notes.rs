//! A notes vault's links and tags (migration 0015): written with each
//! document, resolved when read. A link names a note the way notes apps do
//! (`[[Note]]`, `[[folder/Note#Heading]]`, an alias), and resolves as
//! Obsidian resolves it: by name or alias, case aside; a path in the link
//! must match the end of the note's; of several notes with the name, the
//! one in the linking note's folder, else the one with the shortest path.
//! Nothing resolved is stored, so renaming, adding or deleting a note
//! changes what every link to it points at from the next read.

use std::path::Path;

use serde::Serialize;
use sqlx::{Sqlite, Transaction};

use super::{Result, Store};
use folio_documents::loaders::vault::{block_id, note_key};
use folio_documents::notes::NoteFacts;

/// The names a link reaches `path` by, besides its aliases: a markdown
/// note's stem and any file's full name.
fn file_names(path: &str) -> Vec<String> {
    let path = Path::new(path);
    let mut names = Vec::new();
    if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
        names.push(name.to_string());
    }
    let markdown = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"));
    if markdown {
        if let Some(stem) = path.file_stem().and_then(|n| n.to_str()) {
            names.push(stem.to_string());
        }
    }
    names
}

/// Records that `name` (as written) reaches `document_id`; a link matches
/// it case aside.
async fn insert_name(
    tx: &mut Transaction<'_, Sqlite>,
    document_id: i64,
    name: &str,
    is_alias: bool,
) -> Result<()> {
    sqlx::query(
        "INSERT OR IGNORE INTO note_names(document_id, name, shown, is_alias) VALUES (?, ?, ?, ?)",
    )
    .bind(document_id)
    .bind(name.to_lowercase())
    .bind(name)
    .bind(is_alias)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Writes what document `document_id` at `path` says as a note.
pub(super) async fn write_facts(
    tx: &mut Transaction<'_, Sqlite>,
    document_id: i64,
    path: &str,
    facts: &NoteFacts,
) -> Result<()> {
    for name in file_names(path) {
        insert_name(tx, document_id, &name, false).await?;
    }
    for alias in &facts.aliases {
        let alias = alias.trim();
        if !alias.is_empty() {
            insert_name(tx, document_id, alias, true).await?;
        }
    }
    for tag in &facts.tags {
        sqlx::query("INSERT OR IGNORE INTO note_tags(document_id, tag) VALUES (?, ?)")
            .bind(document_id)
            .bind(tag)
            .execute(&mut **tx)
            .await?;
    }
    for (ordinal, link) in facts.links.iter().enumerate() {
        sqlx::query(
            "INSERT INTO note_links(document_id, ordinal, node_ordinal, target, target_key, headings, block, embed) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(document_id)
        .bind(ordinal as i64)
        .bind(link.node as i64)
        .bind(&link.target.note)
        .bind(note_key(&link.target.note))
        .bind(serde_json::to_string(&link.target.headings).unwrap_or_else(|_| "[]".into()))
        .bind(&link.target.block)
        .bind(link.embed)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// A document moved to `to`: the names its file gives it follow.
pub(super) async fn rename(
    tx: &mut Transaction<'_, Sqlite>,
    document_id: i64,
    to: &str,
) -> Result<()> {
    sqlx::query("DELETE FROM note_names WHERE document_id = ? AND is_alias = 0")
        .bind(document_id)
        .execute(&mut **tx)
        .await?;
    for name in file_names(to) {
        insert_name(tx, document_id, &name, false).await?;
    }
    Ok(())
}

/// Where a link lands: a document, and in it the node its heading or
/// block names (the document's root when it names none, or none found).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct LinkEnd {
    pub document_id: i64,
    pub path: String,
    pub node_ordinal: i64,
    /// The heading or block the link names and the document lacks.
    pub missing: Option<String>,
}

/// A link a note makes, resolved now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct OutgoingLink {
    /// As written: `Note`, `Note#Heading`, `Note#^block`.
    pub written: String,
    pub embed: bool,
    /// The node of the linking note the link is written in.
    pub node_ordinal: i64,
    /// `None`: no note in the library has that name (yet).
    pub to: Option<LinkEnd>,
}

/// A link to a note from another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct Backlink {
    pub document_id: i64,
    pub path: String,
    /// The node the link is written in, and its text.
    pub node_ordinal: i64,
    pub context: String,
    pub written: String,
    pub embed: bool,
}

/// A note's place in its vault: its aliases and tags, the links it makes
/// and the links to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct NoteLinks {
    pub document_id: i64,
    pub path: String,
    pub aliases: Vec<String>,
    pub tags: Vec<String>,
    pub outgoing: Vec<OutgoingLink>,
    pub backlinks: Vec<Backlink>,
}

/// A chunk a link leads to, and the link as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedChunk {
    pub to_chunk: i64,
    /// The document it is in.
    pub to_document: i64,
    pub written: String,
}

/// A tag and how many indexed documents carry it (not counting the tags
/// nested under it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct TagCount {
    pub tag: String,
    pub documents: i64,
}

/// One stored link, as read for resolving.
#[derive(Debug, Clone)]
struct LinkRow {
    document_id: i64,
    source_path: String,
    node_ordinal: i64,
    target: String,
    target_key: String,
    headings: Vec<String>,
    block: Option<String>,
    embed: bool,
}

type LinkTuple = (
    i64,
    String,
    i64,
    String,
    String,
    String,
    Option<String>,
    bool,
);

impl From<LinkTuple> for LinkRow {
    fn from(t: LinkTuple) -> LinkRow {
        LinkRow {
            document_id: t.0,
            source_path: t.1,
            node_ordinal: t.2,
            target: t.3,
            target_key: t.4,
            headings: serde_json::from_str(&t.5).unwrap_or_default(),
            block: t.6,
            embed: t.7,
        }
    }
}

impl LinkRow {
    /// The link as its note writes it.
    fn written(&self) -> String {
        let mut text = self.target.clone();
        for heading in &self.headings {
            text.push('#');
            text.push_str(heading);
        }
        if let Some(block) = &self.block {
            text.push_str("#^");
            text.push_str(block);
        }
        text
    }
}

const LINK_COLUMNS: &str =
    "l.document_id, d.path, l.node_ordinal, l.target, l.target_key, l.headings, l.block, l.embed";

/// Of the documents named `key`, the one `link` from `source_path` means.
fn choose<'a>(link: &LinkRow, candidates: &'a [(i64, String)]) -> Option<&'a (i64, String)> {
    let wanted = link.target.trim_matches('/').to_lowercase();
    let folder = Path::new(&link.source_path).parent();
    candidates
        .iter()
        .filter(|(_, path)| {
            // A link with a folder in it names the end of the note's path.
            !wanted.contains('/') || {
                let path = path.to_lowercase();
                let stem = path.strip_suffix(".md").unwrap_or(&path);
                stem.ends_with(&format!("/{wanted}")) || path.ends_with(&format!("/{wanted}"))
            }
        })
        .min_by_key(|(_, path)| (Path::new(path).parent() != folder, path.len(), path.clone()))
}

impl Store {
    /// The documents answering to `key` (a name or an alias), id and path.
    async fn named(&self, key: &str) -> Result<Vec<(i64, String)>> {
        Ok(sqlx::query_as(
            "SELECT DISTINCT d.id, d.path FROM note_names n JOIN documents d ON d.id = n.document_id \
             WHERE n.name = ? AND d.status = 'indexed'",
        )
        .bind(key)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Where `link` lands now, if anywhere.
    async fn resolve_link(&self, link: &LinkRow) -> Result<Option<LinkEnd>> {
        let (document_id, path) = if link.target.is_empty() {
            (link.document_id, link.source_path.clone())
        } else {
            match choose(link, &self.named(&link.target_key).await?) {
                Some(found) => found.clone(),
                None => return Ok(None),
            }
        };
        // The target's nodes are read only for a link that names a place in it.
        let nodes = match link.block.is_some() || !link.headings.is_empty() {
            true => self.nodes(document_id).await?,
            false => Vec::new(),
        };
        let (node_ordinal, missing) = match (&link.block, link.headings.last()) {
            (Some(block), _) => match nodes
                .iter()
                .find(|n| n.text.lines().any(|l| block_id(l) == Some(block.as_str())))
            {
                Some(n) => (n.ordinal, None),
                None => (0, Some(format!("^{block}"))),
            },
            (None, Some(heading)) => match nodes
                .iter()
                .find(|n| n.kind == "structure" && n.text.trim().eq_ignore_ascii_case(heading))
            {
                Some(n) => (n.ordinal, None),
                None => (0, Some(heading.clone())),
            },
            (None, None) => (0, None),
        };
        Ok(Some(LinkEnd {
            document_id,
            path,
            node_ordinal,
            missing,
        }))
    }

    /// Document `document_id`'s aliases, tags, links and backlinks, the
    /// links resolved now.
    pub async fn note_links(&self, document_id: i64) -> Result<NoteLinks> {
        let path: String = sqlx::query_scalar("SELECT path FROM documents WHERE id = ?")
            .bind(document_id)
            .fetch_one(&self.pool)
            .await?;
        let aliases: Vec<String> = sqlx::query_scalar(
            "SELECT shown FROM note_names WHERE document_id = ? AND is_alias = 1 ORDER BY name",
        )
        .bind(document_id)
        .fetch_all(&self.pool)
        .await?;
        let tags: Vec<String> =
            sqlx::query_scalar("SELECT tag FROM note_tags WHERE document_id = ? ORDER BY tag")
                .bind(document_id)
                .fetch_all(&self.pool)
                .await?;
        let rows: Vec<LinkTuple> = sqlx::query_as(&format!(
            "SELECT {LINK_COLUMNS} FROM note_links l JOIN documents d ON d.id = l.document_id \
             WHERE l.document_id = ? ORDER BY l.ordinal"
        ))
        .bind(document_id)
        .fetch_all(&self.pool)
        .await?;
        let mut outgoing = Vec::with_capacity(rows.len());
        for row in rows.into_iter().map(LinkRow::from) {
            outgoing.push(OutgoingLink {
                written: row.written(),
                embed: row.embed,
                node_ordinal: row.node_ordinal,
                to: self.resolve_link(&row).await?,
            });
        }
        Ok(NoteLinks {
            document_id,
            path,
            aliases,
            tags,
            outgoing,
            backlinks: self.backlinks(document_id).await?,
        })
    }

    /// Where the links written in chunk `chunk_id` lead, in the order
    /// they are written, each as the chunk it lands in: for a link to a
    /// heading or block, the first chunk holding that node or what follows
    /// it; for a link to a whole note, the note's first chunk. A link that
    /// resolves to nothing, or back into the chunk, is left out, and each
    /// chunk it leads to is named once, by its first link. What a notes
    /// vault's `links` retriever follows.
    pub async fn linked_chunks(&self, chunk_id: i64) -> Result<Vec<LinkedChunk>> {
        let Some((document_id, nodes)): Option<(i64, String)> =
            sqlx::query_as("SELECT document_id, node_ordinals FROM chunks WHERE id = ?")
                .bind(chunk_id)
                .fetch_optional(&self.pool)
                .await?
        else {
            return Ok(Vec::new());
        };
        let rows: Vec<LinkTuple> = sqlx::query_as(&format!(
            "SELECT {LINK_COLUMNS} FROM note_links l JOIN documents d ON d.id = l.document_id \
             WHERE l.document_id = ? AND l.node_ordinal IN (SELECT value FROM json_each(?)) \
             ORDER BY l.ordinal"
        ))
        .bind(document_id)
        .bind(&nodes)
        .fetch_all(&self.pool)
        .await?;
        let mut linked: Vec<LinkedChunk> = Vec::new();
        for row in rows.into_iter().map(LinkRow::from) {
            let Some(end) = self.resolve_link(&row).await? else {
                continue;
            };
            let landing: Option<i64> = sqlx::query_scalar(
                "SELECT id FROM chunks WHERE document_id = ? \
                 AND EXISTS (SELECT 1 FROM json_each(node_ordinals) WHERE value >= ?) \
                 ORDER BY ordinal LIMIT 1",
            )
            .bind(end.document_id)
            .bind(end.node_ordinal)
            .fetch_optional(&self.pool)
            .await?;
            match landing {
                Some(to) if to != chunk_id && !linked.iter().any(|l| l.to_chunk == to) => linked
                    .push(LinkedChunk {
                        to_chunk: to,
                        to_document: end.document_id,
                        written: row.written(),
                    }),
                _ => {}
            }
        }
        Ok(linked)
    }

    /// Every link of the library's indexed notes as an edge between chunks,
    /// (the chunk it is written in, the chunk it lands in), each pair once
    /// and in chunk order: what a gain walk follows beside its own edges.
    /// Landings are found as [`Store::linked_chunks`] finds them.
    pub async fn link_edges(&self) -> Result<Vec<(i64, i64)>> {
        let linking: Vec<i64> = sqlx::query_scalar(
            "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id \
             WHERE d.status = 'indexed' AND EXISTS (SELECT 1 FROM note_links l \
               JOIN json_each(c.node_ordinals) n ON n.value = l.node_ordinal \
               WHERE l.document_id = c.document_id) \
             ORDER BY c.id",
        )
        .fetch_all(&self.pool)
        .await?;
        let mut edges = Vec::new();
        for from in linking {
            for to in self.linked_chunks(from).await? {
                edges.push((from, to.to_chunk));
            }
        }
        Ok(edges)
    }

    /// Every tag of the library's indexed documents, in order.
    pub async fn tags(&self) -> Result<Vec<TagCount>> {
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT t.tag, COUNT(*) FROM note_tags t JOIN documents d ON d.id = t.document_id \
             WHERE d.status = 'indexed' GROUP BY t.tag ORDER BY t.tag",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(tag, documents)| TagCount { tag, documents })
            .collect())
    }

    /// The links from other notes that resolve to `document_id` now.
    async fn backlinks(&self, document_id: i64) -> Result<Vec<Backlink>> {
        let rows: Vec<LinkTuple> = sqlx::query_as(&format!(
            "SELECT {LINK_COLUMNS} FROM note_links l JOIN documents d ON d.id = l.document_id \
             WHERE l.target_key IN (SELECT name FROM note_names WHERE document_id = ?) \
             AND l.document_id != ? ORDER BY d.path, l.ordinal"
        ))
        .bind(document_id)
        .bind(document_id)
        .fetch_all(&self.pool)
        .await?;
        let mut backlinks = Vec::new();
        for row in rows.into_iter().map(LinkRow::from) {
            let lands = self.resolve_link(&row).await?;
            if lands.is_none_or(|end| end.document_id != document_id) {
                continue;
            }
            let context: Option<String> =
                sqlx::query_scalar("SELECT text FROM nodes WHERE document_id = ? AND ordinal = ?")
                    .bind(row.document_id)
                    .bind(row.node_ordinal)
                    .fetch_optional(&self.pool)
                    .await?;
            backlinks.push(Backlink {
                document_id: row.document_id,
                path: row.source_path.clone(),
                node_ordinal: row.node_ordinal,
                context: context.unwrap_or_default(),
                written: row.written(),
                embed: row.embed,
            });
        }
        Ok(backlinks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(source: &str, target: &str) -> LinkRow {
        LinkRow {
            document_id: 1,
            source_path: source.into(),
            node_ordinal: 0,
            target: target.into(),
            target_key: note_key(target),
            headings: Vec::new(),
            block: None,
            embed: false,
        }
    }

    #[test]
    fn a_name_resolves_to_the_same_folder_first_then_the_shortest_path() {
        let candidates = vec![
            (1, "/v/deep/down/Note.md".to_string()),
            (2, "/v/a/Note.md".to_string()),
            (3, "/v/b/Note.md".to_string()),
        ];
        assert_eq!(
            choose(&link("/v/b/From.md", "Note"), &candidates)
                .unwrap()
                .0,
            3
        );
        assert_eq!(
            choose(&link("/v/c/From.md", "note"), &candidates)
                .unwrap()
                .0,
            2
        );
        assert_eq!(
            choose(&link("/v/c/From.md", "down/Note"), &candidates)
                .unwrap()
                .0,
            1
        );
        assert!(choose(&link("/v/c/From.md", "elsewhere/Note"), &candidates).is_none());
    }

    #[test]
    fn file_names_give_markdown_its_stem_and_every_file_its_name() {
        assert_eq!(file_names("/v/My Note.md"), ["My Note.md", "My Note"]);
        assert_eq!(file_names("/v/paper.PDF"), ["paper.PDF"]);
    }

    #[test]
    fn a_link_is_written_back_as_its_note_wrote_it() {
        let mut row = link("/v/a.md", "Note");
        row.headings = vec!["Top".into(), "Sub".into()];
        assert_eq!(row.written(), "Note#Top#Sub");
        row.headings.clear();
        row.block = Some("id-1".into());
        assert_eq!(row.written(), "Note#^id-1");
    }
}
