// What the library shows of a hostile document before anyone asks about
// it: its title (taken from the document), the reason it failed, its note,
// and the list of files that could not be indexed.
import { flushSync, mount, tick, unmount } from "svelte";
import { describe, expect, it, vi } from "vitest";
import type { DocumentPage } from "$lib/bindings/DocumentPage";

const shell = vi.hoisted(() => ({ invoke: vi.fn() }));
vi.mock("@tauri-apps/api/core", () => ({ invoke: shell.invoke, Channel: class {} }));

const { default: FolderDocuments } = await import("./FolderDocuments.svelte");
const { default: ErrorList } = await import("./ErrorList.svelte");
const { expectInert, expectVisible, HOSTILE } = await import("$lib/testing/hostile");
const { app } = await import("$lib/stores/app.svelte");
const { askForm } = await import("$lib/stores/ask-form.svelte");

const documents = (["indexed", "failed"] as const).map((status, i) => ({
  id: i + 1,
  path: `/notes/${i}.html`,
  format: "html",
  title: HOSTILE,
  hash: null,
  size: 10,
  mtime_ns: 0,
  status,
  error: status === "failed" ? HOSTILE : null,
  note: HOSTILE,
  set_aside: false,
}));

describe("hostile documents in the library", () => {
  it("list with their titles, reasons and notes as text", async () => {
    const page: DocumentPage = { total: 2, documents };
    shell.invoke.mockResolvedValue(page);
    const target = document.createElement("div");
    const instance = mount(FolderDocuments, { target, props: { folder: "/notes", count: 2 } });
    flushSync();
    await tick();
    await Promise.resolve();
    flushSync();
    expectInert(target);
    for (const cell of target.querySelectorAll("td.doc, td.reason")) expectVisible(cell);
    unmount(instance);
  });

  it("that failed are listed with their reasons as text", () => {
    const target = document.createElement("div");
    const instance = mount(ErrorList, { target, props: { errors: [{ path: `/notes/${HOSTILE}`, error: HOSTILE, set_aside: true }] } });
    flushSync();
    expectInert(target);
    expectVisible(target.querySelector(".path")!);
    expectVisible(target.querySelector(".field-error")!);
    unmount(instance);
  });
});

describe("asking about one document", () => {
  it("switches to Ask with the whole-document method, a scope of that document and a new thread", async () => {
    shell.invoke.mockResolvedValue({ total: 2, documents } satisfies DocumentPage);
    const target = document.body.appendChild(document.createElement("div"));
    const instance = mount(FolderDocuments, { target, props: { folder: "/notes", count: 2 } });
    flushSync();
    await tick();
    await Promise.resolve();
    flushSync();
    // Only indexed documents can be asked about.
    const buttons = target.querySelectorAll<HTMLButtonElement>('[data-testid="ask-about-document"]');
    expect(buttons).toHaveLength(1);
    askForm.method = "vanilla-rag";
    buttons[0].click();
    flushSync();
    expect(app.view).toBe("ask");
    expect(askForm.method).toBe("whole-document");
    expect(askForm.scope.snapshot()).toEqual({ paths: ["/notes/0.html"], collections: [], formats: [], since: null, tags: [] });
    expect(askForm.turns).toHaveLength(0);
    unmount(instance);
    target.remove();
  });
});
