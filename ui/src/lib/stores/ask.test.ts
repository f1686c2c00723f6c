import { beforeEach, describe, expect, it, vi } from "vitest";
import type { RunEvent } from "$lib/bindings/RunEvent";
import { pagerTrace } from "$lib/traces/testing";

const core = vi.hoisted(() => {
  class Channel<T> {
    onmessage: (message: T) => void = () => {};
  }
  return { invoke: vi.fn(), Channel };
});
vi.mock("@tauri-apps/api/core", () => core);

const { AskRun, emptyProgress, foldRunEvent, llmSteps } = await import("./ask.svelte");

const request = {
  question: "What is Rc?",
  method: "vanilla-rag",
  k: 5,
  temperature: null,
  max_tokens: null,
  options: {},
  scope: { paths: ["/notes/rust"], collections: [], formats: [], since: null, tags: [] },
};

function record(status: "done" | "failed" | "cancelled", extra: object = {}) {
  return {
    id: 7,
    thread_id: 3,
    turn: null,
    question: request.question,
    method: request.method,
    scope: request.scope,
    params: {},
    model: {},
    status,
    answer: "Rc counts references [1].",
    citations: [],
    trace: null,
    error: null,
    timings: { total_ms: 1234 },
    llm_calls: 1,
    prompt_tokens: 100,
    cached_tokens: 0,
    completion_tokens: 20,
    created_at: 0,
    finished_at: 1,
    ...extra,
  };
}

describe("foldRunEvent", () => {
  it("folds a whole run into steps, tokens and status", () => {
    const progress = emptyProgress();
    const events: RunEvent[] = [
      { type: "started", run_id: 3, thread_id: 3, method: "vanilla-rag" },
      { type: "retrieved", query: "rc", passages: 5 },
      { type: "llm_started", step: "answer" },
      { type: "token", step: "answer", text: "Rc " },
      { type: "token", step: "answer", text: "counts" },
      { type: "llm_finished", step: "answer", prompt_tokens: 90, completion_tokens: 2, wall_ms: 40 },
      { type: "finished", run_id: 3, status: "done" },
    ];
    for (const e of events) foldRunEvent(progress, e);
    expect(progress.runId).toBe(3);
    expect(progress.threadId).toBe(3);
    expect(progress.method).toBe("vanilla-rag");
    expect(progress.status).toBe("done");
    expect(progress.timeline[0]).toEqual({ kind: "retrieval", query: "rc", passages: 5 });
    expect(llmSteps(progress)).toEqual([
      { kind: "llm", step: "answer", text: "Rc counts", finished: true, promptTokens: 90, completionTokens: 2, wallMs: 40 },
    ]);
  });

  it("keeps the thread a follow-up started in and how it was rewritten", () => {
    const progress = emptyProgress();
    expect(progress.threadId).toBeNull();
    expect(progress.rewrite).toBeNull();
    foldRunEvent(progress, { type: "started", run_id: 12, thread_id: 4, method: "vanilla-rag" });
    foldRunEvent(progress, { type: "rewritten", rewrite: { kind: "standalone", query: "Rc drawbacks" } });
    foldRunEvent(progress, { type: "retrieved", query: "Rc drawbacks", passages: 3 });
    expect(progress.runId).toBe(12);
    expect(progress.threadId).toBe(4);
    expect(progress.rewrite).toEqual({ kind: "standalone", query: "Rc drawbacks" });
    expect(progress.timeline).toEqual([{ kind: "retrieval", query: "Rc drawbacks", passages: 3 }]);
  });

  it("keeps repeated steps apart and tolerates tokens before llm_started", () => {
    const progress = emptyProgress();
    foldRunEvent(progress, { type: "token", step: "draft", text: "a" });
    foldRunEvent(progress, { type: "llm_finished", step: "draft", prompt_tokens: 1, completion_tokens: 1, wall_ms: 1 });
    foldRunEvent(progress, { type: "llm_started", step: "draft" });
    foldRunEvent(progress, { type: "token", step: "draft", text: "b" });
    const steps = llmSteps(progress);
    expect(steps.map((s) => [s.text, s.finished])).toEqual([
      ["a", true],
      ["b", false],
    ]);
  });

  it("keeps the latest trace a run reported, alongside its steps", () => {
    const progress = emptyProgress();
    expect(progress.trace).toBeNull();
    const outline = pagerTrace({ steps: [] });
    outline.page = outline.outline;
    const filled = pagerTrace();
    foldRunEvent(progress, { type: "started", run_id: 4, thread_id: 4, method: "pager" });
    foldRunEvent(progress, { type: "trace", trace: outline });
    expect(progress.trace).toEqual(outline);
    foldRunEvent(progress, { type: "retrieved", query: "Rc reference counting single thread", passages: 2 });
    foldRunEvent(progress, { type: "trace", trace: filled });
    expect(progress.trace).toEqual(filled);
    expect(progress.timeline).toHaveLength(1);
  });

  it("ignores event types it does not know", () => {
    const progress = emptyProgress();
    foldRunEvent(progress, { type: "slot_filled", slot: "x" } as unknown as RunEvent);
    expect(progress).toEqual(emptyProgress());
  });
});

