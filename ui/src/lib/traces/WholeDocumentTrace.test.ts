import { describe, expect, it, vi } from "vitest";
import { expectInert, expectVisible, HOSTILE } from "$lib/testing/hostile";
import type { SourceTarget } from "$lib/source";
import { rendererFor } from "./registry";
import { registerBuiltinTraceRenderers } from "./builtin";
import { render, text, wholeDocumentTrace } from "./testing";
import WholeDocumentTrace from "./WholeDocumentTrace.svelte";

const sections = (root: Element) => [...root.querySelectorAll<HTMLElement>('[data-testid="wd-section"]')];

describe("WholeDocumentTrace", () => {
  it("is the renderer registered for whole-document", () => {
    registerBuiltinTraceRenderers();
    expect(rendererFor("whole-document")).toBe(WholeDocumentTrace);
  });

  it("says what was read, then lists every section by depth with its badge, number and summary", () => {
    const { target, destroy } = render(WholeDocumentTrace, { trace: wholeDocumentTrace() });
    const root = target.querySelector('[data-testid="whole-document-trace"]')!;
    expect(root).not.toBeNull();
    expect(text(root.querySelector('[data-testid="wd-overview"]'))).toBe(
      "Read all of Smart pointers: 4 sections, 1 summary kept from earlier answers, 4 model calls expected (at most 200); the answer read headings down to level 1.",
    );
    const drawn = sections(root);
    expect(drawn).toHaveLength(4);
    expect(drawn.map((s) => s.dataset.depth)).toEqual(["0", "1", "2", "1"]);
    expect(drawn.map((s) => text(s.querySelector(".badge")))).toEqual(["kept", "written now", "written now", "not written"]);
    expect(text(drawn[0].querySelector(".number"))).toBe("[1]");
    expect(text(drawn[1].querySelector(".number"))).toBe("[2]");
    expect(drawn[2].querySelector(".number")).toBeNull();
    expect(text(drawn[1].querySelector(".heading"))).toBe("Smart pointers > Rc");
    expect(text(drawn[1].querySelector(".summary"))).toBe("Rc frees a value when its last owner is dropped.");
    expect(drawn[3].querySelector(".summary")).toBeNull();
    // The passages the answer read, in the shared list.
    expect(root.querySelectorAll(".passages li")).toHaveLength(2);
    expect(root.querySelector(".passages .score")).toBeNull();
    destroy();
  });

  it("opens a numbered section's span in the document", () => {
    const onCite = vi.fn<(target: SourceTarget) => void>();
    const { target, destroy } = render(WholeDocumentTrace, { trace: wholeDocumentTrace(), onCite });
    sections(target)[1].querySelector<HTMLButtonElement>("button.heading")!.click();
    expect(onCite).toHaveBeenCalledWith({
      path: "/notes/rust/smart-pointers.md",
      span_start: 100,
      span_end: 190,
      page: null,
    });
    destroy();
  });

  it("keeps a hostile summary as text", () => {
    const trace = wholeDocumentTrace();
    trace.sections[1].summary = HOSTILE;
    trace.title = HOSTILE;
    const { target, destroy } = render(WholeDocumentTrace, { trace });
    expectInert(target);
    expectVisible(sections(target)[1]);
    destroy();
  });
});
