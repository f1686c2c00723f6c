// The Search view against a fake shell: a search sends what the form says
// and lists the hits, rank, score, file, heading and snippet; a hit opens
// in the source viewer where it is; no hits and a failure are each said;
// and document text (snippets, headings, names) is shown as text.
import { flushSync, mount, unmount } from "svelte";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { SearchHit } from "$lib/bindings/SearchHit";
import { settle, type } from "$lib/testing/settle";

const shell = vi.hoisted(() => ({ invoke: vi.fn(), Channel: class {} }));
vi.mock("@tauri-apps/api/core", () => shell);

const { default: SearchView } = await import("./SearchView.svelte");
const { app, closeSource } = await import("$lib/stores/app.svelte");
const { librarySearch } = await import("$lib/stores/search.svelte");
const { expectInert, expectVisible, HOSTILE } = await import("$lib/testing/hostile");

const WHOLE_LIBRARY = { paths: [], collections: [], formats: [], since: null, tags: [] };

const rc: SearchHit = {
  chunk_id: 11,
  path: "/home/me/notes/rc.md",
  heading_path: "Rc > Counting",
  snippet: "Rc counts the references to a value.",
  score: 0.032786,
  span_start: 120,
  span_end: 480,
  page: null,
  ocr: null,
};

// A scanned PDF whose name is not UTF-8: the byte 0xE9 as the engine writes it (U+F7E9).
const scan: SearchHit = {
  chunk_id: 12,
  path: "/home/me/papers/caf\uf7e9.pdf",
  heading_path: "",
  snippet: "Reference counting, read from a scan.",
  score: 0.016129,
  span_start: 0,
  span_end: 200,
  page: 3,
  ocr: { confidence: 0.42, doubtful: true },
};

/** What `search` answers next: hits, or an error to reject with. */
let answer: () => Promise<SearchHit[]>;

let target: HTMLElement;
let instance: ReturnType<typeof mount>;

const q = <T extends HTMLElement = HTMLElement>(id: string) => target.querySelector<T>(`[data-testid="${id}"]`);
const all = (id: string) => [...target.querySelectorAll<HTMLElement>(`[data-testid="${id}"]`)];
const searches = () => shell.invoke.mock.calls.filter(([c]) => c === "search").map(([, args]) => args);

async function search(query: string) {
  type(q<HTMLInputElement>("search-query")!, query);
  q<HTMLButtonElement>("search-submit")!.click();
  await settle();
}

beforeEach(async () => {
  answer = async () => [rc, scan];
  shell.invoke.mockReset();
  shell.invoke.mockImplementation(async (command: string) => {
    if (command === "search") return answer();
    throw { code: "internal", message: `unexpected command ${command}`, details: null };
  });
  // The store outlives the view, as it does in the app: start each test afresh.
  Object.assign(librarySearch, { query: "", k: 10, mode: "hybrid", results: null, searched: "", error: null });
  closeSource();
  target = document.body.appendChild(document.createElement("div"));
  instance = mount(SearchView, { target });
  await settle();
});

afterEach(() => {
  unmount(instance);
  target.remove();
});

