// Compare's requests, for a fresh question and for a follow-up of a thread
// (which keeps the scope the conversation was asked within).
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { AskRequest } from "$lib/bindings/AskRequest";

const core = vi.hoisted(() => ({ invoke: vi.fn(), Channel: class {} }));
vi.mock("@tauri-apps/api/core", () => core);

const { clearCompareThread, compare, followUpInCompare, startCompare } = await import("./compare.svelte");

const request = (method: string): AskRequest => ({
  question: "And its drawbacks?",
  method,
  k: 5,
  temperature: null,
  max_tokens: null,
  options: {},
  scope: { paths: [], collections: [], formats: [], since: null, tags: [] },
});

const sent = () => core.invoke.mock.calls.filter(([c]) => c === "ask").map(([, args]) => args.request);

describe("startCompare", () => {
  beforeEach(() => {
    core.invoke.mockReset();
    core.invoke.mockReturnValue(new Promise(() => {}));
    clearCompareThread();
  });

  it("asks every method a fresh question in no thread", () => {
    startCompare([request("llm-only"), request("vanilla-rag")]);
    expect(sent()).toEqual([request("llm-only"), request("vanilla-rag")]);
    expect(compare.runs).toHaveLength(2);
  });

  it("asks every method the follow-up in a branch of the same thread, within the conversation's scope", () => {
    const scope = { paths: ["/notes/rust"], collections: ["work"], formats: [], since: null, tags: [] };
    followUpInCompare(42, "What is Rc?", "And its drawbacks?", scope);
    expect(compare.question).toBe("And its drawbacks?");
    expect(compare.scope.snapshot()).toEqual(scope);
    startCompare([request("llm-only"), request("vanilla-rag")]);
    expect(sent()).toEqual([
      { ...request("llm-only"), thread: 42, fork: true },
      { ...request("vanilla-rag"), thread: 42, fork: true },
    ]);
    expect(compare.runs.map((r) => r.threadId)).toEqual([null, null]);

    clearCompareThread();
    expect(compare.threadId).toBeNull();
    startCompare([request("llm-only")]);
    expect(sent()[2]).toEqual(request("llm-only"));
  });
});
