// A real PDF written out object by object (PDF 1.4, the standard Helvetica
// font, one text line per line), so the end-to-end test indexes and renders
// a PDF without the repository carrying a binary file.

const FONT_SIZE = 12;
const LINE_ADVANCE = 16;
const TOP = 760;

/** Escapes a line for a PDF literal string (ASCII text only). */
function literal(line: string): string {
  return line.replace(/[\\()]/g, (c) => `\\${c}`).replace(/[^\x20-\x7e]/g, "?");
}

function pageContent(lines: string[]): string {
  const shown = lines.map((line, i) => `1 0 0 1 72 ${TOP - i * LINE_ADVANCE} Tm (${literal(line)}) Tj`);
  return ["BT", `/F1 ${FONT_SIZE} Tf`, ...shown, "ET"].join("\n");
}

/** A PDF of A4 pages, each a list of lines from the top left; `title` goes in the info dictionary. */
export function textPdf(title: string, pages: string[][]): Buffer {
  const count = pages.length;
  // Objects 1–4: catalog, page tree, font, info; then a page and its content per page.
  const pageId = (i: number) => 5 + 2 * i;
  const bodies: string[] = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Count ${count} /Kids [${pages.map((_, i) => `${pageId(i)} 0 R`).join(" ")}] >>`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    `<< /Title (${literal(title)}) >>`,
  ];
  pages.forEach((lines, i) => {
    const content = pageContent(lines);
    bodies.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageId(i) + 1} 0 R >>`,
      `<< /Length ${Buffer.byteLength(content, "latin1")} >>\nstream\n${content}\nendstream`,
    );
  });
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  bodies.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, "latin1"));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, "latin1");
  out += `xref\n0 ${bodies.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${bodies.length + 1} /Root 1 0 R /Info 4 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}
