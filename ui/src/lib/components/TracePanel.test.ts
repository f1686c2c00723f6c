import { beforeAll, describe, expect, it, vi } from "vitest";
import { flushSync, mount, unmount } from "svelte";
import type { RunRecord } from "$lib/bindings/RunRecord";

vi.mock("@tauri-apps/api/core", () => ({ invoke: vi.fn(), Channel: class {} }));

const { default: TracePanel } = await import("./TracePanel.svelte");
const { app } = await import("$lib/stores/app.svelte");
const { emptyProgress, foldRunEvent } = await import("$lib/stores/ask.svelte");
const { registerBuiltinTraceRenderers } = await import("$lib/traces/builtin");
const { pagerTrace } = await import("$lib/traces/testing");

function panel(props: Record<string, unknown>) {
  const target = document.createElement("div");
  const instance = mount(TracePanel, { target, props: { method: "pager", record: null, ...props } });
  flushSync();
  return { target, destroy: () => unmount(instance) };
}

describe("TracePanel", () => {
  beforeAll(registerBuiltinTraceRenderers);

  it("draws the live trace while the run goes on, and opens its passages", () => {
    const progress = emptyProgress();
    foldRunEvent(progress, { type: "trace", trace: pagerTrace() });
    const { target, destroy } = panel({ progress, running: true });
    expect(target.querySelectorAll('[data-testid="pager-slot"]')).toHaveLength(3);
    expect(target.textContent).toContain("Waiting for evidence…");
    target.querySelector<HTMLButtonElement>("button.cite")?.click();
    expect(app.source?.path).toBe("/notes/rust/smart-pointers.md");
    destroy();
  });

  it("prefers the stored trace once the run is recorded", () => {
    const progress = emptyProgress();
    foldRunEvent(progress, { type: "trace", trace: pagerTrace() });
    const stored = pagerTrace();
    stored.page.sections[2].body = "Use Arc only when the value crosses threads [3].";
    const record = { method: "pager", trace: stored, citations: [] } as unknown as RunRecord;
    const { target, destroy } = panel({ progress, record });
    const filled = [...target.querySelectorAll<HTMLElement>('[data-testid="pager-slot"]')].map((s) => s.dataset.filled);
    expect(filled).toEqual(["true", "true", "true"]);
    expect(target.textContent).not.toContain("Waiting for evidence…");
    destroy();
  });

  it("waits quietly for methods that report no trace until the end", () => {
    const { target, destroy } = panel({ method: "vanilla-rag", progress: emptyProgress(), running: true });
    expect(target.textContent).toContain("The full trace appears when the answer is finished.");
    destroy();
  });
});
