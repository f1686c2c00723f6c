-- Tables stay tables: a table node's text is a line per row, and this says
-- how many of its lines are the header (NULL for every other node), and
-- what the source numbers its first row below the header, where it does
-- (a spreadsheet's row number).
ALTER TABLE nodes ADD COLUMN table_header_rows INTEGER;
ALTER TABLE nodes ADD COLUMN table_first_row INTEGER;

-- The rows of its table a chunk holds (1-based, inclusive, the header not
-- counted), when it is (a piece of) one table: what its citations name.
ALTER TABLE chunks ADD COLUMN row_first INTEGER;
ALTER TABLE chunks ADD COLUMN row_last INTEGER;

-- Documents of the formats whose tables are now read as tables are read
-- again at their next scan; chunks whose text is unchanged keep their
-- vectors.
UPDATE documents SET hash = NULL, mtime_ns = 0
WHERE format IN ('markdown', 'html', 'epub', 'docx', 'odt', 'xlsx') AND status = 'indexed';
