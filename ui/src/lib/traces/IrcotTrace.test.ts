import { describe, expect, it, vi } from "vitest";
import type { Trace } from "$lib/bindings/Trace";
import type { SourceTarget } from "$lib/source";
import { expectInert, expectVisible, HOSTILE } from "$lib/testing/hostile";
import { registerBuiltinTraceRenderers } from "./builtin";
import IrcotTrace from "./IrcotTrace.svelte";
import { rendererFor } from "./registry";
import { fact, passage, render, text } from "./testing";

type IrcotFixture = Extract<Trace, { method: "ircot" }>;

function ircotTrace(overrides: Partial<IrcotFixture> = {}): IrcotFixture {
  return {
    method: "ircot",
    k: 2,
    max_steps: 8,
    max_passages: 15,
    first: [1, 2],
    steps: [
      { sentence: "Rc<T> counts the owners of a value.", found: [2, 3], new: 1 },
      { sentence: "So the answer is: it frees the value when the count is zero.", found: [], new: 0 },
    ],
    stop: "answered",
    passages: [passage(1), passage(2), passage(3)],
    unknown_citations: [],
    notes: [],
    ...overrides,
  };
}

const steps = (root: Element) => [...root.querySelectorAll<HTMLElement>('[data-testid="ircot-step"]')];

describe("IrcotTrace", () => {
  it("is the renderer registered for ircot", () => {
    registerBuiltinTraceRenderers();
    expect(rendererFor("ircot")).toBe(IrcotTrace);
  });

  it("lists each sentence with the passages it retrieved, and why the chain ended", () => {
    const { target, destroy } = render(IrcotTrace, { trace: ircotTrace() });
    const root = target.querySelector('[data-testid="ircot-trace"]')!;
    expect(fact(root, "Stopped")).toBe("a sentence gave the answer");
    expect(fact(root, "Collected")).toBe("3 of at most 15");
    expect(text(root.querySelector('[data-testid="ircot-first"]'))).toContain("The question retrieved [1] [2]");
    const drawn = steps(root);
    expect(drawn.map((s) => text(s.querySelector(".sentence")))).toEqual([
      "Rc<T> counts the owners of a value.",
      "So the answer is: it frees the value when the count is zero.",
    ]);
    expect(text(drawn[0].querySelector(".found"))).toBe("→ [2] [3] (1 new)");
    expect(drawn[1].querySelector(".found")).toBeNull();
    expect(root.querySelectorAll(".passages li")).toHaveLength(3);
    destroy();
  });

  it("opens a found passage's source", () => {
    const onCite = vi.fn<(target: SourceTarget) => void>();
    const trace = ircotTrace();
    const { target, destroy } = render(IrcotTrace, { trace, onCite });
    steps(target)[0].querySelectorAll<HTMLButtonElement>("button.ref")[1].click();
    expect(onCite).toHaveBeenCalledWith(expect.objectContaining({ path: trace.passages[2].path }));
    destroy();
  });

  it("says a live run is still reasoning", () => {
    const { target, destroy } = render(IrcotTrace, { trace: ircotTrace({ steps: [] }), running: true });
    expect(fact(target, "Stopped")).toBe("still reasoning");
    expect(text(target.querySelector(".pending"))).toBe("Writing the next sentence…");
    destroy();
  });

  it("keeps a hostile sentence as text", () => {
    const trace = ircotTrace();
    trace.steps[0].sentence = HOSTILE;
    const { target, destroy } = render(IrcotTrace, { trace });
    expectInert(target);
    expectVisible(steps(target)[0]);
    destroy();
  });
});
