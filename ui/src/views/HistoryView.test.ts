// History over a stored run whose question, answer, sources, trace and
// model calls all come from a hostile model and hostile documents.
import { flushSync, mount, tick, unmount } from "svelte";
import { beforeAll, describe, it, vi } from "vitest";

const shell = vi.hoisted(() => ({ invoke: vi.fn() }));
vi.mock("@tauri-apps/api/core", () => ({ invoke: shell.invoke, Channel: class {} }));

const { default: HistoryView } = await import("./HistoryView.svelte");
const { registerBuiltinTraceRenderers } = await import("$lib/traces/builtin");
const { passage, vanillaRagTrace } = await import("$lib/traces/testing");
const { expectInert, expectVisible, HOSTILE, HOSTILE_PAYLOADS, hostileRun } = await import("$lib/testing/hostile");

const trace = vanillaRagTrace({ query: HOSTILE, passages: [passage(1, { text: HOSTILE, heading_path: HOSTILE })] });
const run = hostileRun(trace);
const call = { step: HOSTILE, prompt_tokens: 1, completion_tokens: 1, wall_ms: 1, finish: HOSTILE, error: HOSTILE };

shell.invoke.mockImplementation(async (command: string) => {
  if (command === "runs") return [run];
  if (command === "run_detail") return { run, calls: [call] };
  throw { code: "internal", message: `unexpected command ${command}`, details: null };
});

async function settle() {
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    await tick();
  }
  flushSync();
}

describe("HistoryView", () => {
  beforeAll(registerBuiltinTraceRenderers);

  it("lists and opens a hostile run as text", async () => {
    const target = document.body.appendChild(document.createElement("div"));
    const instance = mount(HistoryView, { target });
    await settle();
    expectInert(target);
    expectVisible(target.querySelector('[data-testid="history-row"]')!);
    expectVisible(target.querySelector("#run-question")!);
    expectVisible(target.querySelector('[data-testid="answer"]')!, HOSTILE_PAYLOADS);
    expectVisible(target.querySelector('[data-testid="trace-panel"] .passages')!);
    expectVisible(target.querySelector("table")!);
    unmount(instance);
    target.remove();
  });
});
