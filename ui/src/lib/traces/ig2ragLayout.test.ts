import { describe, expect, it } from "vitest";
import type { GraphEdge } from "$lib/bindings/GraphEdge";
import type { GraphNode } from "$lib/bindings/GraphNode";
import {
  ARROW,
  edgeKind,
  edgeWidth,
  LABEL_ROOM,
  layoutGraph,
  MAX_RADIUS,
  MIN_RADIUS,
  nodeRadius,
  outline,
  type GraphLayout,
  type PlacedNode,
} from "./ig2ragLayout";
import { ig2ragTrace } from "./testing";

const node = (chunk_id: number, score: number, seed = false): GraphNode => ({
  chunk_id,
  label: `chunk ${chunk_id}`,
  score,
  seed,
  passage: null,
});

/** As many nodes as a trace holds at most: k chosen, h seeds, five more. */
function crowd(seeds: number, others: number): GraphNode[] {
  return [
    ...Array.from({ length: seeds }, (_, i) => node(i + 1, 0.3 - i * 0.01, true)),
    ...Array.from({ length: others }, (_, i) => node(100 + i, 0.2 - i * 0.01)),
  ];
}

const distance = (a: { x: number; y: number }, b: { x: number; y: number }) => Math.hypot(a.x - b.x, a.y - b.y);
const fromCentre = (layout: GraphLayout, n: PlacedNode) => distance(n, layout.centre);
const endOf = (d: string) => d.trim().split(/\s+/).slice(-2).map(Number) as [number, number];
const startOf = (d: string) => d.trim().split(/\s+/).slice(1, 3).map(Number) as [number, number];

describe("nodeRadius", () => {
  it("grows with the score's share of the largest, within the bounds", () => {
    expect(nodeRadius(1, 1)).toBe(MAX_RADIUS);
    expect(nodeRadius(0, 1)).toBe(MIN_RADIUS);
    const radii = [0.05, 0.1, 0.4, 0.9].map((s) => nodeRadius(s, 0.9));
    expect([...radii].sort((a, b) => a - b)).toEqual(radii);
    expect(new Set(radii).size).toBe(4);
  });

  it("clamps scores outside the range and copes with no score at all", () => {
    expect(nodeRadius(2, 1)).toBe(MAX_RADIUS);
    expect(nodeRadius(-1, 1)).toBe(MIN_RADIUS);
    expect(nodeRadius(0.5, 0)).toBe(MIN_RADIUS);
    expect(nodeRadius(Number.NaN, 1)).toBe(MIN_RADIUS);
    expect(nodeRadius(0.5, Number.NaN)).toBe(MIN_RADIUS);
  });
});

describe("edgeWidth", () => {
  it("grows with the weight, from 1 to 3.5", () => {
    expect(edgeWidth(0)).toBe(1);
    expect(edgeWidth(0.4)).toBe(2);
    expect(edgeWidth(1)).toBe(3.5);
    expect(edgeWidth(7)).toBe(3.5);
    expect(edgeWidth(-1)).toBe(1);
  });
});

