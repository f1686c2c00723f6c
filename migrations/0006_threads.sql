-- Conversations. Every run belongs to a thread: a question asked on its own
-- starts one, a follow-up joins an earlier one. A turn's order is its run id.
-- A branch (Compare's follow-ups, one per method) follows another thread's
-- turns up to and including run `forked_after`, then its own.
CREATE TABLE threads (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    forked_from INTEGER REFERENCES threads(id) ON DELETE SET NULL,
    forked_after INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

-- `turn` is how a follow-up was asked (its standalone rewrite and which
-- earlier turns the method saw), as JSON; NULL for a first turn.
ALTER TABLE runs ADD COLUMN thread_id INTEGER REFERENCES threads(id);
ALTER TABLE runs ADD COLUMN turn TEXT;

-- Runs from before threads each become a thread of one turn.
INSERT INTO threads(id, title, created_at, updated_at)
    SELECT id, question, created_at, COALESCE(finished_at, created_at) FROM runs;
UPDATE runs SET thread_id = id;

CREATE INDEX runs_by_thread ON runs(thread_id, id);
