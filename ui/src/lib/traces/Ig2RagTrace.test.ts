import { describe, expect, it } from "vitest";
import type { SourceTarget } from "$lib/source";
import Ig2RagTrace from "./Ig2RagTrace.svelte";
import type { TraceProps } from "./registry";
import { expectInert, expectVisible, HOSTILE } from "$lib/testing/hostile";
import { fact, fire, ig2ragTrace, linkedIg2ragTrace, passage, render, text } from "./testing";

const graph = (root: Element) => root.querySelector<HTMLElement>('[data-testid="ig2rag-graph"]');
const nodes = (root: Element) => [...root.querySelectorAll<SVGGElement>('[data-testid="ig2rag-node"]')];
const node = (root: Element, chunk: number) =>
  root.querySelector<SVGGElement>(`[data-testid="ig2rag-node"][data-chunk="${chunk}"]`)!;
const edges = (root: Element) => [...root.querySelectorAll<SVGPathElement>('[data-testid="ig2rag-edge"]')];
const edge = (root: Element, source: number, target: number) =>
  root.querySelector<SVGPathElement>(`[data-testid="ig2rag-edge"][data-source="${source}"][data-target="${target}"]`)!;
const radius = (g: Element) => Number(g.querySelector("circle.disc")!.getAttribute("r"));

