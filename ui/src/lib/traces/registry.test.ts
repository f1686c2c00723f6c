import { describe, expect, it } from "vitest";
import ActiveRagTrace from "./ActiveRagTrace.svelte";
import { registerBuiltinTraceRenderers } from "./builtin";
import CrpRagTrace from "./CrpRagTrace.svelte";
import GenericTrace from "./GenericTrace.svelte";
import Ig2RagTrace from "./Ig2RagTrace.svelte";
import LlmOnlyTrace from "./LlmOnlyTrace.svelte";
import PagerTrace from "./PagerTrace.svelte";
import Rdr2Trace from "./Rdr2Trace.svelte";
import { registerTraceRenderer, rendererFor, type TraceProps, type TraceRenderer } from "./registry";
import { expectInert, expectVisible, HOSTILE, hostileRun } from "$lib/testing/hostile";
import { passage, render, vanillaRagTrace } from "./testing";
import VanillaRagTrace from "./VanillaRagTrace.svelte";

describe("trace renderer registry", () => {
  it("falls back to the generic JSON view for unknown methods", () => {
    expect(rendererFor("no-such-method")).toBe(GenericTrace);
  });

  it("returns a registered renderer, and a later registration replaces it", () => {
    registerTraceRenderer("test-method", LlmOnlyTrace);
    expect(rendererFor("test-method")).toBe(LlmOnlyTrace);
    registerTraceRenderer("test-method", VanillaRagTrace);
    expect(rendererFor("test-method")).toBe(VanillaRagTrace);
  });

  it("registers the built-in methods", () => {
    registerBuiltinTraceRenderers();
    expect(rendererFor("llm-only")).toBe(LlmOnlyTrace);
    expect(rendererFor("vanilla-rag")).toBe(VanillaRagTrace);
    expect(rendererFor("pager")).toBe(PagerTrace);
    expect(rendererFor("activerag")).toBe(ActiveRagTrace);
    expect(rendererFor("rdr2")).toBe(Rdr2Trace);
    expect(rendererFor("ig2rag")).toBe(Ig2RagTrace);
    expect(rendererFor("crp-rag")).toBe(CrpRagTrace);
  });
});

describe("trace renderers", () => {
  it("the vanilla-rag view lists passages, marks cited ones and reports clicks", () => {
    const passage = (number: number) => ({
      number,
      chunk_id: number * 10,
      path: `/notes/${number}.md`,
      heading_path: `Chapter ${number}`,
      span_start: 0,
      span_end: 20,
      page: null,
      score: 0.5,
      text: `<b>passage ${number}</b>`,
    });
    const opened: unknown[] = [];
    const { target, destroy } = render(VanillaRagTrace, {
      trace: {
        method: "vanilla-rag",
        query: "what is rc",
        mode: "hybrid",
        k: 2,
        passages: [passage(1), passage(2)],
        unknown_citations: [7],
      },
      run: { citations: [passage(2)] } as unknown as TraceProps["run"],
      onCite: (target: unknown) => opened.push(target),
    });
    const items = target.querySelectorAll(".passages li");
    expect(items.length).toBe(2);
    expect(items[0].classList.contains("cited")).toBe(false);
    expect(items[1].classList.contains("cited")).toBe(true);
    expect(target.querySelector("b")).toBeNull();
    expect(target.textContent).toContain("[7]");
    items[1].querySelector("button")?.click();
    expect(opened).toHaveLength(1);
    expect((opened[0] as { path: string }).path).toBe("/notes/2.md");
    destroy();
  });

  it("the generic, llm-only and vanilla-rag views keep document and model text inert", () => {
    const hostilePassage = passage(1, { text: HOSTILE, heading_path: HOSTILE, path: `/notes/${HOSTILE}` });
    const vanilla = vanillaRagTrace({ query: HOSTILE, passages: [hostilePassage] });
    const views: [TraceProps["trace"], TraceRenderer][] = [
      [{ method: "future", note: HOSTILE }, GenericTrace],
      [{ method: "llm-only" }, LlmOnlyTrace],
      [vanilla, VanillaRagTrace],
    ];
    for (const [trace, view] of views) {
      const { target, destroy } = render(view, { trace, run: hostileRun(trace, trace.method) });
      for (const d of target.querySelectorAll("details")) d.open = true;
      expectInert(target);
      if (view !== LlmOnlyTrace) expectVisible(target);
      destroy();
    }
  });
});
