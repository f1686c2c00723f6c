// Library's collections against a fake shell: listed, saved from ticked
// and typed folders and ticked tags, refused with the engine's reason,
// deleted only once confirmed.
import { mount, unmount } from "svelte";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Collection } from "$lib/bindings/Collection";
import type { TagCount } from "$lib/bindings/TagCount";
import { settle, type } from "$lib/testing/settle";
import { twoFolderLibrary } from "$lib/testing/library";

const shell = vi.hoisted(() => ({ invoke: vi.fn(), Channel: class {} }));
vi.mock("@tauri-apps/api/core", () => shell);

const { default: CollectionsPanel } = await import("./CollectionsPanel.svelte");
const { library } = await import("$lib/stores/library.svelte");
const { confirmation, settleConfirmation } = await import("$lib/stores/confirm.svelte");
const { expectInert, expectVisible, HOSTILE } = await import("$lib/testing/hostile");

const overview = twoFolderLibrary();

let saved: Collection[] = [];
const noteTags: TagCount[] = [
  { tag: "area", documents: 4 },
  { tag: "area/sub", documents: 2 },
  { tag: "recipes", documents: 7 },
];

let target: HTMLElement;
let instance: ReturnType<typeof mount>;

const q = <T extends HTMLElement = HTMLElement>(id: string) => target.querySelector<T>(`[data-testid="${id}"]`);
const rows = () => [...target.querySelectorAll<HTMLElement>('[data-testid="collection-row"]')];
const calls = (command: string) => shell.invoke.mock.calls.filter(([c]) => c === command).map(([, args]) => args);
const tagOption = (tag: string) =>
  [...target.querySelectorAll<HTMLInputElement>('[data-testid="collection-tag-option"]')].find((o) => o.dataset.tag === tag)!;
const shownTags = (row: HTMLElement) =>
  [...row.querySelectorAll<HTMLElement>('[data-testid="collection-tag"]')].map((t) => [t.dataset.tag, t.textContent]);

beforeEach(async () => {
  saved = [{ name: "work", folders: ["/home/me/papers"], tags: ["area"], documents: 30 }];
  shell.invoke.mockReset();
  shell.invoke.mockImplementation(async (command: string, args: Record<string, unknown> = {}) => {
    if (command === "library_overview") return overview;
    if (command === "collections") return saved;
    if (command === "tags") return noteTags;
    if (command === "save_collection") {
      const { name, folders, tags } = args as { name: string; folders: string[]; tags: string[] };
      const outside = folders.find((f) => !f.startsWith("/home/me/"));
      if (outside) throw { code: "invalid_input", message: `${outside} is not in the library: add its folder first`, details: null };
      const collection = { name, folders: [...folders].sort(), tags: [...tags].sort(), documents: 12 };
      saved = [...saved.filter((c) => c.name !== name), collection];
      return collection;
    }
    if (command === "delete_collection") {
      saved = saved.filter((c) => c.name !== args.name);
      return undefined;
    }
    throw { code: "internal", message: `unexpected command ${command}`, details: null };
  });
  await library.refresh();
  target = document.body.appendChild(document.createElement("div"));
  instance = mount(CollectionsPanel, { target });
  await settle();
});

afterEach(() => {
  unmount(instance);
  target.remove();
});

