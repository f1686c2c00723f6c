import { describe, expect, it } from "vitest";
import type { SourceTarget } from "$lib/source";
import type { TraceProps } from "./registry";
import { toasts } from "$lib/stores/toasts.svelte";
import PagerTrace from "./PagerTrace.svelte";
import { expectInert, expectVisible, HOSTILE } from "$lib/testing/hostile";
import { pagerTrace, passage, render, text, type PagerFixture } from "./testing";

const slots = (root: Element) => [...root.querySelectorAll<HTMLElement>('[data-testid="pager-slot"]')];

describe("PagerTrace", () => {
  it("draws the page's slots in order, filled and empty, while the run goes on", () => {
    const { target, destroy } = render(PagerTrace, { trace: pagerTrace(), running: true });
    const page = target.querySelector('[data-testid="pager-page"]');
    expect(text(page?.querySelector("h4"))).toBe("How does Rc differ from Arc?");
    const all = slots(target);
    expect(all.map((s) => text(s.querySelector("h5")))).toEqual([
      "What Rc does",
      "What Arc adds",
      "When to choose which",
    ]);
    expect(all.map((s) => s.dataset.filled)).toEqual(["true", "true", "false"]);
    expect(text(all[1].querySelector(".markdown"))).toContain("Arc does the same with atomic counts");
    expect(all[1].querySelector(".markdown strong")).not.toBeNull();
    expect(text(all[2])).toContain("Waiting for evidence…");
    // The top-to-bottom variants work on the first empty slot only.
    expect(all[2].querySelector(".pending.working")).not.toBeNull();
    expect(all[2].querySelector('[data-testid="pager-slot-details"]')).toBeNull();
    expect(text(target)).toContain("2 of 3 filled (at most 5)");
    destroy();
  });

  it("says an empty slot was never filled once the run has ended", () => {
    const { target, destroy } = render(PagerTrace, { trace: pagerTrace() });
    const empty = slots(target)[2];
    expect(text(empty)).toContain("the run ended before this section");
    expect(empty.querySelector(".working")).toBeNull();
    destroy();
  });

  it("folds each filled slot's sub-query, sources, overlap and notes into its details", () => {
    const opened: SourceTarget[] = [];
    const { target, destroy } = render(PagerTrace, {
      trace: pagerTrace(),
      run: { citations: [passage(3)] } as unknown as TraceProps["run"],
      onCite: (t) => opened.push(t),
    });
    const details = [...target.querySelectorAll<HTMLDetailsElement>('[data-testid="pager-slot-details"]')];
    expect(details).toHaveLength(2);
    expect(details.every((d) => !d.open)).toBe(true);
    expect(text(details[0].querySelector("summary"))).toBe("Sub-query and sources");

    expect(text(details[0])).toContain("Rc reference counting single thread");
    expect(text(details[0])).not.toContain("Overlap");
    expect([...details[0].querySelectorAll(".passages .number")].map(text)).toEqual(["[1]", "[2]"]);

    expect(text(details[1])).toContain("Arc atomic reference count threads");
    expect(text(details[1])).toContain("Overlap with earlier passages 33% (Jaccard)");
    expect(text(details[1])).toContain("the fill reply repeated its heading");
    const items = details[1].querySelectorAll(".passages li");
    expect([...items].map((li) => text(li.querySelector(".number")))).toEqual(["[3]", "[2]"]);
    expect(items[0].classList.contains("cited")).toBe(true);
    expect(text(items[0])).toContain("/books/rust-book.pdf · page 318");

    items[0].querySelector("button")?.click();
    expect(opened.map((t) => t.number)).toEqual([3]);
    destroy();
  });

  it("opens a passage from a citation in a section body, and says when one names none", () => {
    const opened: SourceTarget[] = [];
    const trace = pagerTrace();
    trace.page.sections[0].body = "Rc frees with its last owner [1]. Nothing says so [9].";
    const { target, destroy } = render(PagerTrace, { trace, onCite: (t) => opened.push(t) });
    const cites = slots(target)[0].querySelectorAll<HTMLButtonElement>("button.cite");
    cites[0].click();
    expect(opened).toEqual([trace.passages[0]]);
    cites[1].click();
    expect(opened).toHaveLength(1);
    expect(toasts.at(-1)?.message).toContain("[9] names no passage");
    destroy();
  });

  it("shows a failed slot's notes instead of a body, and the outline's notes", () => {
    const trace = pagerTrace();
    trace.page.sections[2].body = "_No usable evidence was written for this section._";
    trace.steps.push({
      ...trace.steps[1],
      slot: 2,
      heading: "When to choose which",
      sub_query: "choose Rc or Arc",
      text: "_No usable evidence was written for this section._",
      notes: ["rejected the fill reply: it was empty; asked again", "rejected the fill reply: it was empty"],
      failed: true,
    });
    trace.unknown_citations = [7];
    const { target, destroy } = render(PagerTrace, { trace });
    const failed = slots(target)[2];
    expect(failed.dataset.filled).toBe("true");
    expect(failed.querySelector(".markdown")).toBeNull();
    expect(text(failed)).toContain("No usable text came back");
    expect(text(failed)).toContain("rejected the fill reply: it was empty; asked again");

    const outline = target.querySelector<HTMLDetailsElement>("details.outline");
    expect(text(outline?.querySelector("summary"))).toBe("How the outline was planned (1 note)");
    expect(text(outline)).toContain("say what each does, then how to choose");
    expect(text(outline)).toContain("dropped a section that repeated the title");
    expect(text(target.querySelector(".warning"))).toContain("[7]");
    destroy();
  });

  it("shows each summary's verdict for the no-outline variant", () => {
    const trace: PagerFixture = pagerTrace({
      variant: "no-outline",
      reasoning: "",
      outline: { title: "How does Rc differ from Arc?", sections: [] },
      outline_notes: [],
    });
    trace.page.sections = trace.steps.map((s) => ({ heading: s.sub_query, body: s.text }));
    trace.steps[0].sufficient = false;
    trace.steps[1].sufficient = true;
    const { target, destroy } = render(PagerTrace, { trace });
    expect(target.querySelector("details.outline")).toBeNull();
    const details = target.querySelectorAll('[data-testid="pager-slot-details"]');
    expect(text(details[0])).toContain("Judged sufficient no");
    expect(text(details[1])).toContain("Judged sufficient yes");
    destroy();
  });

  it("keeps document and model text inert wherever it appears", () => {
    const trace = pagerTrace({
      reasoning: HOSTILE,
      outline_notes: [HOSTILE],
      passages: [passage(1, { text: HOSTILE, heading_path: HOSTILE }), passage(2), passage(3)],
    });
    trace.page.title = HOSTILE;
    trace.page.sections[0] = { heading: HOSTILE, body: `${HOSTILE} [1]` };
    trace.steps[0].sub_query = HOSTILE;
    trace.steps[0].notes = [HOSTILE];
    trace.page.sections[2].heading = HOSTILE;
    const { target, destroy } = render(PagerTrace, { trace, running: true });
    for (const d of target.querySelectorAll("details")) d.open = true;
    expectInert(target);
    expectVisible(target.querySelector("h4")!);
    expect(text(slots(target)[0].querySelector(".markdown"))).toContain("<script>");
    expectVisible(slots(target)[0].querySelector("details")!);
    destroy();
  });
});
