// The Search view's store against a fake shell: what a search sends, what
// it keeps, and which of two overlapping searches' answers it shows.
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { SearchHit } from "$lib/bindings/SearchHit";

const core = vi.hoisted(() => ({ invoke: vi.fn(), Channel: class {} }));
vi.mock("@tauri-apps/api/core", () => core);

const { DEFAULT_K, SearchStore } = await import("./search.svelte");

const hit = (chunk: number, path = "/notes/rc.md"): SearchHit => ({
  chunk_id: chunk,
  path,
  heading_path: "Rc > Counting",
  snippet: "Rc counts references.",
  score: 0.0328,
  span_start: 10,
  span_end: 30,
  page: null,
  ocr: null,
});

const searches = () => core.invoke.mock.calls.filter(([c]) => c === "search").map(([, args]) => args);

/** Starts a search for "old", then one for "new" while the first is still with the shell. */
async function twoSearches(asked: () => number) {
  const store = new SearchStore();
  store.query = "old";
  const first = store.search();
  await vi.waitFor(() => expect(asked()).toBe(1));
  store.query = "new";
  const second = store.search();
  await vi.waitFor(() => expect(asked()).toBe(2));
  return { store, first, second };
}

describe("SearchStore", () => {
  beforeEach(() => {
    core.invoke.mockReset();
  });

  it("starts as the CLI does: 10 hits, hybrid, the whole library, nothing searched", () => {
    const store = new SearchStore();
    expect([store.k, DEFAULT_K, store.mode]).toEqual([10, 10, "hybrid"]);
    expect(store.scope.snapshot()).toEqual({ paths: [], collections: [], formats: [], since: null, tags: [] });
    expect([store.results, store.running, store.error]).toEqual([null, false, null]);
  });

  it("passes the query (trimmed), k, mode and the chosen scope through, and keeps the hits", async () => {
    const scope = { paths: ["/notes"], collections: ["work"], formats: ["pdf" as const], since: "2026-01-31", tags: [] };
    core.invoke.mockImplementation(async (command: string) => {
      if (command === "scope_size") return 3;
      if (command === "search") return [hit(1), hit(2, "/notes/arc.md")];
      throw { code: "internal", message: `unexpected command ${command}`, details: null };
    });
    const store = new SearchStore();
    store.query = "  reference counting ";
    store.k = 3;
    store.mode = "bm25";
    store.scope.set(scope);
    const searching = store.search();
    expect(store.running).toBe(true);
    await searching;
    // The scope was checked (at once, not after the picker's pause) before searching within it.
    expect(core.invoke.mock.calls.map(([c]) => c)).toEqual(["scope_size", "search"]);
    expect(searches()).toEqual([{ query: "reference counting", k: 3, mode: "bm25", scope }]);
    expect(store.results).toEqual([hit(1), hit(2, "/notes/arc.md")]);
    expect(store.searched).toBe("reference counting");
    expect([store.running, store.error]).toEqual([false, null]);
  });

  it("asks nothing for an empty query, or a k the engine would refuse", async () => {
    const store = new SearchStore();
    store.query = "   ";
    await store.search();
    store.query = "rc";
    for (const k of [null, 0, -1, 2.5, Number.NaN]) {
      store.k = k;
      await store.search();
    }
    expect(core.invoke).not.toHaveBeenCalled();
    expect([store.results, store.running, store.error]).toEqual([null, false, null]);
  });

  it("keeps the error of a failed search, in place of the hits, until a search succeeds", async () => {
    const failure = { code: "empty_library", message: "nothing is indexed yet", details: null };
    core.invoke.mockResolvedValueOnce([hit(1)]).mockRejectedValueOnce(failure).mockResolvedValueOnce([]);
    const store = new SearchStore();
    store.query = "rc";
    await store.search();
    expect(store.results).toHaveLength(1);
    await store.search();
    expect(store.error).toEqual(failure);
    expect(store.results).toBeNull();
    expect(store.running).toBe(false);
    await store.search();
    expect(store.error).toBeNull();
    expect(store.results).toEqual([]);
  });

  it("reports a scope that cannot be used as the error, and searches nothing", async () => {
    const refusal = { code: "invalid_input", message: "/gone is not in the library", details: null };
    core.invoke.mockRejectedValue(refusal);
    const store = new SearchStore();
    store.query = "rc";
    store.scope.set({ paths: ["/gone"], collections: [], formats: [], since: null, tags: [] });
    await store.search();
    expect(searches()).toEqual([]);
    expect(store.error).toEqual(refusal);
    expect(store.running).toBe(false);
  });

  it("drops a slow earlier answer that arrives after a newer search's", async () => {
    const answers: ((hits: SearchHit[]) => void)[] = [];
    core.invoke.mockImplementation(() => new Promise((resolve) => answers.push(resolve)));
    const { store, first, second } = await twoSearches(() => answers.length);
    expect(searches().map((s) => s.query)).toEqual(["old", "new"]);

    answers[1]([hit(2, "/notes/new.md")]);
    await second;
    expect(store.running).toBe(false);
    answers[0]([hit(1, "/notes/old.md")]);
    await first;
    expect(store.results).toEqual([hit(2, "/notes/new.md")]);
    expect(store.searched).toBe("new");
    expect(store.running).toBe(false);
  });

  it("drops a slow earlier failure too, and stays running until the newest search answers", async () => {
    const answers: { resolve: (hits: SearchHit[]) => void; reject: (error: unknown) => void }[] = [];
    core.invoke.mockImplementation(() => new Promise((resolve, reject) => answers.push({ resolve, reject })));
    const { store, first, second } = await twoSearches(() => answers.length);

    answers[0].reject({ code: "internal", message: "too late", details: null });
    await first;
    expect(store.error).toBeNull();
    expect(store.running).toBe(true);
    answers[1].resolve([hit(2)]);
    await second;
    expect(store.results).toEqual([hit(2)]);
    expect([store.running, store.error]).toEqual([false, null]);
  });
});
