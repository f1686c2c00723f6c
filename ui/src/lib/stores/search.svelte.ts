// Plain search, as `folio search` does it: the chunks that best match the
// words typed, best first, with no model asked. Kept outside the view so
// switching views keeps the query, its options and what it found.
import { api, toIpcError } from "$lib/api";
import type { IpcError } from "$lib/bindings/IpcError";
import type { SearchHit } from "$lib/bindings/SearchHit";
import type { SearchMode } from "$lib/bindings/SearchMode";
import { ScopeChoice } from "./scope-choice.svelte";

/** How many hits a search lists unless told otherwise: the CLI's `-k` default. */
export const DEFAULT_K = 10;

/** The modes `folio search --mode` takes, the CLI's default first, as a person knows them. */
export const SEARCH_MODES: readonly { id: SearchMode; label: string }[] = [
  { id: "hybrid", label: "Hybrid (meaning and words)" },
  { id: "dense", label: "Dense (meaning)" },
  { id: "bm25", label: "BM25 (words)" },
];

/** Whether `k` is a number of hits the engine takes: a whole number of at least 1. */
export function validK(k: number | null | undefined): k is number {
  return typeof k === "number" && Number.isInteger(k) && k >= 1;
}

export class SearchStore {
  query = $state("");
  /** Null while the number field is empty. */
  k = $state<number | null>(DEFAULT_K);
  mode = $state<SearchMode>("hybrid");
  /** What the search looks within, chosen and checked as Ask's scope is. */
  readonly scope = new ScopeChoice();
  /** The newest search's hits, best first; null until one has come back. */
  results = $state<SearchHit[] | null>(null);
  /** The query `results` are for, as sent. */
  searched = $state("");
  running = $state(false);
  error = $state<IpcError | null>(null);

  // Only the newest search may fill the results; slower earlier ones are dropped.
  private generation = 0;

  /**
   * Searches for the query as typed now. An empty query, or a k the engine
   * would refuse, asks nothing; a scope changed a moment ago is checked
   * first, and one that cannot be used is reported as the search's error.
   */
  async search(): Promise<void> {
    const query = this.query.trim();
    const k = this.k;
    if (query === "" || !validK(k)) return;
    const mode = this.mode;
    const generation = ++this.generation;
    this.running = true;
    try {
      const status = await this.scope.settle();
      if (generation !== this.generation) return;
      if (status.kind === "unusable") {
        this.results = null;
        this.error = status.error;
        return;
      }
      const hits = await api.search(query, k, mode, this.scope.snapshot());
      if (generation !== this.generation) return;
      this.results = hits;
      this.searched = query;
      this.error = null;
    } catch (error) {
      if (generation !== this.generation) return;
      this.results = null;
      this.error = toIpcError(error);
    } finally {
      if (generation === this.generation) this.running = false;
    }
  }
}

export const librarySearch = new SearchStore();
