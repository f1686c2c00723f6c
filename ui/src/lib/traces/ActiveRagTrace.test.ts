import { describe, expect, it } from "vitest";
import type { SourceTarget } from "$lib/source";
import type { TraceProps } from "./registry";
import ActiveRagTrace from "./ActiveRagTrace.svelte";
import { expectInert, expectVisible, HOSTILE } from "$lib/testing/hostile";
import { activeRagTrace, passage, render, text } from "./testing";

const agents = (root: Element) => [...root.querySelectorAll<HTMLElement>('[data-testid="activerag-agent"]')];

describe("ActiveRagTrace", () => {
  it("draws the three agents in order with what each wrote", () => {
    const { target, destroy } = render(ActiveRagTrace, { trace: activeRagTrace() });
    const flow = target.querySelector('[data-testid="activerag-agents"]');
    expect(flow?.tagName).toBe("OL");
    const all = agents(target);
    expect(all.map((a) => text(a.querySelector("h4")))).toEqual([
      "Self-inquiry",
      "Knowledge assimilation",
      "Thought accommodation",
    ]);
    expect(text(all[0].querySelector(".markdown"))).toContain("I believe Rc is the thread-safe one");
    expect(text(all[1])).toContain("corrections to trust over the model's memory");
    expect(text(all[2].querySelector(".markdown"))).toContain("Arc is the thread-safe one");
    expect(text(target)).toContain("reflection");
    expect(target.querySelector(".warning")).toBeNull();
    destroy();
  });

  it("says which agent an ablation left out", () => {
    const trace = activeRagTrace({ agents: "no-assimilation", assimilation: "" });
    const { target, destroy } = render(ActiveRagTrace, { trace });
    const all = agents(target);
    expect(text(all[1])).toContain("Left out by the no-assimilation ablation.");
    expect(all[1].querySelector(".pending")).toBeNull();
    expect(text(target)).toContain("the last agent reads the passages themselves");
    destroy();
  });

  it("notes a missing answer line and unknown citations", () => {
    const trace = activeRagTrace({
      accommodation: "Arc is the thread-safe one [3] [8].",
      answer_line_missing: true,
      unknown_citations: [8],
    });
    const { target, destroy } = render(ActiveRagTrace, { trace });
    const warnings = [...target.querySelectorAll(".warning")].map(text);
    expect(warnings[0]).toContain("no “Answer:” line");
    expect(warnings[1]).toContain("[8]");
    destroy();
  });

  it("lists the replies that were cut off and kept", () => {
    const note = "the self-inquiry reply reached max_tokens; what it had written was used";
    const { target, destroy } = render(ActiveRagTrace, { trace: activeRagTrace({ notes: [note] }) });
    expect(text(target.querySelector('[aria-label="Replies cut off at the token limit"]')!)).toContain(note);
    destroy();
  });

  it("shows the agents still to come as pending during a live run", () => {
    const trace = activeRagTrace({ assimilation: "", accommodation: "" });
    const { target, destroy } = render(ActiveRagTrace, { trace, running: true });
    const [first, second, third] = agents(target);
    expect(first.querySelector(".pending")).toBeNull();
    expect(second.querySelector(".pending.working")?.textContent).toContain("Working…");
    expect(third.querySelector(".pending")?.classList.contains("working")).toBe(false);
    expect(text(third)).toContain("Waiting for the step above.");
    destroy();
  });

  it("opens the passages it read, from the list and from citations", () => {
    const opened: SourceTarget[] = [];
    const trace = activeRagTrace();
    const { target, destroy } = render(ActiveRagTrace, {
      trace,
      run: { citations: [passage(3)] } as unknown as TraceProps["run"],
      onCite: (t) => opened.push(t),
    });
    const list = target.querySelector<HTMLDetailsElement>("details.passages");
    expect(list?.open).toBe(false);
    expect(text(list?.querySelector("summary"))).toBe("Passages the assimilation read (3)");
    const items = list!.querySelectorAll(".passages li");
    expect([...items].map((li) => li.classList.contains("cited"))).toEqual([false, false, true]);
    items[1].querySelector("button")?.click();
    agents(target)[1].querySelector<HTMLButtonElement>("button.cite")?.click();
    expect(opened.map((t) => t.number)).toEqual([2, 2]);
    destroy();
  });

  it("keeps agent and document text inert", () => {
    const trace = activeRagTrace({
      self_inquiry: HOSTILE,
      assimilation: `${HOSTILE} [1]`,
      accommodation: `${HOSTILE}\nAnswer: ${HOSTILE}`,
      passages: [passage(1, { text: HOSTILE, heading_path: HOSTILE })],
    });
    const { target, destroy } = render(ActiveRagTrace, { trace });
    target.querySelector("details")!.open = true;
    expectInert(target);
    expect(text(agents(target)[0])).toContain("<script>");
    for (const agent of agents(target)) expectVisible(agent);
    destroy();
  });
});
