-- A presentation's tables are now table nodes too (a header, rows, the
-- rows a passage holds named): presentations are read again at their next
-- scan; chunks whose text is unchanged keep their vectors.
UPDATE documents SET hash = NULL, mtime_ns = 0
WHERE format = 'pptx' AND status = 'indexed';
