// Stored documents as the shell returns them, for component tests.
import type { DocumentRecord } from "$lib/bindings/DocumentRecord";

/** An indexed document's record, with only what a test varies given. */
export function indexedDocument(path: string, format: string, title: string): DocumentRecord {
  return {
    id: 1,
    path,
    format,
    title,
    hash: null,
    size: 1,
    mtime_ns: 0,
    status: "indexed",
    error: null,
    note: null,
    set_aside: false,
  };
}