describe("layoutGraph", () => {
  it("puts the seeds on an inner ring and the other nodes on an outer ring", () => {
    const trace = ig2ragTrace();
    const layout = layoutGraph(trace.nodes, trace.edges);
    const seeds = layout.nodes.filter((n) => n.seed).map((n) => fromCentre(layout, n));
    const others = layout.nodes.filter((n) => !n.seed).map((n) => fromCentre(layout, n));
    expect(seeds).toHaveLength(3);
    expect(others).toHaveLength(3);
    for (const d of seeds) expect(d).toBeCloseTo(seeds[0], 0);
    for (const d of others) expect(d).toBeCloseTo(others[0], 0);
    expect(Math.min(...others)).toBeGreaterThan(Math.max(...seeds));
  });

  it("ranks by score and places each ring clockwise from the top in rank order", () => {
    const layout = layoutGraph(crowd(3, 4).reverse(), []);
    expect(layout.nodes.map((n) => n.rank)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(layout.nodes.map((n) => n.chunk_id)).toEqual([1, 2, 3, 100, 101, 102, 103]);
    const [best, second] = layout.nodes.filter((n) => !n.seed);
    // The best-ranked outer node sits straight above the centre, the next one clockwise (right).
    expect(best.x).toBeCloseTo(layout.centre.x, 5);
    expect(best.y).toBeLessThan(layout.centre.y);
    expect(second.x).toBeGreaterThan(layout.centre.x);
    const radii = layout.nodes.map((n) => n.r);
    expect([...radii].sort((a, b) => b - a)).toEqual(radii);
  });

  it("keeps equal scores in the trace's order", () => {
    const layout = layoutGraph([node(7, 0.1), node(3, 0.1), node(5, 0.1)], []);
    expect(layout.nodes.map((n) => n.chunk_id)).toEqual([7, 3, 5]);
  });

  it("puts a single seed at the centre", () => {
    const layout = layoutGraph(crowd(1, 5), []);
    const [seed] = layout.nodes.filter((n) => n.seed);
    expect(seed).toMatchObject(layout.centre);
  });

  it.each([
    [1, 0],
    [0, 1],
    [2, 1],
    [5, 3],
    [5, 15],
    [20, 0],
    [0, 20],
    [10, 10],
  ])("never overlaps nodes and keeps them inside the drawing (%i seeds, %i others)", (seeds, others) => {
    const layout = layoutGraph(crowd(seeds, others), []);
    expect(layout.nodes).toHaveLength(seeds + others);
    for (const [i, a] of layout.nodes.entries()) {
      expect(a.x - outline(a)).toBeGreaterThan(0);
      expect(a.y - outline(a)).toBeGreaterThan(0);
      expect(a.x + outline(a)).toBeLessThan(layout.width);
      // A seed's badge sits below it.
      expect(a.y + outline(a) + (a.seed ? LABEL_ROOM : 0)).toBeLessThan(layout.height);
      for (const b of layout.nodes.slice(i + 1)) {
        expect(distance(a, b), `${a.chunk_id} and ${b.chunk_id}`).toBeGreaterThan(outline(a) + outline(b) + 4);
      }
    }
  });

  it("is deterministic", () => {
    const trace = ig2ragTrace();
    expect(layoutGraph(trace.nodes, trace.edges)).toEqual(layoutGraph(trace.nodes, trace.edges));
  });

  it("crops the drawing to its nodes", () => {
    const trace = ig2ragTrace();
    const layout = layoutGraph(trace.nodes, trace.edges);
    const left = Math.min(...layout.nodes.map((n) => n.x - outline(n)));
    const right = Math.max(...layout.nodes.map((n) => n.x + outline(n)));
    const bottom = Math.max(...layout.nodes.map((n) => n.y + outline(n) + (n.seed ? LABEL_ROOM : 0)));
    expect(left).toBeLessThan(20);
    expect(layout.width - right).toBeLessThan(20);
    expect(layout.height - bottom).toBeLessThan(20);
  });

  it("draws nothing for no nodes", () => {
    expect(layoutGraph([], [])).toMatchObject({ nodes: [], edges: [] });
  });

  it("ignores a repeated node", () => {
    const layout = layoutGraph([node(1, 0.5), node(1, 0.2), node(2, 0.1)], []);
    expect(layout.nodes.map((n) => [n.chunk_id, n.score])).toEqual([
      [1, 0.5],
      [2, 0.1],
    ]);
  });

  it("runs each edge from the source's outline to an arrow's length short of the target's", () => {
    const trace = ig2ragTrace();
    const layout = layoutGraph(trace.nodes, trace.edges);
    const byId = new Map(layout.nodes.map((n) => [n.chunk_id, n]));
    expect(layout.edges).toHaveLength(trace.edges.length);
    for (const edge of layout.edges) {
      const from = byId.get(edge.source)!;
      const to = byId.get(edge.target)!;
      const [sx, sy] = startOf(edge.d);
      const [ex, ey] = endOf(edge.d);
      expect(distance({ x: sx, y: sy }, from)).toBeCloseTo(outline(from), 0);
      expect(distance({ x: ex, y: ey }, to)).toBeCloseTo(outline(to) + ARROW, 0);
      expect(edge.kind).toBe(edge.class);
      expect(edge.width).toBe(edgeWidth(edge.weight));
    }
  });

  it("bows an edge and its reverse to opposite sides", () => {
    const trace = ig2ragTrace();
    const layout = layoutGraph(trace.nodes, trace.edges);
    const there = layout.edges.find((e) => e.source === 101 && e.target === 102)!;
    const back = layout.edges.find((e) => e.source === 102 && e.target === 101)!;
    const control = (d: string) => d.split(/\s+/).slice(4, 6).map(Number);
    const [ax, ay] = control(there.d);
    const [bx, by] = control(back.d);
    expect(Math.hypot(ax - bx, ay - by)).toBeGreaterThan(10);
  });

  it("marks an edge without a class as a similarity edge and drops edges it cannot place", () => {
    const edges: GraphEdge[] = [
      { source: 1, target: 2, class: null, weight: 0.8, link: false },
      { source: 1, target: 99, class: "novel", weight: 0.9, link: false },
      { source: 2, target: 2, class: "minor", weight: 0.4, link: false },
    ];
    const layout = layoutGraph([node(1, 0.5, true), node(2, 0.2)], edges);
    expect(layout.edges.map((e) => [e.source, e.target, e.kind])).toEqual([[1, 2, "similarity"]]);
  });

  it("draws a link of the notes with no gain edge beside it as a link, and a gain edge that is also one by its class", () => {
    const edges: GraphEdge[] = [
      { source: 1, target: 2, class: null, weight: 0.7, link: true },
      { source: 2, target: 3, class: "significant", weight: 1.4, link: true },
      { source: 3, target: 1, class: null, weight: 0.6, link: false },
      { source: 1, target: 3, class: "minor", weight: 0.4, link: false },
    ];
    const layout = layoutGraph([node(1, 0.5, true), node(2, 0.3), node(3, 0.2)], edges);
    expect(layout.edges.map((e) => [e.source, e.target, e.kind, e.link])).toEqual([
      [1, 2, "link", true],
      [2, 3, "significant", true],
      [3, 1, "similarity", false],
      [1, 3, "minor", false],
    ]);
    expect(edgeKind({ class: null, link: true })).toBe("link");
    expect(edgeKind({ class: null, link: false })).toBe("similarity");
    expect(edgeKind({ class: "novel", link: true })).toBe("novel");
    // A link's weight, a gain edge's beside it added, is drawn no wider than a full weight.
    expect(layout.edges[1].width).toBe(edgeWidth(1));
  });
});
