// History over a stored thread whose title, questions, answers, rewrites,
// sources, trace and model calls all come from a hostile model and hostile
// documents.
import { flushSync, mount, unmount } from "svelte";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { settle } from "$lib/testing/settle";

const shell = vi.hoisted(() => ({ invoke: vi.fn() }));
vi.mock("@tauri-apps/api/core", () => ({ invoke: shell.invoke, Channel: class {} }));

const { default: HistoryView } = await import("./HistoryView.svelte");
const { registerBuiltinTraceRenderers } = await import("$lib/traces/builtin");
const { passage, vanillaRagTrace } = await import("$lib/traces/testing");
const { runCitations } = await import("$lib/runs");
const { expectInert, expectVisible, HOSTILE, HOSTILE_PAYLOADS, hostileRun } = await import("$lib/testing/hostile");

const trace = vanillaRagTrace({ query: HOSTILE, passages: [passage(1, { text: HOSTILE, heading_path: HOSTILE })] });
const first = { ...hostileRun(trace), id: 1, thread_id: 4 };
const followUp = {
  ...hostileRun(trace),
  id: 2,
  thread_id: 4,
  turn: { history: [1], left_out: [], rewrite: { kind: "standalone" as const, query: HOSTILE } },
};
const call = { step: HOSTILE, prompt_tokens: 1, completion_tokens: 1, wall_ms: 1, finish: HOSTILE, error: HOSTILE };
const summary = { id: 4, title: HOSTILE, turns: 2, forked_from: 3, created_at: 0, updated_at: 0 };
const [cited] = runCitations(first);

shell.invoke.mockImplementation(async (command: string) => {
  if (command === "threads") return [summary];
  if (command === "thread_detail") {
    return { summary, turns: [{ run: first, calls: [call] }, { run: followUp, calls: [call] }], gone: [cited.path] };
  }
  throw { code: "internal", message: `unexpected command ${command}`, details: null };
});

describe("HistoryView", () => {
  beforeAll(registerBuiltinTraceRenderers);

  it("lists and opens a hostile thread as text, turn by turn", async () => {
    const target = document.body.appendChild(document.createElement("div"));
    const instance = mount(HistoryView, { target });
    await settle();
    const row = target.querySelector('[data-testid="history-row"]')!;
    expectVisible(row);
    expect(row.textContent).toContain("2 turns");
    expect(row.textContent).toContain("branched from thread 3");
    expectVisible(target.querySelector("#thread-title")!);

    const turns = [...target.querySelectorAll('[data-testid="history-turn"]')];
    expect(turns).toHaveLength(2);
    for (const turn of turns) {
      expectVisible(turn.querySelector("h3")!);
      expectVisible(turn.querySelector('[data-testid="answer"]')!, HOSTILE_PAYLOADS);
      // The cited file has left the library: it is marked, and not offered to open.
      expect(turn.querySelector('[data-testid="citation-gone"]')).not.toBeNull();
      expect(turn.querySelector('button[data-testid="citation"]')).toBeNull();
    }
    expect(turns[0].querySelector('[data-testid="rewrite-note"]')).toBeNull();
    expectVisible(turns[1].querySelector('[data-testid="rewrite-note"]')!);

    // Traces stay folded until asked for.
    expect(target.querySelector('[data-testid="trace-panel"]')).toBeNull();
    for (const details of target.querySelectorAll<HTMLDetailsElement>('[data-testid="trace-details"]')) {
      details.open = true;
      details.dispatchEvent(new Event("toggle"));
    }
    flushSync();
    expect(target.querySelectorAll('[data-testid="trace-panel"]')).toHaveLength(2);
    expectVisible(target.querySelector('[data-testid="trace-panel"] .passages')!);
    expectVisible(target.querySelector("table")!);
    expectInert(target);
    unmount(instance);
    target.remove();
  });
});
