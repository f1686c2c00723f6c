-- Notes vaults: what a note says beyond its text. Each row belongs to one
-- document and goes with it; re-indexing a document writes its rows anew.
-- Links are kept as written (their target's name, lower-cased, for the
-- join) and resolved when read, so a note renamed, added or deleted changes
-- what they point at without rewriting the notes that link to it.

-- The names a link can reach a document by: a markdown note's file stem
-- and any file's full name, plus a note's aliases; lower-cased in `name`,
-- as written in `shown`.
CREATE TABLE note_names (
    document_id  INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    shown        TEXT NOT NULL,
    is_alias     INTEGER NOT NULL,
    PRIMARY KEY (document_id, name)
) WITHOUT ROWID;
CREATE INDEX note_names_by_name ON note_names(name);

-- Tags from front matter and inline `#tags`, normalised (`area/sub`).
CREATE TABLE note_tags (
    document_id  INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    tag          TEXT NOT NULL,
    PRIMARY KEY (document_id, tag)
) WITHOUT ROWID;
CREATE INDEX note_tags_by_tag ON note_tags(tag);

-- Wikilinks and embeds, in document order.
CREATE TABLE note_links (
    document_id   INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal       INTEGER NOT NULL,
    node_ordinal  INTEGER NOT NULL,
    target        TEXT NOT NULL,   -- the note as written; '' within the same note
    target_key    TEXT NOT NULL,   -- its last path component, lower-cased
    headings      TEXT NOT NULL,   -- JSON array of the heading path, outermost first
    block         TEXT,
    embed         INTEGER NOT NULL,
    PRIMARY KEY (document_id, ordinal)
) WITHOUT ROWID;
CREATE INDEX note_links_by_key ON note_links(target_key);

-- Markdown indexed before this version has none of these rows: its next
-- scan reads it again (the stored size and time no longer match, nor does
-- the hash), and chunks whose text is unchanged keep their vectors.
UPDATE documents SET hash = NULL, mtime_ns = 0 WHERE format = 'markdown' AND status = 'indexed';
