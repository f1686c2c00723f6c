-- Which chunks' vectors changed, in order: a vector written, or its chunk
-- deleted. The approximate index of a large library (src/retrieve/ann.rs)
-- records the last entry it holds and replays the ones after it, so it is
-- brought up to date without reading every vector; entries it holds are
-- pruned when it is saved. Nothing is logged unless the setting
-- 'vector_log' is present (its value names the epoch the log started in),
-- so a library searched exactly pays nothing. AUTOINCREMENT: a sequence
-- number is never reused, even after the newest entries are pruned.
CREATE TABLE vector_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_id INTEGER NOT NULL
);
CREATE TRIGGER vector_log_chunk_delete AFTER DELETE ON chunks
WHEN EXISTS (SELECT 1 FROM settings WHERE key = 'vector_log')
BEGIN
    INSERT INTO vector_log(chunk_id) VALUES (old.id);
END;
