// Library's collections against a fake shell: listed, saved from ticked
// and typed folders, refused with the engine's reason, deleted only once
// confirmed.
import { mount, unmount } from "svelte";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Collection } from "$lib/bindings/Collection";
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

let target: HTMLElement;
let instance: ReturnType<typeof mount>;

const q = <T extends HTMLElement = HTMLElement>(id: string) => target.querySelector<T>(`[data-testid="${id}"]`);
const rows = () => [...target.querySelectorAll<HTMLElement>('[data-testid="collection-row"]')];
const calls = (command: string) => shell.invoke.mock.calls.filter(([c]) => c === command).map(([, args]) => args);

beforeEach(async () => {
  saved = [{ name: "work", folders: ["/home/me/papers"], documents: 30 }];
  shell.invoke.mockReset();
  shell.invoke.mockImplementation(async (command: string, args: Record<string, unknown> = {}) => {
    if (command === "library_overview") return overview;
    if (command === "collections") return saved;
    if (command === "save_collection") {
      const { name, folders } = args as { name: string; folders: string[] };
      const outside = folders.find((f) => !f.startsWith("/home/me/"));
      if (outside) throw { code: "invalid_input", message: `${outside} is not in the library: add its folder first`, details: null };
      const collection = { name, folders: [...folders].sort(), documents: 12 };
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
  it("lists each collection with its documents and folders", () => {
    expect(rows()).toHaveLength(1);
    expect(rows()[0].dataset.name).toBe("work");
    expect(rows()[0].textContent).toContain("30 documents");
    expect(rows()[0].textContent).toContain("/home/me/papers");
  });

  it("saves a collection of ticked and typed folders, then lists it", async () => {
    const save = q<HTMLButtonElement>("collection-save")!;
    expect(save.disabled).toBe(true);
    type(q<HTMLInputElement>("collection-name")!, "rust");
    target.querySelector<HTMLInputElement>('[data-testid="collection-folder"][data-value="/home/me/notes"]')!.click();
    type(q<HTMLInputElement>("collection-path-input")!, "/home/me/papers/rust/");
    q("collection-path-add")!.click();
    await settle();
    expect(save.disabled).toBe(false);
    save.click();
    await settle();
    expect(calls("save_collection")).toEqual([{ name: "rust", folders: ["/home/me/notes", "/home/me/papers/rust"] }]);
    expect(rows().map((r) => r.dataset.name)).toEqual(["work", "rust"]);
    // The form is ready for the next one.
    expect(q<HTMLInputElement>("collection-name")!.value).toBe("");
    expect(q("collection-path-chip")).toBeNull();
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
    saved = [{ name: HOSTILE, folders: [`/home/me/${HOSTILE}`], documents: 1 }];
    unmount(instance);
    instance = mount(CollectionsPanel, { target });
    await settle();
    expect(rows()).toHaveLength(1);
    expectVisible(rows()[0].querySelector(".name")!);
    expectInert(target.querySelector("ul.rows")!);
  });
});
