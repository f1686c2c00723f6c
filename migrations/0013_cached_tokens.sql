-- Prompt tokens the embedded model took from its cache instead of
-- computing, per call and summed per run: a method's calls share
-- instructions and passages, and the prefix they share with a kept prompt
-- is not computed again. 0 for a server, and for calls recorded before.
ALTER TABLE llm_calls ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
