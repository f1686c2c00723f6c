// A Compare column fed by a hostile model and hostile documents, while it
// streams and once its run is stored.
import { flushSync, mount, unmount } from "svelte";
import { beforeAll, describe, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => ({ invoke: vi.fn(), Channel: class {} }));

const { default: CompareColumn } = await import("./CompareColumn.svelte");
const { AskRun, foldRunEvent } = await import("$lib/stores/ask.svelte");
const { registerBuiltinTraceRenderers } = await import("$lib/traces/builtin");
const { passage, vanillaRagTrace } = await import("$lib/traces/testing");
const { expectInert, expectVisible, HOSTILE, HOSTILE_PAYLOADS, hostileRun } = await import("$lib/testing/hostile");

describe("CompareColumn", () => {
  beforeAll(registerBuiltinTraceRenderers);

  it("keeps streamed and stored model and document text inert", () => {
    const run = new AskRun({ question: HOSTILE, method: "vanilla-rag", k: 5, temperature: null, max_tokens: null, options: {}, scope: { paths: [`/notes/${HOSTILE}`], collections: [], formats: [], since: null, tags: [] } });
    const trace = vanillaRagTrace({ query: HOSTILE, passages: [passage(1, { text: HOSTILE, heading_path: HOSTILE })] });
    for (const event of [
      { type: "started", run_id: 1, thread_id: 1, method: "vanilla-rag" },
      { type: "retrieved", query: HOSTILE, passages: 1 },
      { type: "llm_started", step: HOSTILE },
      { type: "token", step: HOSTILE, text: HOSTILE },
      { type: "trace", trace },
    ] as const) {
      foldRunEvent(run.progress, event);
    }
    const target = document.body.appendChild(document.createElement("div"));
    const instance = mount(CompareColumn, { target, props: { run } });
    flushSync();
    expectInert(target);
    expectVisible(target.querySelector('[data-testid="answer"]')!);
    expectVisible(target.querySelector(".timeline")!);

    run.record = hostileRun(trace);
    flushSync();
    expectInert(target);
    expectVisible(target.querySelector('[data-testid="answer"]')!, HOSTILE_PAYLOADS);
    expectVisible(target.querySelector('[data-testid="trace-panel"] .passages')!);
    unmount(instance);
    target.remove();
  });
});
