// One turn of Ask's conversation: a hostile follow-up rewrite shown as
// text, and the trace open while the turn runs and while it is the newest.
import { flushSync, mount, unmount } from "svelte";
import { beforeAll, describe, expect, it, vi } from "vitest";

const shell = vi.hoisted(() => ({ invoke: vi.fn() }));
vi.mock("@tauri-apps/api/core", () => ({ invoke: shell.invoke, Channel: class {} }));

const { default: AskTurn } = await import("./AskTurn.svelte");
const { AskRun } = await import("$lib/stores/ask.svelte");
const { registerBuiltinTraceRenderers } = await import("$lib/traces/builtin");
const { expectInert, expectVisible, HOSTILE, hostileRun } = await import("$lib/testing/hostile");

const observed: Element[] = [];

beforeAll(() => {
  registerBuiltinTraceRenderers();
  // jsdom lays nothing out: the turn only has to ask to be followed.
  vi.stubGlobal("matchMedia", () => ({ matches: true }));
  vi.stubGlobal(
    "ResizeObserver",
    class {
      observe(element: Element) {
        observed.push(element);
      }
      disconnect() {
        observed.splice(0);
      }
    },
  );
});

describe("AskTurn", () => {
  it("shows how a follow-up was read, follows the turn while it runs, and folds the trace of an older turn", async () => {
    let finish: (record: unknown) => void = () => {};
    shell.invoke.mockImplementation((_command: string, args: { on_event: { onmessage: (events: unknown) => void } }) => {
      args.on_event.onmessage([
        { type: "started", run_id: 2, thread_id: 4, method: "vanilla-rag" },
        { type: "rewritten", rewrite: { kind: "fell_back", reason: HOSTILE } },
      ]);
      return new Promise((resolve) => (finish = resolve));
    });
    const run = new AskRun({ question: HOSTILE, method: "vanilla-rag", k: 5, temperature: null, max_tokens: null, options: {}, scope: { paths: [], collections: [HOSTILE], formats: [], since: null, tags: [] }, thread: 4 });
    const done = run.start();
    const target = document.body.appendChild(document.createElement("div"));
    const instance = mount(AskTurn, { target, props: { run, newest: true } });
    flushSync();
    const note = () => target.querySelector('[data-testid="rewrite-note"]');
    const details = () => target.querySelector<HTMLDetailsElement>('[data-testid="trace-details"]')!;
    expect(note()?.textContent).toMatch(/^Searched as asked: /);
    expectVisible(note()!);
    expect(details().open).toBe(true);
    expect(target.querySelector('[data-testid="trace-panel"]')).not.toBeNull();
    expect(observed).toEqual([target.querySelector('[data-testid="ask-turn"] .lead')]);

    const rewrite = { kind: "standalone", query: HOSTILE };
    finish({ ...hostileRun(), id: 2, thread_id: 4, status: "done", error: null, turn: { history: [1], left_out: [{ run: 1, reason: "over_budget" }], rewrite } });
    await done;
    flushSync();
    expect(observed).toEqual([]);
    // The newest turn keeps its trace open.
    expect(details().open).toBe(true);
    expect(note()?.textContent).toMatch(/^Searched as: /);
    expectVisible(note()!);
    expect(target.textContent).toContain("Not shown to the model: 1 earlier turn over the context budget.");
    expectInert(target);
    unmount(instance);

    const older = mount(AskTurn, { target, props: { run, newest: false } });
    flushSync();
    expect(details().open).toBe(false);
    expect(target.querySelector('[data-testid="trace-panel"]')).toBeNull();
    unmount(older);
    target.remove();
  });
});
