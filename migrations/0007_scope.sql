-- Scoped questions. A collection is a named, saved set of folders; a
-- question may be restricted to collections, folders, files, formats and a
-- modified-since day. Collections name folders, not documents, so a file
-- moved out of a collection's folder leaves the collection with it.
CREATE TABLE collections (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
);

CREATE TABLE collection_folders (
    collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    PRIMARY KEY (collection_id, path)
);

-- The scope a run was asked in, as JSON; NULL for the whole library.
ALTER TABLE runs ADD COLUMN scope TEXT;
