// The scope picker against a fake shell: what it offers, how each change
// reads and is counted by the engine (once the person pauses), and how an
// unusable scope stops Ask with the engine's reason; and how a turn's
// scope reads under it.
import { flushSync, mount, unmount } from "svelte";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { Scope } from "$lib/bindings/Scope";
import type { TagCount } from "$lib/bindings/TagCount";
import { settle } from "$lib/testing/settle";
import { twoFolderLibrary } from "$lib/testing/library";
import { COMMON_DEFAULTS } from "$lib/testing/methods";

const shell = vi.hoisted(() => ({ invoke: vi.fn(), Channel: class {} }));
vi.mock("@tauri-apps/api/core", () => shell);

const { default: ScopePicker } = await import("./ScopePicker.svelte");
const { default: ScopeLine } = await import("./ScopeLine.svelte");
const { default: AskComposer } = await import("../../views/ask/AskComposer.svelte");
const { ScopeChoice } = await import("$lib/stores/scope-choice.svelte");
const { library } = await import("$lib/stores/library.svelte");
const { app } = await import("$lib/stores/app.svelte");
const { askForm, newThread } = await import("$lib/stores/ask-form.svelte");
const { wholeLibrary } = await import("$lib/scope");
const { HOSTILE, expectInert } = await import("$lib/testing/hostile");

const overview = twoFolderLibrary();

let saved = [{ name: "work", folders: ["/home/me/papers"], tags: [], documents: 30 }];
const NOTE_TAGS: TagCount[] = [
  { tag: "area", documents: 4 },
  { tag: "area/sub", documents: 2 },
  { tag: "rust", documents: 7 },
];
let noteTags = NOTE_TAGS;

/** What the engine says of a scope: notes hold 12 documents, papers 30, and none is a PDF. */
function scopeSize(scope: Scope): number | null {
  if (scope.formats.includes("pdf")) {
    throw { code: "invalid_input", message: "nothing indexed matches the scope (format pdf); widen it", details: null };
  }
  for (const path of scope.paths) {
    if (!path.startsWith("/home/me/")) {
      throw { code: "invalid_input", message: `${path} is not in the library: pick an indexed folder or file`, details: null };
    }
  }
  const parts = scope.paths.length + scope.collections.length + scope.tags.length;
  return parts === 0 ? null : parts;
}

const sizes = () => shell.invoke.mock.calls.filter(([c]) => c === "scope_size").map(([, args]) => args.scope);

let target: HTMLElement;
let instance: ReturnType<typeof mount> | null = null;

const q = <T extends HTMLElement = HTMLElement>(id: string) => target.querySelector<T>(`[data-testid="${id}"]`);
const all = <T extends HTMLElement = HTMLElement>(id: string) => [...target.querySelectorAll<T>(`[data-testid="${id}"]`)];
const option = (id: string, value: string) => target.querySelector<HTMLInputElement>(`[data-testid="${id}"][data-value="${value}"]`)!;
const tagged = (id: string) => all(id).map((el) => el.dataset.tag);
const status = () => q("scope-status")!.textContent!.trim();

