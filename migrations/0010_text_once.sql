-- Chunk text stored once. A chunk names where its words lie in its nodes'
-- text (`ranges`: JSON [[node ordinal, start byte, end byte], ...], the
-- pieces joined by a blank line) and keeps '' in `text`; a chunk written
-- before this migration keeps its `text` and has no `ranges`.
ALTER TABLE chunks ADD COLUMN ranges TEXT;

-- The full-text index keeps no copy either: contentless, deleting by rowid,
-- fed by the store with each new chunk's text. It read its text from
-- `chunks.text` until now, so it is built again from there.
DROP TRIGGER chunks_fts_insert;
DROP TRIGGER chunks_fts_delete;
DROP TABLE chunks_fts;
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    text, heading_path,
    content = '', contentless_delete = 1,
    tokenize = 'porter unicode61'
);
INSERT INTO chunks_fts(rowid, text, heading_path) SELECT id, text, heading_path FROM chunks;
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.id;
END;
