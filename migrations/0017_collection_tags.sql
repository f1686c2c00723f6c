-- A collection may name tags beside its folders: a document is in it when
-- it lies in one of its folders (any, if it names none) and carries one of
-- its tags or one nested under one (if it names any). Tags are stored as
-- notes' tags are (`note_tags.tag`): lowercase, without `#`.
CREATE TABLE collection_tags (
    collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (collection_id, tag)
);
