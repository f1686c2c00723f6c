// A place in a document to show: a citation, a retrieved passage, where a
// link lands (a node), or a whole document (no span). Derived from the
// generated Citation so the two never drift.
import type { Citation } from "$lib/bindings/Citation";
import type { DocumentTree } from "$lib/bindings/DocumentTree";

export type SourceTarget = Pick<Citation, "path"> &
  Partial<Pick<Citation, "number" | "heading_path" | "span_start" | "span_end" | "page" | "rows">> & {
    /** A node of the document's tree to mark and scroll to, by its ordinal; 0, the root, is the whole document. */
    node?: number;
  };

type Span = DocumentTree["tree"]["nodes"][number]["span"];

/** Whether a node's span overlaps the target's byte range on the same page. */
export function overlaps(span: Span, target: SourceTarget): boolean {
  if (target.span_start == null || target.span_end == null) return false;
  if (target.page != null && span.page !== target.page) return false;
  if (span.end <= span.start) return false;
  return span.start < target.span_end && span.end > target.span_start;
}

/** The first of the private-use characters the engine writes for bytes of a name that are not UTF-8 (folio-core's path_text). */
const ESCAPE = 0xf780;
const ESCAPED = /[\uf780-\uf7ff]/;

/**
 * A path as the library keys it, as a person reads it: bytes that are not
 * UTF-8 become U+FFFD, as the CLI shows them. The key itself stays what
 * commands are given, so the file is opened by its real name.
 */
export function shownPath(path: string): string {
  if (!ESCAPED.test(path)) return path;
  const encoder = new TextEncoder();
  const bytes: number[] = [];
  for (const ch of path) {
    const code = ch.codePointAt(0) ?? 0;
    if (code >= ESCAPE && code < ESCAPE + 0x80) bytes.push(code - ESCAPE + 0x80);
    else bytes.push(...encoder.encode(ch));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

export function fileName(path: string): string {
  const shown = shownPath(path);
  const parts = shown.split(/[\\/]/);
  return parts[parts.length - 1] || shown;
}

/** Shown when a cited span is no longer anywhere in its document. */
export const STALE_PASSAGE =
  "The cited passage is not in the document as it is now; the file has probably changed since the answer was written.";

/** Shown on a PDF page when the passage is there but where it is drawn was not recorded. */
export const UNRECORDED_PASSAGE =
  "The cited passage is on this page, but where it is drawn was not recorded: the file was indexed by an older Folio, or the page is a rotated scan. The Text view shows it marked.";
