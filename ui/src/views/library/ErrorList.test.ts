import { flushSync, mount, tick, unmount } from "svelte";
import { describe, expect, it, vi } from "vitest";
import { invoke } from "@tauri-apps/api/core";

vi.mock("@tauri-apps/api/core", () => ({ invoke: vi.fn(), Channel: class {} }));

const { default: ErrorList } = await import("./ErrorList.svelte");

const errors = [
  { path: "/notes/broken.pdf", error: "not a PDF: no header", set_aside: false },
  {
    path: "/notes/zz-bad.md",
    error: "Folio stopped while reading this file; `folio retry /notes/zz-bad.md` tries again",
    set_aside: true,
  },
];

describe("ErrorList", () => {
  it("offers Retry for a set-aside file only, and retries that file alone", async () => {
    const calls = vi.mocked(invoke);
    calls.mockImplementation(async (command: string) =>
      command === "retry_files"
        ? { indexed: 1, unchanged: 0, failed: 0, removed: 0, set_aside: 0, chunks_embedded: 1, chunks_reused: 0, cancelled: false }
        : null,
    );
    const target = document.createElement("div");
    const instance = mount(ErrorList, { target, props: { errors } });
    flushSync();
    const rows = [...target.querySelectorAll('[data-testid="file-error"]')];
    expect(rows.map((r) => r.getAttribute("data-set-aside"))).toEqual(["false", "true"]);
    expect(rows[0].querySelector('[data-testid="retry-file"]')).toBeNull();
    const retry = rows[1].querySelector<HTMLButtonElement>('[data-testid="retry-file"]')!;
    retry.click();
    flushSync();
    expect(retry.disabled).toBe(true);
    expect(calls).toHaveBeenCalledWith("retry_files", { paths: ["/notes/zz-bad.md"] });
    await tick();
    await new Promise((resolve) => setTimeout(resolve, 0));
    flushSync();
    expect(retry.disabled).toBe(false);
    unmount(instance);
  });
});