function type(input: HTMLInputElement, value: string) {
  input.value = value;
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

async function open(choice: InstanceType<typeof ScopeChoice>) {
  instance = mount(ScopePicker, { target, props: { choice, idPrefix: "test" } });
  flushSync();
  q("scope-picker")!.click();
  await settle();
}

beforeAll(() => {
  Element.prototype.scrollIntoView = () => {};
});

beforeEach(async () => {
  saved = [{ name: "work", folders: ["/home/me/papers"], tags: [], documents: 30 }];
  noteTags = NOTE_TAGS;
  shell.invoke.mockReset();
  shell.invoke.mockImplementation(async (command: string, args: Record<string, unknown> = {}) => {
    if (command === "library_overview") return overview;
    if (command === "collections") return saved;
    if (command === "tags") return noteTags;
    if (command === "scope_size") return scopeSize(args.scope as Scope);
    throw { code: "internal", message: `unexpected command ${command}`, details: null };
  });
  await library.refresh();
  target = document.body.appendChild(document.createElement("div"));
});

afterEach(() => {
  if (instance) unmount(instance);
  instance = null;
  target.remove();
});

describe("ScopePicker", () => {
  it("is a button saying the scope, with the library's size, until opened", async () => {
    const choice = new ScopeChoice(0);
    instance = mount(ScopePicker, { target, props: { choice, idPrefix: "test" } });
    await settle();
    expect(q("scope-summary")?.textContent).toBe("Whole library");
    expect(status()).toBe("42 documents");
    expect(q("scope-panel")).toBeNull();
    expect(q("scope-picker")?.getAttribute("aria-expanded")).toBe("false");
    // The whole library needs no counting.
    expect(sizes()).toEqual([]);
  });

  it("offers the watched folders, the saved collections (read as it opens) and every format", async () => {
    const choice = new ScopeChoice(0);
    await open(choice);
    expect(q("scope-picker")?.getAttribute("aria-expanded")).toBe("true");
    expect(q("scope-panel")).not.toBeNull();
    expect(all<HTMLInputElement>("scope-folder").map((i) => i.dataset.value)).toEqual(["/home/me/notes", "/home/me/papers"]);
    expect(all<HTMLInputElement>("scope-collection").map((i) => i.dataset.value)).toEqual(["work"]);
    expect(all<HTMLInputElement>("scope-format")).toHaveLength(10);
    expect(q<HTMLInputElement>("scope-since")?.type).toBe("date");
    expect((q("scope-clear") as HTMLButtonElement).disabled).toBe(true);
    expect(shell.invoke).toHaveBeenCalledWith("collections", undefined);

    // A collection saved in Library since shows up the next time it opens.
    saved = [...saved, { name: "home", folders: ["/home/me/notes"], tags: [], documents: 12 }];
    q("scope-picker")!.click();
    await settle();
    expect(q("scope-panel")).toBeNull();
    q("scope-picker")!.click();
    await settle();
    expect(all<HTMLInputElement>("scope-collection").map((i) => i.dataset.value)).toEqual(["work", "home"]);
  });

  it("narrows as boxes are ticked, counting once the changes pause", async () => {
    const choice = new ScopeChoice(40);
    await open(choice);
    option("scope-folder", "/home/me/notes").click();
    option("scope-collection", "work").click();
    flushSync();
    expect(q("scope-summary")?.textContent).toBe("in notes · collection work");
    expect(status()).toBe("Counting documents…");
    await vi.waitFor(() => expect(status()).toBe("2 documents"));
    // One count for both ticks.
    expect(sizes()).toEqual([{ paths: ["/home/me/notes"], collections: ["work"], formats: [], since: null, tags: [] }]);

    const since = q<HTMLInputElement>("scope-since")!;
    type(since, "2026-01-31");
    flushSync();
    expect(choice.scope.since).toBe("2026-01-31");
    expect(q("scope-summary")?.textContent).toBe("in notes · collection work · modified since 2026-01-31");
    // While the change is counted, the last count stays, dimmed.
    expect(status()).toBe("2 documents");
    expect(q("scope-status")?.classList.contains("stale")).toBe(true);
    await vi.waitFor(() => expect(sizes()).toHaveLength(2));
    await vi.waitFor(() => expect(q("scope-status")?.classList.contains("stale")).toBe(false));

    option("scope-folder", "/home/me/notes").click();
    option("scope-collection", "work").click();
    type(since, "");
    flushSync();
    expect(choice.scope).toEqual(wholeLibrary());
    expect(q("scope-summary")?.textContent).toBe("Whole library");
    expect(status()).toBe("42 documents");
  });

  it("adds another folder or file as a removable chip", async () => {
    const choice = new ScopeChoice(0);
    await open(choice);
    type(q<HTMLInputElement>("scope-path-input")!, "  /home/me/notes/rust/ch03.md ");
    flushSync();
    q("scope-path-add")!.click();
    await settle();
    expect(all("scope-path-chip").map((c) => c.dataset.value)).toEqual(["/home/me/notes/rust/ch03.md"]);
    expect(q<HTMLInputElement>("scope-path-input")!.value).toBe("");
    expect(q("scope-summary")?.textContent).toBe("in ch03.md");
    await vi.waitFor(() => expect(status()).toBe("1 document"));

    // Enter in the field adds, rather than submitting a form around it.
    type(q<HTMLInputElement>("scope-path-input")!, "/elsewhere");
    const enter = new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true });
    q("scope-path-input")!.dispatchEvent(enter);
    await settle();
    expect(enter.defaultPrevented).toBe(true);
    expect(choice.scope.paths).toEqual(["/home/me/notes/rust/ch03.md", "/elsewhere"]);
    await vi.waitFor(() => expect(status()).toBe("/elsewhere is not in the library: pick an indexed folder or file"));
    expect(q("scope-status")?.classList.contains("field-error")).toBe(true);

    all("scope-path-remove")[1].click();
    await settle();
    expect(choice.scope.paths).toEqual(["/home/me/notes/rust/ch03.md"]);
    await vi.waitFor(() => expect(status()).toBe("1 document"));
  });

  it("says why a scope cannot be used, and Whole library clears it", async () => {
    const choice = new ScopeChoice(0);
    await open(choice);
    option("scope-folder", "/home/me/papers").click();
    option("scope-format", "pdf").click();
    flushSync();
    expect(q("scope-summary")?.textContent).toBe("in papers · PDF");
    await vi.waitFor(() => expect(status()).toBe("nothing indexed matches the scope (format pdf); widen it"));
    expect(choice.blocked).toBe("nothing indexed matches the scope (format pdf); widen it");

    q("scope-clear")!.click();
    await settle();
    expect(choice.scope).toEqual(wholeLibrary());
    expect(choice.blocked).toBeNull();
    expect(status()).toBe("42 documents");
    expect(option("scope-folder", "/home/me/papers").checked).toBe(false);
    expect(option("scope-format", "pdf").checked).toBe(false);
  });

  it("offers the notes' tags (read as it opens) with their counts; a chosen tag is a removable chip", async () => {
    const choice = new ScopeChoice(0);
    await open(choice);
    expect(shell.invoke).toHaveBeenCalledWith("tags", undefined);
    expect(tagged("scope-tag-option")).toEqual(["area", "area/sub", "rust"]);
    const sub = target.querySelector<HTMLButtonElement>('[data-testid="scope-tag-option"][data-tag="area/sub"]')!;
    expect(sub.textContent?.replace(/\s+/g, " ").trim()).toBe("#area/sub 2");
    expect(tagged("scope-tag-chip")).toEqual([]);

    sub.click();
    flushSync();
    expect(choice.scope.tags).toEqual(["area/sub"]);
    expect(tagged("scope-tag-chip")).toEqual(["area/sub"]);
    expect(q("scope-tag-chip")?.textContent).toContain("#area/sub");
    // A chosen tag is offered no more.
    expect(tagged("scope-tag-option")).toEqual(["area", "rust"]);
    expect(q("scope-summary")?.textContent).toBe("tag #area/sub");
    expect(q("scope-picker")?.title).toBe("tag #area/sub");
    expect((q("scope-clear") as HTMLButtonElement).disabled).toBe(false);
    await vi.waitFor(() => expect(status()).toBe("1 document"));
    expect(sizes()).toEqual([{ ...wholeLibrary(), tags: ["area/sub"] }]);

    q("scope-tag-remove")!.click();
    flushSync();
    expect(choice.scope).toEqual(wholeLibrary());
    expect(tagged("scope-tag-chip")).toEqual([]);
    expect(tagged("scope-tag-option")).toEqual(["area", "area/sub", "rust"]);
    expect(q("scope-summary")?.textContent).toBe("Whole library");
  });

  it("says so when no note in the library has a tag", async () => {
    noteTags = [];
    await open(new ScopeChoice(0));
    expect(tagged("scope-tag-option")).toEqual([]);
    expect(q("scope-tags")?.textContent).toContain("No tagged notes in the library.");
  });

  it("keeps a chosen collection deleted since, so it can be unticked", async () => {
    const choice = new ScopeChoice(0);
    choice.set({ ...wholeLibrary(), collections: ["gone"] });
    saved = [];
    await open(choice);
    const gone = option("scope-collection", "gone");
    expect(gone.checked).toBe(true);
    expect(gone.closest("label")?.textContent).toContain("no longer saved");
    gone.click();
    await settle();
    expect(choice.scope.collections).toEqual([]);
  });

  it("closes on Escape without cancelling anything else, and gives focus back to its button", async () => {
    const choice = new ScopeChoice(0);
    await open(choice);
    const onWindow = vi.fn((event: KeyboardEvent) => event.defaultPrevented);
    window.addEventListener("keydown", onWindow);
    const escape = new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true });
    option("scope-format", "pdf").dispatchEvent(escape);
    await settle();
    window.removeEventListener("keydown", onWindow);
    expect(q("scope-panel")).toBeNull();
    expect(onWindow).toHaveReturnedWith(true);
    expect(document.activeElement).toBe(q("scope-picker"));
  });

  it("shows hostile names of folders, collections and tags as text", async () => {
    const choice = new ScopeChoice(0);
    saved = [{ name: HOSTILE, folders: [`/home/me/${HOSTILE}`], tags: [], documents: 1 }];
    noteTags = [{ tag: `other${HOSTILE}`, documents: 1 }];
    choice.set({ ...wholeLibrary(), paths: [`/home/me/${HOSTILE}`], collections: [HOSTILE], tags: [HOSTILE] });
    await open(choice);
    expect(q("scope-summary")?.textContent).toContain(HOSTILE.slice(0, 20));
    expect(tagged("scope-tag-chip")).toEqual([HOSTILE]);
    expect(tagged("scope-tag-option")).toEqual([`other${HOSTILE}`]);
    expectInert(target);
  });
});

