-- Summaries of document sections, written for whole-document answers and
-- kept by the key of what they summarise (the section's text, its
-- subsections' keys, and the model and prompt that wrote them), so an
-- unchanged section is never summarised twice, whichever document or
-- question it comes back with.
CREATE TABLE section_summaries (
    key TEXT PRIMARY KEY,
    summary TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
