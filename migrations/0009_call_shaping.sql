-- How each model call's reply was held to its shape: the embedded model's
-- grammar, a server's JSON schema, or nothing (a server that takes no
-- schema; the reply was read leniently). NULL where no shape was asked for,
-- and for calls recorded before shapes were kept.
ALTER TABLE llm_calls ADD COLUMN shaping TEXT;