describe("ScopeLine", () => {
  it("says a turn's scope, tags included, unless it was the whole library", () => {
    instance = mount(ScopeLine, { target, props: { scope: { ...wholeLibrary(), formats: ["pdf"], tags: ["area/sub"] } } });
    flushSync();
    expect(q("turn-scope")?.textContent?.trim()).toBe("Scope: tag #area/sub · PDF");
    unmount(instance);
    instance = mount(ScopeLine, { target, props: { scope: wholeLibrary() } });
    flushSync();
    expect(q("turn-scope")).toBeNull();
  });
});

describe("Ask with a scope", () => {
  beforeEach(() => {
    app.methods = [{ id: "vanilla-rag", name: "Vanilla RAG", summary: "Retrieve, then answer.", retrieves: true, defaults: COMMON_DEFAULTS, options: [] }];
    newThread();
    askForm.scope.set(wholeLibrary());
  });

  it("cannot be asked while the scope cannot be used, saying why", async () => {
    instance = mount(AskComposer, { target });
    await settle();
    const ask = q<HTMLButtonElement>("ask-submit")!;
    expect(ask.disabled).toBe(false);

    askForm.scope.set({ ...wholeLibrary(), formats: ["pdf"] });
    await vi.waitFor(() => expect(status()).toBe("nothing indexed matches the scope (format pdf); widen it"));
    flushSync();
    expect(ask.disabled).toBe(true);
    expect(ask.title).toBe("Change the scope to ask: nothing indexed matches the scope (format pdf); widen it");
    expect(ask.getAttribute("aria-describedby")).toBe("ask-scope-status");

    // Enter in the question asks nothing either.
    const question = q<HTMLTextAreaElement>("question-input")!;
    question.value = "What is Rc?";
    question.dispatchEvent(new Event("input", { bubbles: true }));
    question.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
    await settle();
    expect(shell.invoke.mock.calls.some(([c]) => c === "ask")).toBe(false);
    expect(target.querySelector(".field-error[role=alert]")?.textContent).toMatch(/scope cannot be used/);
  });

  it("sends the scope with every turn and keeps it for a new thread", async () => {
    shell.invoke.mockImplementation(async (command: string, args: Record<string, unknown> = {}) => {
      if (command === "library_overview") return overview;
      if (command === "scope_size") return scopeSize(args.scope as Scope);
      if (command === "ask") return new Promise(() => {});
      throw { code: "internal", message: `unexpected command ${command}`, details: null };
    });
    instance = mount(AskComposer, { target });
    await settle();
    const notes = { ...wholeLibrary(), paths: ["/home/me/notes"] };
    askForm.scope.set(notes);
    const question = q<HTMLTextAreaElement>("question-input")!;
    question.value = "What is Rc?";
    question.dispatchEvent(new Event("input", { bubbles: true }));
    // Asked straight away: the pending count is made first, not skipped.
    q<HTMLButtonElement>("ask-submit")!.click();
    await settle();
    const asked = shell.invoke.mock.calls.filter(([c]) => c === "ask").map(([, args]) => args.request);
    expect(asked).toHaveLength(1);
    expect(asked[0].scope).toEqual(notes);
    // The turn keeps the scope it was sent with, whatever the picker says next.
    askForm.scope.set(wholeLibrary());
    expect(askForm.current?.request.scope).toEqual(notes);
    askForm.scope.set(notes);
    newThread();
    expect(askForm.scope.snapshot()).toEqual(notes);
  });
});
