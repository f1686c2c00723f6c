-- iG²RAG's information-gain graph. A node row records that a chunk's
-- neighbours were scored under a rubric (or why that failed), with what it
-- cost; its edges point from the chunk to the neighbours it was compared
-- with. Both go when either chunk goes: an edited document's chunks are new
-- rows, scored again by the next graph job.
CREATE TABLE gain_nodes (
    chunk_id           INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    rubric             TEXT NOT NULL CHECK (rubric IN ('coarse', 'fine', 'binary')),
    status             TEXT NOT NULL CHECK (status IN ('scored', 'failed')),
    model              TEXT NOT NULL,
    error              TEXT,
    calls              INTEGER NOT NULL,
    prompt_tokens      INTEGER NOT NULL,
    cached_tokens      INTEGER NOT NULL,
    completion_tokens  INTEGER NOT NULL,
    scored_at          INTEGER NOT NULL,
    PRIMARY KEY (rubric, chunk_id)
);
CREATE INDEX gain_nodes_chunk ON gain_nodes(chunk_id);

CREATE TABLE gain_edges (
    source_chunk  INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    target_chunk  INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    rubric        TEXT NOT NULL CHECK (rubric IN ('coarse', 'fine', 'binary')),
    class         TEXT NOT NULL CHECK (class IN ('redundant', 'minor', 'significant', 'novel')),
    score         REAL NOT NULL,
    -- Cosine similarity of the pair, for the similarity-graph ablation.
    similarity    REAL NOT NULL,
    model         TEXT NOT NULL,
    PRIMARY KEY (rubric, source_chunk, target_chunk)
);
CREATE INDEX gain_edges_source ON gain_edges(source_chunk);
CREATE INDEX gain_edges_target ON gain_edges(target_chunk);
