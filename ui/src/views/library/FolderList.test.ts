import { flushSync, mount, unmount } from "svelte";
import { describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => ({ invoke: vi.fn(), Channel: class {} }));

const { default: FolderList } = await import("./FolderList.svelte");

describe("FolderList", () => {
  it("marks a folder gone from the disk as missing, with its documents kept", () => {
    const folders = [
      { id: 1, path: "/media/usb/papers", documents: 30, errors: 0, missing: true },
      { id: 2, path: "/home/me/notes", documents: 12, errors: 0, missing: false },
    ];
    const target = document.createElement("div");
    const instance = mount(FolderList, { target, props: { folders } });
    flushSync();
    const rows = [...target.querySelectorAll('[data-testid="folder-row"]')];
    expect(rows[0].querySelector('[data-testid="folder-missing"]')?.textContent).toBe("Missing: documents kept");
    expect(rows[0].textContent).toContain("30 documents");
    expect(rows[1].querySelector('[data-testid="folder-missing"]')).toBeNull();
    unmount(instance);
  });
});
