-- A file during which the process died, read alone, is set aside: an
-- error row that later passes skip until the file changes or the person
-- retries it (crash quarantine; see folio-index's `quarantine`).
ALTER TABLE documents ADD COLUMN set_aside INTEGER NOT NULL DEFAULT 0;