describe("AskRun", () => {
  beforeEach(() => {
    core.invoke.mockReset();
  });

  it("streams through its own channel and ends with the stored record", async () => {
    let resolve: (value: unknown) => void = () => {};
    core.invoke.mockImplementation((command: string, args: Record<string, unknown>) => {
      expect(command).toBe("ask");
      expect(args.request).toEqual(request);
      const channel = args.on_event as InstanceType<typeof core.Channel<RunEvent[]>>;
      channel.onmessage([
        { type: "started", run_id: 7, thread_id: 7, method: "vanilla-rag" },
        { type: "llm_started", step: "answer" },
        { type: "token", step: "answer", text: "Rc counts" },
      ]);
      return new Promise((r) => (resolve = r));
    });
    const run = new AskRun(request);
    const done = run.start();
    expect(run.running).toBe(true);
    expect(run.status).toBe("running");
    expect(run.liveText).toBe("Rc counts");
    expect(run.llmCalls).toBe(1);
    expect(core.invoke.mock.calls[0][1].ask_id).toBe(run.askId);
    resolve(record("done"));
    await done;
    expect(run.running).toBe(false);
    expect(run.status).toBe("done");
    expect(run.record?.answer).toBe("Rc counts references [1].");
    expect(run.tokens).toEqual({ prompt: 100, completion: 20 });
    expect(run.wallMs()).toBe(1234);
  });

  it("knows its thread and rewrite from the events, then from the stored record", async () => {
    let resolve: (value: unknown) => void = () => {};
    core.invoke.mockImplementation((_command: string, args: Record<string, unknown>) => {
      const channel = args.on_event as InstanceType<typeof core.Channel<RunEvent[]>>;
      channel.onmessage([
        { type: "started", run_id: 8, thread_id: 3, method: "vanilla-rag" },
        { type: "rewritten", rewrite: { kind: "fell_back", reason: "the model wrote nothing" } },
      ]);
      return new Promise((r) => (resolve = r));
    });
    const run = new AskRun({ ...request, thread: 3 });
    expect(run.threadId).toBe(3);
    const done = run.start();
    expect(run.rewrite).toEqual({ kind: "fell_back", reason: "the model wrote nothing" });
    const rewrite = { kind: "standalone", query: "What is Rc in Rust?" };
    resolve(record("done", { id: 8, turn: { history: [7], left_out: [], rewrite } }));
    await done;
    expect(run.threadId).toBe(3);
    expect(run.rewrite).toEqual(rewrite);
  });

  it("does not claim the followed thread for a fork before it starts", () => {
    expect(new AskRun({ ...request, thread: 3, fork: true }).threadId).toBeNull();
    expect(new AskRun(request).threadId).toBeNull();
  });

  it("wraps a stored run as a finished one", () => {
    const stored = record("done", {
      params: { k: 8, temperature: 0.2, max_tokens: 256, seed: 1, options: { mode: "bm25", hops: 2 } },
      created_at: 1000,
      finished_at: 3000,
    });
    const run = AskRun.stored(stored);
    expect(run.running).toBe(false);
    expect(run.status).toBe("done");
    expect(run.record).toEqual(stored);
    expect(run.threadId).toBe(3);
    expect(run.request).toEqual({
      question: request.question,
      method: request.method,
      k: 8,
      temperature: 0.2,
      max_tokens: 256,
      options: { mode: "bm25", hops: "2" },
      scope: request.scope,
    });
    expect(core.invoke).not.toHaveBeenCalled();
  });

  it("keeps the IpcError when the command rejects", async () => {
    core.invoke.mockRejectedValue({ code: "llm_unavailable", message: "The model server is down", details: "connect refused" });
    const run = new AskRun(request);
    await run.start();
    expect(run.status).toBe("failed");
    expect(run.error).toEqual({ code: "llm_unavailable", message: "The model server is down", details: "connect refused" });
  });

  it("cancels by ask id", async () => {
    core.invoke.mockImplementation((command: string) => (command === "ask" ? new Promise(() => {}) : Promise.resolve()));
    const run = new AskRun(request);
    void run.start();
    await run.cancel();
    expect(core.invoke).toHaveBeenLastCalledWith("cancel_ask", { ask_id: run.askId });
    expect(run.cancelling).toBe(true);
  });
});