describe("Ig2RagTrace", () => {
  it("states the walk's settings, the seeds, the walk and the graph's coverage", () => {
    const { target, destroy } = render(Ig2RagTrace, { trace: ig2ragTrace() });
    expect(fact(target, "Variant")).toMatch(/^ig2rag \(Personalized PageRank/);
    expect(fact(target, "Graph")).toMatch(/^coarse rubric: four classes/);
    expect(fact(target, "Seeds")).toBe("3 of h = 3, the chunks most similar to the question");
    expect(fact(target, "Restart probability")).toBe("α = 0.3");
    expect(fact(target, "Passages asked for")).toBe("k = 3");
    expect(fact(target, "Walk")).toBe("23 iterations, converged, 3.4 ms over 412 nodes and 2,040 edges");
    expect(fact(target, "Coverage")).toBe("graph covers 408 of 412 chunks, 2 failed, 2,040 edges");
    expect(target.querySelector('[data-testid="ig2rag-not-built"]')).toBeNull();
    destroy();
  });

  it("draws every node and marks the seeds with a second ring and a badge", () => {
    const { target, destroy } = render(Ig2RagTrace, { trace: ig2ragTrace() });
    const svg = graph(target)!.querySelector("svg")!;
    expect(svg.getAttribute("viewBox")).toMatch(/^0 0 \d+ \d+$/);
    expect(nodes(target).map((n) => Number(n.dataset.chunk))).toEqual([101, 102, 103, 104, 105, 106]);
    const seeds = nodes(target).filter((n) => n.dataset.seed === "true");
    expect(seeds.map((n) => Number(n.dataset.chunk))).toEqual([101, 103, 104]);
    for (const seed of seeds) {
      expect(seed.querySelector("circle.seed-ring")).not.toBeNull();
      expect(text(seed.querySelector("text.seed-badge"))).toBe("seed");
      expect(seed.getAttribute("aria-label")).toContain("seed");
    }
    for (const other of nodes(target).filter((n) => n.dataset.seed === "false")) {
      expect(other.querySelector("circle.seed-ring")).toBeNull();
      expect(other.querySelector("text.seed-badge")).toBeNull();
    }
    destroy();
  });

  it("sizes nodes by score and numbers the passages the model was given", () => {
    const { target, destroy } = render(Ig2RagTrace, { trace: ig2ragTrace() });
    const radii = [101, 102, 103, 104, 105, 106].map((id) => radius(node(target, id)));
    for (let i = 1; i < radii.length; i++) expect(radii[i]).toBeLessThan(radii[i - 1]);
    expect([101, 102, 103].map((id) => text(node(target, id).querySelector("text.number")))).toEqual(["1", "2", "3"]);
    expect(node(target, 101).classList.contains("chosen")).toBe(true);
    expect(node(target, 104).querySelector("text.number")).toBeNull();
    expect(node(target, 104).classList.contains("chosen")).toBe(false);
    expect(node(target, 102).getAttribute("aria-label")).toBe(
      "smart-pointers.md › Smart pointers > Rc > Threads (passage [2]), PageRank mass 0.220",
    );
    destroy();
  });

  it("draws directed edges by gain class and weight, with a legend that names each class", () => {
    const { target, destroy } = render(Ig2RagTrace, { trace: ig2ragTrace() });
    expect(edges(target)).toHaveLength(6);
    const novel = edge(target, 101, 102);
    expect(novel.dataset.class).toBe("novel");
    expect(novel.classList.contains("novel")).toBe(true);
    expect(Number(novel.getAttribute("stroke-width"))).toBeGreaterThan(Number(edge(target, 104, 102).getAttribute("stroke-width")));
    expect(edge(target, 104, 102).dataset.class).toBe("redundant");
    expect(edge(target, 102, 101).dataset.class).toBe("minor");
    expect(edge(target, 101, 103).dataset.class).toBe("significant");
    // Each edge points with an arrowhead of its own class, defined in this drawing.
    const marker = novel.getAttribute("marker-end")!.match(/^url\(#(.+)\)$/)![1];
    const arrow = graph(target)!.querySelector(`marker[id="${marker}"] path`);
    expect(arrow?.classList.contains("novel")).toBe(true);
    expect(text(novel.querySelector("title"))).toBe(
      "smart-pointers.md › Smart pointers > Rc → smart-pointers.md › Smart pointers > Rc > Threads: novel, weight 0.95",
    );
    const legend = [...target.querySelectorAll<HTMLElement>('[data-testid="ig2rag-legend-class"]')];
    expect(legend.map((li) => li.dataset.class)).toEqual(["redundant", "minor", "significant", "novel"]);
    expect(legend.map((li) => text(li.querySelector("span")))).toEqual(["redundant", "minor", "significant", "novel"]);
    expect(text(target.querySelector(".legend"))).toContain("seed");
    destroy();
  });

  it("draws sim-ppr's similarity edges in a neutral colour and says so in the legend", () => {
    const base = ig2ragTrace();
    const trace = ig2ragTrace({
      variant: "sim-ppr",
      edges: base.edges.map((e) => ({ ...e, class: null, weight: 0.6 })),
    });
    const { target, destroy } = render(Ig2RagTrace, { trace });
    expect(new Set(edges(target).map((e) => e.dataset.class))).toEqual(new Set(["similarity"]));
    const legend = [...target.querySelectorAll<HTMLElement>('[data-testid="ig2rag-legend-class"]')];
    expect(legend.map((li) => li.dataset.class)).toEqual(["similarity"]);
    expect(fact(target, "Variant")).toMatch(/^sim-ppr/);
    destroy();

    // With no edge among the nodes shown, the legend still says what sim-ppr draws.
    const bare = render(Ig2RagTrace, { trace: ig2ragTrace({ variant: "sim-ppr", edges: [] }) });
    const kinds = [...bare.target.querySelectorAll<HTMLElement>('[data-testid="ig2rag-legend-class"]')];
    expect(kinds.map((li) => li.dataset.class)).toEqual(["similarity"]);
    bare.destroy();
  });

  it("draws the notes' links the walk followed as edges of their own, and says the walk followed them", () => {
    const legendOf = (root: Element) =>
      [...root.querySelectorAll<HTMLElement>('[data-testid="ig2rag-legend-class"]')].map((li) => li.dataset.class);
    const { target, destroy } = render(Ig2RagTrace, { trace: linkedIg2ragTrace() });
    expect(fact(target, "Graph")).toBe(
      "coarse rubric: four classes, redundant to novel (the paper's default); the notes' links were edges too",
    );
    expect(edges(target)).toHaveLength(7);

    // A link with no gain edge beside it: a kind, a dash, an arrow and a title of its own.
    const link = edge(target, 105, 106);
    expect(link.dataset.class).toBe("link");
    expect(link.dataset.link).toBe("true");
    expect(link.classList.contains("link")).toBe(true);
    expect(link.classList.contains("similarity")).toBe(false);
    const marker = link.getAttribute("marker-end")!.match(/^url\(#(.+)\)$/)![1];
    expect(graph(target)!.querySelector(`marker[id="${marker}"] path`)?.classList.contains("link")).toBe(true);
    expect(text(link.querySelector("title"))).toBe(
      "concurrency.md › Shared state > Mutex → smart-pointers.md › Smart pointers > RefCell: a link in the notes, weight 0.70",
    );

    // A gain edge that is also a link keeps its class and says it is a link too.
    const both = edge(target, 101, 103);
    expect(both.dataset.class).toBe("significant");
    expect(both.dataset.link).toBe("true");
    expect(text(both.querySelector("title"))).toBe(
      "smart-pointers.md › Smart pointers > Rc → rust-book.pdf: significant, and a link in the notes, weight 1.40",
    );
    expect(edge(target, 101, 102).dataset.link).toBeUndefined();

    expect(legendOf(target)).toEqual(["redundant", "minor", "significant", "novel", "link"]);
    const entry = target.querySelector('[data-testid="ig2rag-legend-class"][data-class="link"]')!;
    expect(text(entry)).toContain("a link written in the notes");
    expect(entry.querySelector("line")?.classList.contains("link")).toBe(true);
    destroy();

    // Without links the walk says nothing of them and the legend has no link.
    const plain = render(Ig2RagTrace, { trace: ig2ragTrace() });
    expect(fact(plain.target, "Graph")).not.toContain("link");
    expect(legendOf(plain.target)).toEqual(["redundant", "minor", "significant", "novel"]);
    expect(plain.target.querySelector('[data-testid="ig2rag-edge"][data-link]')).toBeNull();
    plain.destroy();

    // Links followed but none among the nodes shown: the legend still says what a link is.
    const none = render(Ig2RagTrace, { trace: ig2ragTrace({ links: "follow" }) });
    expect(legendOf(none.target)).toEqual(["redundant", "minor", "significant", "novel", "link"]);
    none.destroy();
  });

  it("says the walk followed only the notes' links when the graph is not built", () => {
    const trace = linkedIg2ragTrace({
      coverage: { chunks: 412, scored: 0, failed: 0, edges: 0 },
      edges: [{ source: 101, target: 102, class: null, weight: 0.7, link: true }],
    });
    const { target, destroy } = render(Ig2RagTrace, { trace });
    expect(text(target.querySelector('[data-testid="ig2rag-not-built"]'))).toMatch(
      /^The coarse graph is not built yet, so the walk followed only the notes' links from the seeds/,
    );
    expect(edge(target, 101, 102).dataset.class).toBe("link");
    destroy();
  });

  it("lights a node and its edges on hover or focus, and keeps it lit on Enter", () => {
    const { target, destroy } = render(Ig2RagTrace, { trace: ig2ragTrace() });
    const seed = node(target, 104);
    expect(seed.getAttribute("tabindex")).toBe("0");
    expect(seed.getAttribute("role")).toBe("button");
    expect(text(seed.querySelector("title"))).toContain("smart-pointers.md › Smart pointers > Box");

    fire(seed, "mouseenter");
    expect(seed.classList.contains("lit")).toBe(true);
    expect(edge(target, 104, 102).classList.contains("lit")).toBe(true);
    expect(edge(target, 104, 106).classList.contains("lit")).toBe(true);
    expect(edge(target, 101, 102).classList.contains("dim")).toBe(true);
    expect(node(target, 103).classList.contains("dim")).toBe(true);
    expect(node(target, 102).classList.contains("dim")).toBe(false);
    const detail = () => text(target.querySelector('[data-testid="ig2rag-detail"]'));
    expect(detail()).toContain("smart-pointers.md › Smart pointers > Box");
    expect(detail()).toContain("seed: similarity 0.69, 31% of the restarts");
    fire(seed, "mouseleave");
    expect(target.querySelector('[data-testid="ig2rag-detail"]')).toBeNull();
    expect(target.querySelectorAll(".dim")).toHaveLength(0);

    const chosen = node(target, 102);
    fire(chosen, "focus");
    expect(detail()).toContain("Threads");
    fire(chosen, "keydown", { key: "Enter" });
    expect(chosen.getAttribute("aria-pressed")).toBe("true");
    fire(chosen, "blur");
    expect(detail()).toContain("Threads");
    fire(chosen, "keydown", { key: "Escape" });
    expect(chosen.getAttribute("aria-pressed")).toBe("false");
    expect(target.querySelector('[data-testid="ig2rag-detail"]')).toBeNull();
    destroy();
  });

  it("lists the passages beside the graph, marks the cited ones and opens them", () => {
    const opened: SourceTarget[] = [];
    const trace = ig2ragTrace({ unknown_citations: [9] });
    const { target, destroy } = render(Ig2RagTrace, {
      trace,
      run: { citations: [passage(3)] } as unknown as TraceProps["run"],
      onCite: (t) => opened.push(t),
    });
    const reader = target.querySelector('[data-testid="ig2rag-passages"]')!;
    expect(reader.parentElement).toBe(graph(target)!.closest("section")!.parentElement);
    const items = [...reader.querySelectorAll(".passages li")];
    expect(items.map((li) => li.classList.contains("cited"))).toEqual([false, false, true]);
    items[0].querySelector("button")!.click();
    expect(opened).toEqual([trace.passages[0]]);

    // A node given to the model opens its passage too.
    fire(node(target, 102), "click");
    const open = [...target.querySelectorAll<HTMLButtonElement>('[data-testid="ig2rag-detail"] button')];
    expect(open.map(text)).toEqual(["Open passage [2]"]);
    open[0].click();
    expect(opened[1]).toEqual(trace.passages[1]);
    expect(text(target.querySelector(".warning"))).toContain("[9]");
    destroy();
  });

  it("says how greedy chose, without a walk", () => {
    const trace = ig2ragTrace({
      variant: "greedy",
      walk: null,
      nodes: ig2ragTrace().nodes.map((n) => ({ ...n, score: n.seed ? 0.8 : 0.7 })),
    });
    const { target, destroy } = render(Ig2RagTrace, { trace });
    expect(fact(target, "Variant")).toMatch(/^greedy \(from the seeds/);
    expect(fact(target, "Walk")).toBe("none: greedy follows gain edges instead of walking");
    expect(node(target, 105).getAttribute("aria-label")).toMatch(/edge weight 0\.700$/);
    expect(text(target.querySelector(".legend"))).toContain("edge weight, relative to the largest here");
    expect(nodes(target)).toHaveLength(6);
    destroy();
  });

  it("says plainly when the graph is not built and the walk stayed on the seeds", () => {
    const note = "The coarse graph has not been built (`folio graph build --rubric coarse`), so the walk stays on the seeds.";
    const seedsOnly = ig2ragTrace().nodes.filter((n) => n.seed);
    const trace = ig2ragTrace({
      coverage: { chunks: 412, scored: 0, failed: 0, edges: 0 },
      nodes: seedsOnly,
      edges: [],
      notes: [note],
    });
    const { target, destroy } = render(Ig2RagTrace, { trace });
    expect(text(target.querySelector('[data-testid="ig2rag-not-built"]'))).toMatch(
      /^The coarse graph is not built yet, so the walk had no edges to follow and fell back to the seeds/,
    );
    expect(fact(target, "Coverage")).toBe("not built yet: 0 of 412 chunks scored");
    expect(text(target.querySelector('[aria-label="Notes on the walk"]'))).toBe(note);
    expect(nodes(target)).toHaveLength(3);
    expect(edges(target)).toHaveLength(0);
    // No edges, but the reader still learns what the marks mean.
    expect(target.querySelectorAll('[data-testid="ig2rag-legend-class"]')).toHaveLength(4);
    destroy();
  });

  it("shows the walk and the passages as pending while the run starts", () => {
    const trace = ig2ragTrace({ nodes: [], edges: [], passages: [], walk: null });
    const live = render(Ig2RagTrace, { trace, running: true });
    expect(text(live.target.querySelector(".walk .pending.working"))).toBe("Waiting for the walk…");
    expect(text(live.target.querySelector('[data-testid="ig2rag-passages"] .pending.working'))).toBe(
      "Waiting for the walk to rank the passages…",
    );
    expect(fact(live.target, "Walk")).toBe("not yet");
    expect(graph(live.target)).toBeNull();
    live.destroy();

    const ended = render(Ig2RagTrace, { trace });
    expect(ended.target.querySelector(".working")).toBeNull();
    expect(text(ended.target.querySelector('[data-testid="ig2rag-passages"]'))).toContain("No passage reached the model.");
    expect(text(ended.target)).toContain("The walk reached no chunks.");
    ended.destroy();

    // The checkpoint before the answer carries the graph and the passages.
    const checkpoint = render(Ig2RagTrace, { trace: ig2ragTrace(), running: true });
    expect(nodes(checkpoint.target)).toHaveLength(6);
    expect(checkpoint.target.querySelectorAll('[data-testid="ig2rag-passages"] .passages li')).toHaveLength(3);
    expect(checkpoint.target.querySelector(".working")).toBeNull();
    checkpoint.destroy();
  });

  it("keeps document and model text inert wherever it appears", () => {
    const trace = ig2ragTrace({
      query: HOSTILE,
      passages: [passage(1, { text: HOSTILE, heading_path: HOSTILE, path: HOSTILE })],
      notes: [HOSTILE],
    });
    trace.nodes = trace.nodes.map((n) => ({ ...n, label: HOSTILE }));
    const { target, destroy } = render(Ig2RagTrace, { trace, running: true });
    fire(node(target, 101), "mouseenter");
    expectInert(target);
    expect(node(target, 101).querySelector("title")?.textContent).toContain(HOSTILE);
    expect(node(target, 101).getAttribute("aria-label")).toContain(HOSTILE);
    expectVisible(target.querySelector('[data-testid="ig2rag-detail"] .label')!);
    expect(edge(target, 101, 102).querySelector("title")?.textContent).toContain(HOSTILE);
    expectVisible(target.querySelector('[aria-label="Notes on the walk"]')!);
    expectVisible(target.querySelector('[data-testid="ig2rag-passages"] .passage-text')!);
    destroy();
  });
});
