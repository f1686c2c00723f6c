-- Answered questions. A run row is written when the question is asked, so a
-- crash mid-answer leaves a visible interrupted run instead of nothing.
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    question TEXT NOT NULL,
    method TEXT NOT NULL,
    params TEXT NOT NULL,
    model TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'cancelled')),
    owner_pid INTEGER,
    answer TEXT,
    citations TEXT NOT NULL DEFAULT '[]',
    trace TEXT,
    error TEXT,
    timings TEXT NOT NULL DEFAULT '{}',
    llm_calls INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    finished_at INTEGER
);
CREATE INDEX runs_by_time ON runs(created_at);

-- Every model call a run made, in order, with what it cost.
CREATE TABLE llm_calls (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    step TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    wall_ms INTEGER NOT NULL,
    finish TEXT,
    error TEXT,
    PRIMARY KEY (run_id, ordinal)
);
