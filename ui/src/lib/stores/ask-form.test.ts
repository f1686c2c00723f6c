// Ask's conversation: which thread each turn asks in, and within what scope.
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { AskRequest } from "$lib/bindings/AskRequest";
import type { RunEvent } from "$lib/bindings/RunEvent";
import type { RunRecord } from "$lib/bindings/RunRecord";

const core = vi.hoisted(() => {
  class Channel<T> {
    onmessage: (message: T) => void = () => {};
  }
  return { invoke: vi.fn(), Channel };
});
vi.mock("@tauri-apps/api/core", () => core);

const { askForm, askNext, continueThread, newThread, startAsk } = await import("./ask-form.svelte");

const request = (question: string): AskRequest => ({
  question,
  method: "vanilla-rag",
  k: 5,
  temperature: null,
  max_tokens: null,
  options: {},
  scope: { paths: [], collections: [], formats: [], since: null, tags: [] },
});

function stored(id: number, thread: number, question: string): RunRecord {
  return {
    id,
    thread_id: thread,
    turn: null,
    question,
    method: "llm-only",
    scope: { paths: [], collections: [], formats: [], since: null, tags: [] },
    params: { k: 5, temperature: 0.2, max_tokens: 512, seed: 1, options: {} },
    model: {},
    status: "done",
    answer: "An answer.",
    citations: [],
    trace: null,
    error: null,
    timings: { total_ms: 10 },
    llm_calls: 1,
    prompt_tokens: 1,
    cached_tokens: 0,
    completion_tokens: 1,
    created_at: 0,
    finished_at: 1,
  };
}

/** The shell as Ask meets it: each ask gets run `nextRun` in `thread` (a new one when none is asked for). */
let nextRun = 1;
let nextThread = 100;
const answers: (() => void)[] = [];

function requests(): AskRequest[] {
  return core.invoke.mock.calls.filter(([c]) => c === "ask").map(([, args]) => args.request);
}

/** Lets every pending ask finish. */
async function finishAll() {
  for (const finish of answers.splice(0)) finish();
  await vi.waitFor(() => expect(askForm.current?.running).toBe(false));
}

describe("the Ask conversation", () => {
  beforeEach(() => {
    newThread();
    core.invoke.mockReset();
    core.invoke.mockImplementation((command: string, args: { request: AskRequest; on_event: { onmessage: (e: RunEvent[]) => void } }) => {
      if (command !== "ask") return Promise.resolve();
      const id = nextRun++;
      const thread = args.request.thread ?? nextThread++;
      args.on_event.onmessage([{ type: "started", run_id: id, thread_id: thread, method: args.request.method }]);
      return new Promise((resolve) => answers.push(() => resolve(stored(id, thread, args.request.question))));
    });
  });

  it("asks the first turn in no thread and the next one in the thread the first started", async () => {
    askNext(request("What is Rc?"));
    expect(requests()[0].thread).toBeUndefined();
    expect("thread" in requests()[0]).toBe(false);
    const thread = askForm.threadId;
    expect(thread).not.toBeNull();
    await finishAll();

    askNext(request("And its drawbacks?"));
    expect(requests()[1]).toEqual({ ...request("And its drawbacks?"), thread });
    await finishAll();
    expect(askForm.turns.map((t) => t.request.question)).toEqual(["What is Rc?", "And its drawbacks?"]);
    expect(askForm.current?.request.question).toBe("And its drawbacks?");
    expect(askForm.threadId).toBe(thread);
  });

  it("starts again in no thread after New thread", async () => {
    askNext(request("What is Rc?"));
    await finishAll();
    newThread();
    expect(askForm.turns).toEqual([]);
    expect(askForm.threadId).toBeNull();
    askNext(request("What is Arc?"));
    expect(requests()[1].thread).toBeUndefined();
    await finishAll();
  });

  it("re-runs in a new thread, ending the conversation", async () => {
    askNext(request("What is Rc?"));
    await finishAll();
    startAsk(request("What is Rc?"));
    expect(requests()[1].thread).toBeUndefined();
    expect(askForm.turns).toHaveLength(1);
    await finishAll();
  });

  it("continues a thread from History within the scope of its last turn", () => {
    const scope = { paths: ["/notes/rust"], collections: [], formats: ["markdown" as const], since: null, tags: [] };
    continueThread([stored(7, 42, "What is Rc?"), { ...stored(8, 42, "And Arc?"), scope }]);
    expect(askForm.scope.snapshot()).toEqual(scope);
    expect(askForm.turns.map((t) => t.request.scope.paths)).toEqual([[], ["/notes/rust"]]);
    askForm.scope.set({ paths: [], collections: [], formats: [], since: null, tags: [] });
  });

  it("follows up a thread continued from History", async () => {
    continueThread([stored(7, 42, "What is Rc?"), stored(8, 42, "And Arc?")]);
    expect(askForm.turns.map((t) => [t.request.question, t.running, t.status])).toEqual([
      ["What is Rc?", false, "done"],
      ["And Arc?", false, "done"],
    ]);
    expect(askForm.threadId).toBe(42);
    expect(core.invoke).not.toHaveBeenCalled();
    askNext(request("Which is faster?"));
    expect(requests()[0].thread).toBe(42);
    await finishAll();
  });
});
