-- Where each PDF chunk is drawn on its page: one box per line, four
-- little-endian f32s each (x0, y0, x1, y1 in PDF user space). The app's PDF
-- viewer highlights a cited passage with them. Scanned pages have them too,
-- from Tesseract's word boxes, unless the page is rotated. NULL for other
-- formats, and for PDFs indexed before this column existed (those show their
-- page without a highlight until the file is indexed again).
ALTER TABLE chunks ADD COLUMN boxes BLOB;
