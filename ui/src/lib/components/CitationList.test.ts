// An answer's sources: the ones the model marked look as they always have;
// the ones Folio attributed say so, with the sentences they back quoted.
import { flushSync, mount, unmount } from "svelte";
import { describe, expect, it } from "vitest";
import type { Citation } from "$lib/bindings/Citation";
import type { SourceTarget } from "$lib/source";
import { expectInert, expectVisible, HOSTILE_PAYLOADS } from "$lib/testing/hostile";
import CitationList from "./CitationList.svelte";

function citation(number: number, extra: Partial<Citation> = {}): Citation {
  return {
    number,
    path: `/notes/tides-${number}.md`,
    heading_path: `Tides > Part ${number}`,
    span_start: 0,
    span_end: 40,
    page: null,
    chunk_id: number,
    ...extra,
  };
}

function show(citations: Citation[]) {
  const target = document.body.appendChild(document.createElement("div"));
  const opened: SourceTarget[] = [];
  const instance = mount(CitationList, { target, props: { citations, onOpen: (source) => opened.push(source) } });
  flushSync();
  const entries = [...target.querySelectorAll("ol > li")];
  return {
    target,
    opened,
    entries,
    destroy: () => {
      unmount(instance);
      target.remove();
    },
  };
}

const within = (entry: Element, testid: string) => entry.querySelector(`[data-testid="${testid}"]`);

describe("an answer's sources", () => {
  it("marks an attributed source and quotes the sentences it backs, and leaves a cited one as it was", () => {
    const { entries, opened, destroy } = show([
      citation(1, { by: "model" }),
      citation(2, { by: "attribution", supports: ["Tides come twice a day.", "The moon pulls the sea."] }),
    ]);
    expect(within(entries[0], "citation-attributed")).toBeNull();
    expect(within(entries[0], "citation-supports")).toBeNull();

    const badge = within(entries[1], "citation-attributed")!;
    expect(badge.textContent?.trim()).toBe("attributed");
    expect(badge.classList.contains("quiet")).toBe(true);
    expect(badge.getAttribute("title")).toBe(
      "The model did not mark this source; Folio matched the sentence(s) below to this passage.",
    );
    const quotes = [...within(entries[1], "citation-supports")!.querySelectorAll("q")];
    expect(quotes.map((q) => q.textContent)).toEqual(["Tides come twice a day.", "The moon pulls the sea."]);
    expect(quotes[0].hasAttribute("title")).toBe(false);

    // Attributed, it still opens like any source.
    entries[1].querySelector<HTMLButtonElement>('[data-testid="citation"]')!.click();
    expect(opened.map((c) => c.number)).toEqual([2]);
    destroy();
  });

  it("counts a source without `by`, as stored before attribution, as cited by the model", () => {
    const { entries, destroy } = show([citation(1)]);
    expect(entries).toHaveLength(1);
    expect(within(entries[0], "citation-attributed")).toBeNull();
    expect(within(entries[0], "citation-supports")).toBeNull();
    destroy();
  });

  it("names the cited rows of a table, and opens the source at them", () => {
    const { entries, opened, destroy } = show([citation(1, { rows: { first: 8, last: 9 } }), citation(2)]);
    expect(entries[0].querySelector(".path")!.textContent?.trim()).toBe("tides-1.md, rows 8–9");
    expect(entries[1].querySelector(".path")!.textContent?.trim()).toBe("tides-2.md");
    entries[0].querySelector<HTMLButtonElement>('[data-testid="citation"]')!.click();
    expect(opened[0].rows).toEqual({ first: 8, last: 9 });
    destroy();
  });

  it("cuts a long supported sentence, keeping it whole in the quote's title", () => {
    const long = `The tide ${"rises and falls ".repeat(20)}with the moon.`;
    const { entries, destroy } = show([citation(1, { by: "attribution", supports: [long] })]);
    const quote = within(entries[0], "citation-supports")!.querySelector("q")!;
    expect(quote.textContent!.length).toBeLessThanOrEqual(160);
    expect(quote.textContent).toMatch(/^The tide rises and falls .*…$/);
    expect(long.startsWith(quote.textContent!.slice(0, -1))).toBe(true);
    expect(quote.getAttribute("title")).toBe(long);
    destroy();
  });

  it("shows the model's sentences as text, never as markup", () => {
    const sentences = HOSTILE_PAYLOADS.filter((p) => p.text.length <= 160);
    const { target, destroy } = show([citation(1, { by: "attribution", supports: sentences.map((p) => p.text) })]);
    expectInert(target);
    expectVisible(within(target, "citation-supports")!, sentences);
    destroy();
  });
});