describe("SearchView", () => {
  it("offers the query to start from, k at 10 and the three modes, hybrid first", () => {
    expect(q("search-query")!.hasAttribute("data-autofocus")).toBe(true);
    expect(q<HTMLInputElement>("search-k")!.value).toBe("10");
    const mode = q<HTMLSelectElement>("search-mode")!;
    expect([...mode.options].map((o) => o.value)).toEqual(["hybrid", "dense", "bm25"]);
    expect(mode.value).toBe("hybrid");
    expect(q("scope-summary")?.textContent).toBe("Whole library");
    expect(q("search-results")).toBeNull();
    expect(q("search-empty")).toBeNull();
  });

  it("searches with the query, k, mode and scope the form says, and lists the hits best first", async () => {
    type(q<HTMLInputElement>("search-k")!, "5");
    const mode = q<HTMLSelectElement>("search-mode")!;
    mode.value = "bm25";
    mode.dispatchEvent(new Event("change", { bubbles: true }));
    flushSync();
    await search("  reference counting ");
    expect(searches()).toEqual([{ query: "reference counting", k: 5, mode: "bm25", scope: WHOLE_LIBRARY }]);

    const hits = all("search-hit");
    expect(hits).toHaveLength(2);
    expect(q("search-results")?.contains(hits[0])).toBe(true);
    const [first, second] = hits;
    expect(first.querySelector(".rank")?.textContent).toBe("1");
    expect(first.querySelector('[data-testid="search-hit-score"]')?.textContent).toBe("0.0328");
    const file = first.querySelector('[data-testid="search-hit-file"]')!;
    expect(file.textContent).toBe("rc.md");
    expect(file.getAttribute("title")).toBe("/home/me/notes/rc.md");
    expect(first.querySelector('[data-testid="search-hit-heading"]')?.textContent).toBe("Rc > Counting");
    expect(first.querySelector('[data-testid="search-hit-snippet"]')?.textContent).toBe(
      "Rc counts the references to a value.",
    );
    expect(first.querySelector('[data-testid="ocr-badge"]')).toBeNull();

    // A name that is not UTF-8 is shown as the CLI shows it; the page and the OCR reading are marked.
    expect(second.querySelector(".rank")?.textContent).toBe("2");
    expect(second.querySelector('[data-testid="search-hit-score"]')?.textContent).toBe("0.0161");
    const scanned = second.querySelector('[data-testid="search-hit-file"]')!;
    expect(scanned.textContent).toBe("caf\ufffd.pdf");
    expect(scanned.getAttribute("title")).toBe("/home/me/papers/caf\ufffd.pdf");
    expect(second.querySelector('[data-testid="search-hit-heading"]')).toBeNull();
    expect(second.textContent).toContain("page 3");
    expect(second.querySelector('[data-testid="ocr-badge"]')?.textContent).toBe("OCR 42% · may be misread");
    expect(q("search-status")?.textContent?.trim()).toBe("2 results for “reference counting”");
  });

  it("says it is searching until the shell answers, then how many it found", async () => {
    let found!: (hits: SearchHit[]) => void;
    answer = () => new Promise((resolve) => (found = resolve));
    await search("rc");
    expect(q("search-status")?.textContent?.trim()).toBe("Searching…");
    found([rc]);
    await settle();
    expect(q("search-status")?.textContent?.trim()).toBe("1 result for “rc”");
    expect(all("search-hit")).toHaveLength(1);
  });

  it("opens a hit in the source viewer, at its passage, from a button", async () => {
    await search("reference counting");
    const open = all("search-hit")[1].querySelector<HTMLButtonElement>('[data-testid="search-hit-open"]')!;
    expect(open.tagName).toBe("BUTTON");
    expect(open.type).toBe("button");
    open.click();
    flushSync();
    // Opened by its real name (the key), not the one shown.
    expect(app.source).toEqual({
      path: "/home/me/papers/caf\uf7e9.pdf",
      heading_path: "",
      span_start: 0,
      span_end: 200,
      page: 3,
    });
    all("search-hit")[0].querySelector<HTMLButtonElement>('[data-testid="search-hit-open"]')!.click();
    expect(app.source).toEqual({ path: rc.path, heading_path: rc.heading_path, span_start: 120, span_end: 480, page: null });
  });

  it("says when a search found nothing", async () => {
    answer = async () => [];
    await search("quince");
    expect(q("search-empty")?.textContent).toContain("No results for “quince”");
    expect(q("search-results")).toBeNull();
    expect(all("search-hit")).toHaveLength(0);
  });

  it("asks nothing for an empty query, and says so", async () => {
    await search("   ");
    expect(searches()).toEqual([]);
    expect(target.querySelector(".field-error")?.textContent).toContain("Type what to search for first.");
    expect(q("search-empty")).toBeNull();
  });

  it("shows a failed search's error with what to do about it, in place of the hits", async () => {
    await search("rc");
    expect(all("search-hit")).toHaveLength(2);
    answer = async () => {
      throw { code: "empty_library", message: "Nothing is indexed yet.", details: "no chunks" };
    };
    await search("rc");
    const notice = target.querySelector(".error-notice")!;
    expect(notice.getAttribute("role")).toBe("alert");
    expect(notice.textContent).toContain("The search could not be run");
    expect(notice.textContent).toContain("Nothing is indexed yet.");
    expect([...notice.querySelectorAll("button")].map((b) => b.textContent)).toContain("Open Library");
    expect(all("search-hit")).toHaveLength(0);
    expect(q("search-empty")).toBeNull();
  });

  it("shows document text as text: snippets, headings and names never become markup", async () => {
    const img = "<img src=x onerror=alert(1)>";
    answer = async () => [
      { ...rc, snippet: `before ${img} after` },
      { ...rc, chunk_id: 13, path: `/notes/${img}.md`, heading_path: HOSTILE, snippet: HOSTILE },
    ];
    await search("onerror");
    const results = q("search-results")!;
    const [first, second] = all("search-hit");
    expect(first.querySelector('[data-testid="search-hit-snippet"]')?.textContent).toBe(`before ${img} after`);
    expect(results.querySelector("img")).toBeNull();
    expect(second.querySelector('[data-testid="search-hit-file"]')?.textContent).toBe(`${img}.md`);
    expectVisible(second.querySelector('[data-testid="search-hit-heading"]')!);
    expectVisible(second.querySelector('[data-testid="search-hit-snippet"]')!);
    expectInert(results);
  });
});
