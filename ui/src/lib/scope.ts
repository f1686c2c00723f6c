// What part of the library a question draws from, as the person sees it:
// the whole library, or folders and files, collections, notes' tags,
// formats and a modified-since day, each kind narrowing the others. Pure
// functions; the engine resolves and checks a scope (`scope_size`, `ask`).
import type { Format } from "$lib/bindings/Format";
import type { Scope } from "$lib/bindings/Scope";
import { shownPath } from "./source";

/** Every format a scope can ask for, with the name a person knows it by, in the order the picker lists them. */
export const FORMAT_LABELS = {
  markdown: "Markdown",
  text: "Plain text",
  html: "HTML",
  pdf: "PDF",
  docx: "Word",
  pptx: "PowerPoint",
  xlsx: "Excel",
  odt: "OpenDocument",
  epub: "EPUB",
  image: "Images",
} as const satisfies Record<Format, string>;

export const FORMATS = Object.keys(FORMAT_LABELS) as Format[];

export function wholeLibrary(): Scope {
  return { paths: [], collections: [], formats: [], since: null, tags: [] };
}

export function isWholeLibrary(scope: Scope): boolean {
  return (
    scope.paths.length === 0 &&
    scope.collections.length === 0 &&
    scope.tags.length === 0 &&
    scope.formats.length === 0 &&
    !scope.since
  );
}

/**
 * Short names for paths: each one's last part, or, where two would read
 * the same, its last two parts ("a/notes", "b/notes").
 */
function shortNames(paths: readonly string[]): string[] {
  const parts = paths.map((path) => path.split(/[\\/]/).filter(Boolean));
  const last = parts.map((p, i) => p.at(-1) ?? paths[i]);
  return paths.map((path, i) => {
    if (last.filter((name) => name === last[i]).length === 1) return last[i];
    return parts[i].slice(-2).join("/") || path;
  });
}

/**
 * How a scope reads in one line: "Whole library", or e.g. "in notes,
 * papers · collection work · tag #rust · PDF · modified since 2026-01-31".
 * Paths are shown by their names unless `full` (for a tooltip or a label
 * read aloud).
 */
export function describeScope(scope: Scope, { full = false }: { full?: boolean } = {}): string {
  if (isWholeLibrary(scope)) return "Whole library";
  const parts: string[] = [];
  const paths = scope.paths.map(shownPath);
  if (paths.length > 0) parts.push(`in ${(full ? paths : shortNames(paths)).join(", ")}`);
  if (scope.collections.length > 0) {
    parts.push(`${scope.collections.length === 1 ? "collection" : "collections"} ${scope.collections.join(", ")}`);
  }
  if (scope.tags.length > 0) {
    parts.push(`${scope.tags.length === 1 ? "tag" : "tags"} ${scope.tags.map((tag) => `#${tag}`).join(", ")}`);
  }
  if (scope.formats.length > 0) parts.push(scope.formats.map((f) => FORMAT_LABELS[f] ?? f).join(", "));
  if (scope.since) parts.push(`modified since ${scope.since}`);
  return parts.join(" · ");
}

/**
 * A typed folder or file path as a scope names it: without surrounding
 * space or trailing separators (the root stays "/"); "" when nothing was typed.
 */
export function typedPath(typed: string): string {
  const path = typed.trim();
  const trimmed = path.replace(/[\\/]+$/, "");
  return trimmed === "" && path !== "" ? path.slice(0, 1) : trimmed;
}

/** `list` with `value` in it (at the end, once) or without it. */
export function toggled<T>(list: readonly T[], value: T, on: boolean): T[] {
  const without = list.filter((v) => v !== value);
  return on ? [...without, value] : without;
}