describe("CollectionsPanel", () => {
  it("lists each collection with its documents, folders and tags", () => {
    expect(rows()).toHaveLength(1);
    expect(rows()[0].dataset.name).toBe("work");
    expect(rows()[0].textContent).toContain("30 documents");
    expect(rows()[0].textContent).toContain("/home/me/papers");
    expect(shownTags(rows()[0])).toEqual([["area", "#area"]]);
  });

  it("saves a collection of ticked and typed folders and ticked tags, then lists it", async () => {
    const save = q<HTMLButtonElement>("collection-save")!;
    expect(save.disabled).toBe(true);
    expect(q("collection-missing")?.textContent).toBe("Name the collection and choose at least one folder or tag.");
    type(q<HTMLInputElement>("collection-name")!, "rust");
    expect(q("collection-missing")?.textContent).toBe("Choose at least one folder or tag.");
    target.querySelector<HTMLInputElement>('[data-testid="collection-folder"][data-value="/home/me/notes"]')!.click();
    type(q<HTMLInputElement>("collection-path-input")!, "/home/me/papers/rust/");
    q("collection-path-add")!.click();
    tagOption("recipes").click();
    tagOption("area/sub").click();
    await settle();
    expect(save.disabled).toBe(false);
    expect(q("collection-missing")).toBeNull();
    save.click();
    await settle();
    expect(calls("save_collection")).toEqual([
      { name: "rust", folders: ["/home/me/notes", "/home/me/papers/rust"], tags: ["recipes", "area/sub"] },
    ]);
    expect(rows().map((r) => r.dataset.name)).toEqual(["work", "rust"]);
    expect(shownTags(rows()[1])).toEqual([
      ["area/sub", "#area/sub"],
      ["recipes", "#recipes"],
    ]);
    // The form is ready for the next one.
    expect(q<HTMLInputElement>("collection-name")!.value).toBe("");
    expect(q("collection-path-chip")).toBeNull();
    expect(tagOption("recipes").checked).toBe(false);
  });

  it("saves a collection of tags alone", async () => {
    tagOption("area").click();
    await settle();
    expect(q<HTMLButtonElement>("collection-save")!.disabled).toBe(true);
    expect(q("collection-missing")?.textContent).toBe("Name the collection.");
    type(q<HTMLInputElement>("collection-name")!, "areas");
    await settle();
    q<HTMLButtonElement>("collection-save")!.click();
    await settle();
    expect(calls("save_collection")).toEqual([{ name: "areas", folders: [], tags: ["area"] }]);
    const row = rows().find((r) => r.dataset.name === "areas")!;
    expect(row.querySelector(".folders")!.textContent).toBe("Every folder of the library");
    expect(shownTags(row)).toEqual([["area", "#area"]]);
  });

  it("shows the engine's reason when a collection cannot be saved", async () => {
    type(q<HTMLInputElement>("collection-name")!, "elsewhere");
    type(q<HTMLInputElement>("collection-path-input")!, "/tmp/x");
    q("collection-path-add")!.click();
    await settle();
    q<HTMLButtonElement>("collection-save")!.click();
    await settle();
    expect(target.querySelector(".error-notice")?.textContent).toContain("/tmp/x is not in the library: add its folder first");
    expect(rows()).toHaveLength(1);
    // What was typed stays, to be corrected.
    expect(q<HTMLInputElement>("collection-name")!.value).toBe("elsewhere");
  });

  it("edits a collection in the form, saving it under the same name", async () => {
    rows()[0].querySelector<HTMLButtonElement>('[data-testid="collection-edit"]')!.click();
    await settle();
    expect(q<HTMLInputElement>("collection-name")!.value).toBe("work");
    expect(target.querySelector<HTMLInputElement>('[data-value="/home/me/papers"]')!.checked).toBe(true);
    expect(tagOption("area").checked).toBe(true);
    expect(tagOption("recipes").checked).toBe(false);
    expect(q("collection-save")?.textContent?.trim()).toBe("Save changes");
  });

  it("deletes a collection only once confirmed", async () => {
    const remove = () => rows()[0].querySelector<HTMLButtonElement>('[data-testid="collection-delete"]')!.click();
    remove();
    await settle();
    expect(confirmation.current?.message).toContain("“work”");
    settleConfirmation(false);
    await settle();
    expect(calls("delete_collection")).toEqual([]);

    remove();
    await settle();
    settleConfirmation(true);
    await settle();
    expect(calls("delete_collection")).toEqual([{ name: "work" }]);
    expect(rows()).toHaveLength(0);
    expect(target.textContent).toContain("No collections yet.");
  });

  it("shows hostile names as text", async () => {
    saved = [{ name: HOSTILE, folders: [`/home/me/${HOSTILE}`], tags: [HOSTILE], documents: 1 }];
    unmount(instance);
    instance = mount(CollectionsPanel, { target });
    await settle();
    expect(rows()).toHaveLength(1);
    expectVisible(rows()[0].querySelector(".name")!);
    expect(shownTags(rows()[0])).toEqual([[HOSTILE, `#${HOSTILE}`]]);
    expectInert(target.querySelector("ul.rows")!);
    // In the form, its tag (carried by no note) is offered ticked, as text too.
    rows()[0].querySelector<HTMLButtonElement>('[data-testid="collection-edit"]')!.click();
    await settle();
    expect(tagOption(HOSTILE).checked).toBe(true);
    expectVisible(tagOption(HOSTILE).closest("label")!);
    expectInert(target.querySelector("form")!);
  });
});
