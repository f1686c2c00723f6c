-- Pages whose text OCR read, with Tesseract's confidence in each (0 to 1).
-- A chunk on such a page is shown as read by OCR, and as doubtful below
-- the confidence threshold, in search results and citations.
CREATE TABLE ocr_pages (
    document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    page        INTEGER NOT NULL,
    confidence  REAL NOT NULL,
    PRIMARY KEY (document_id, page)
) WITHOUT ROWID;
