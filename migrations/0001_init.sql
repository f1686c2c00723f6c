-- Folio's index. The vector table (`chunk_vectors`, sqlite-vec vec0) is not
-- here: its dimension comes from the embedding model, so the store creates it
-- at open time (see src/store/vectors.rs).

CREATE TABLE folders (
    id        INTEGER PRIMARY KEY,
    path      TEXT NOT NULL UNIQUE,
    added_at  INTEGER NOT NULL
);

-- One row per file Folio has looked at: indexed, or failed with a reason.
CREATE TABLE documents (
    id          INTEGER PRIMARY KEY,
    folder_id   INTEGER NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
    path        TEXT NOT NULL UNIQUE,
    format      TEXT,
    title       TEXT,
    hash        TEXT,
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('indexed', 'error')),
    error       TEXT,
    note        TEXT,
    indexed_at  INTEGER NOT NULL
);
CREATE INDEX documents_folder ON documents(folder_id);

-- The structure tree, in document order; `parent` is an ordinal in the same document.
CREATE TABLE nodes (
    id           INTEGER PRIMARY KEY,
    document_id  INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal      INTEGER NOT NULL,
    parent       INTEGER,
    kind         TEXT NOT NULL CHECK (kind IN ('structure', 'content')),
    depth        INTEGER NOT NULL,
    text         TEXT NOT NULL,
    span_start   INTEGER NOT NULL,
    span_end     INTEGER NOT NULL,
    page         INTEGER,
    UNIQUE (document_id, ordinal)
);

CREATE TABLE embedding_models (
    id    INTEGER PRIMARY KEY,
    name  TEXT NOT NULL UNIQUE,
    dim   INTEGER NOT NULL
);

-- Retrieval units. `node_ordinals` (JSON array) names the content nodes a chunk
-- covers; `text_hash` lets unchanged text keep its vector across edits and
-- renames; `embed_model_id` is NULL until the current model has embedded it.
-- Chunk text is never updated in place: a changed chunk is a new row.
CREATE TABLE chunks (
    id              INTEGER PRIMARY KEY,
    document_id     INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal         INTEGER NOT NULL,
    text            TEXT NOT NULL,
    heading_path    TEXT NOT NULL,
    node_ordinals   TEXT NOT NULL,
    span_start      INTEGER NOT NULL,
    span_end        INTEGER NOT NULL,
    page            INTEGER,
    text_hash       INTEGER NOT NULL,
    embed_model_id  INTEGER REFERENCES embedding_models(id)
);
CREATE INDEX chunks_document ON chunks(document_id);
CREATE INDEX chunks_text_hash ON chunks(text_hash);
CREATE INDEX chunks_unembedded ON chunks(id) WHERE embed_model_id IS NULL;

CREATE VIRTUAL TABLE chunks_fts USING fts5(
    text, heading_path,
    content = 'chunks', content_rowid = 'id',
    tokenize = 'porter unicode61'
);
CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text, heading_path) VALUES (new.id, new.text, new.heading_path);
END;
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text, heading_path)
        VALUES ('delete', old.id, old.text, old.heading_path);
END;

-- Persisted background work. `owner_pid` tells a live job from one whose
-- process died (kill -9, power loss): the latter is resumed.
CREATE TABLE jobs (
    id           INTEGER PRIMARY KEY,
    kind         TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('queued', 'running', 'paused', 'done', 'failed', 'cancelled')),
    payload      TEXT NOT NULL,
    done         INTEGER NOT NULL DEFAULT 0,
    total        INTEGER NOT NULL DEFAULT 0,
    failed       INTEGER NOT NULL DEFAULT 0,
    active_ms    INTEGER NOT NULL DEFAULT 0,
    error        TEXT,
    owner_pid    INTEGER,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    finished_at  INTEGER
);

CREATE TABLE settings (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
