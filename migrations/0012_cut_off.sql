-- An answer that reached max_tokens before it finished is kept as the
-- run's answer and marked here: the step whose reply was cut and the
-- token limit it reached, as JSON. NULL for an answer that finished, and
-- for runs recorded before cut-off answers were kept (those failed).
ALTER TABLE runs ADD COLUMN cut_off TEXT;
