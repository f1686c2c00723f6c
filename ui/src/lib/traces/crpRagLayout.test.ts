import { describe, expect, it } from "vitest";
import type { ReasoningEdge } from "$lib/bindings/ReasoningEdge";
import {
  ARROW,
  boxHeight,
  layoutDag,
  lineChars,
  pointsAttr,
  QUESTION_LINES,
  QUESTION_WIDTH,
  roundedPath,
  STEP_LINES,
  STEP_WIDTH,
  wrapText,
  type DagLayout,
  type NodeBox,
  type Point,
} from "./crpRagLayout";
import { crpRagTrace } from "./testing";

const step = (id: number, text = `Step ${id}: what does the passage say about it?`) => ({ id, text });

/** A graph grown to its budget: `width` steps per round for `depth` rounds, each joined to one or two parents. */
function grown(depth: number, width: number) {
  const nodes = [step(0, "The question")];
  const edges: ReasoningEdge[] = [];
  let previous = [0];
  for (let round = 1; round <= depth; round++) {
    const current: number[] = [];
    for (let j = 0; j < width; j++) {
      const id = nodes.length;
      nodes.push(step(id));
      current.push(id);
      edges.push({ from: previous[j % previous.length], to: id });
      if (previous.length > 1 && j % 2 === 1) edges.push({ from: previous[(j + 1) % previous.length], to: id });
    }
    previous = current;
  }
  return { nodes, edges };
}

const boxOf = (layout: DagLayout, id: number) => layout.nodes.find((n) => n.id === id)!;
const overlaps = (a: NodeBox, b: NodeBox) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
/** How far `p` lies from `box`'s outline, inside or out. */
function offOutline(p: Point, box: NodeBox): number {
  const outside = Math.hypot(
    Math.max(box.x - p.x, 0, p.x - box.x - box.width),
    Math.max(box.y - p.y, 0, p.y - box.y - box.height),
  );
  const inside = Math.min(p.x - box.x, box.x + box.width - p.x, p.y - box.y, box.y + box.height - p.y);
  return inside > 0 ? inside : outside;
}
/** Where an arrowhead drawn at the end of `points` has its tip. */
function tip(points: readonly Point[]): Point {
  const [a, b] = points.slice(-2);
  const length = Math.hypot(b.x - a.x, b.y - a.y);
  return { x: b.x + ((b.x - a.x) / length) * ARROW, y: b.y + ((b.y - a.y) / length) * ARROW };
}

describe("wrapText", () => {
  it("breaks at spaces and keeps every word when it fits", () => {
    expect(wrapText("How many members does Letters to Cleo have?", 20, 3)).toEqual({
      lines: ["How many members", "does Letters to Cleo", "have?"],
      truncated: false,
    });
    expect(wrapText("  one\n\ttwo  ", 20, 3)).toEqual({ lines: ["one two"], truncated: false });
  });

  it("cuts off what does not fit with an ellipsis on the last line", () => {
    const { lines, truncated } = wrapText("alpha beta gamma delta epsilon zeta eta theta", 11, 2);
    expect(truncated).toBe(true);
    expect(lines).toHaveLength(2);
    expect(lines[1].endsWith("…")).toBe(true);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(11);
  });

  it("splits a word longer than a line, and draws one empty line for no text", () => {
    const { lines } = wrapText("x".repeat(25), 10, 5);
    expect(lines).toEqual(["x".repeat(10), "x".repeat(10), "x".repeat(5)]);
    expect(wrapText("   ", 10, 3)).toEqual({ lines: [""], truncated: false });
  });
});

describe("roundedPath", () => {
  it("rounds each bend and ends on a straight segment to the last point", () => {
    expect(roundedPath([])).toBe("");
    expect(roundedPath([{ x: 1, y: 2 }])).toBe("M 1 2");
    expect(roundedPath([{ x: 0, y: 0 }, { x: 0, y: 10 }])).toBe("M 0 0 L 0 10");
    expect(roundedPath([{ x: 0, y: 0 }, { x: 0, y: 10 }, { x: 10, y: 20 }])).toBe("M 0 0 Q 0 10 5 15 L 10 20");
    expect(pointsAttr([{ x: 0, y: 0 }, { x: 2.5, y: 4 }])).toBe("0,0 2.5,4");
  });
});

describe("layoutDag", () => {
  it("gives every node a box sized for its wrapped text, the question wider", () => {
    const trace = crpRagTrace();
    const layout = layoutDag(trace.nodes, trace.edges);
    expect(layout.nodes.map((n) => n.id)).toEqual([0, 1, 2, 3, 4, 5]);
    const question = boxOf(layout, 0);
    expect(question).toMatchObject({ question: true, width: QUESTION_WIDTH });
    for (const box of layout.nodes.filter((n) => !n.question)) expect(box.width).toBe(STEP_WIDTH);
    for (const box of layout.nodes) {
      expect(box.height).toBe(boxHeight(box.lines.length));
      const chars = lineChars(box.width, box.question);
      for (const line of box.lines) expect(line.length).toBeLessThanOrEqual(chars);
    }
    expect(boxOf(layout, 1).lines.join(" ")).toBe("How many members does Letters to Cleo have?");
  });

  it("cuts long text off at the box's last line", () => {
    const long = "word ".repeat(80);
    const layout = layoutDag([step(0, long), step(1, long)], [{ from: 0, to: 1 }]);
    expect(boxOf(layout, 0)).toMatchObject({ truncated: true });
    expect(boxOf(layout, 0).lines).toHaveLength(QUESTION_LINES);
    expect(boxOf(layout, 1).lines).toHaveLength(STEP_LINES);
    expect(boxOf(layout, 1).lines[STEP_LINES - 1].endsWith("…")).toBe(true);
  });

  it("ranks top to bottom: the question first, every step below the steps it follows", () => {
    const trace = crpRagTrace();
    const layout = layoutDag(trace.nodes, trace.edges);
    const question = boxOf(layout, 0);
    for (const box of layout.nodes.filter((n) => n.id !== 0)) expect(box.y).toBeGreaterThan(question.y + question.height);
    for (const edge of trace.edges) {
      const from = boxOf(layout, edge.from);
      expect(boxOf(layout, edge.to).y).toBeGreaterThan(from.y + from.height);
    }
  });

  const shapes: [string, { id: number; text: string }[], ReasoningEdge[]][] = [
    ["the fixture", crpRagTrace().nodes, crpRagTrace().edges],
    ["a chain", [0, 1, 2, 3, 4].map((id) => step(id)), [0, 1, 2, 3].map((i) => ({ from: i, to: i + 1 }))],
    ["a wide graph", grown(3, 4).nodes, grown(3, 4).edges],
    [
      "a skip over a round",
      [0, 1, 2, 3].map((id) => step(id)),
      [
        { from: 0, to: 1 },
        { from: 1, to: 2 },
        { from: 0, to: 3 },
        { from: 2, to: 3 },
      ],
    ],
  ];

  it.each(shapes)("runs each edge downward from its parent's box to just short of its child's (%s)", (_, nodes, edges) => {
    const layout = layoutDag(nodes, edges);
    expect(layout.edges).toHaveLength(edges.length);
    for (const edge of layout.edges) {
      const from = boxOf(layout, edge.from);
      const to = boxOf(layout, edge.to);
      const first = edge.points[0];
      const last = edge.points[edge.points.length - 1];
      expect(edge.points.length).toBeGreaterThanOrEqual(2);
      expect(offOutline(first, from), `${edge.key} leaves its parent's outline`).toBeLessThan(1);
      // The arrowhead, drawn past the end, has its tip on the child's outline.
      expect(offOutline(tip(edge.points), to), `${edge.key} points at its child's outline`).toBeLessThan(1);
      // It comes in from above, whichever side of the box it meets.
      expect(last.y).toBeLessThan(to.y + to.height / 2);
      for (let i = 1; i < edge.points.length; i++) {
        expect(edge.points[i].y, `${edge.key} goes down`).toBeGreaterThanOrEqual(edge.points[i - 1].y);
      }
      expect(edge.d.startsWith(`M ${first.x} ${first.y}`)).toBe(true);
      expect(edge.d.endsWith(`L ${last.x} ${last.y}`)).toBe(true);
    }
  });

  it.each([
    [1, 1],
    [2, 3],
    [3, 4],
    [4, 6],
    [2, 10],
  ])("never overlaps boxes and keeps them inside the drawing (%i rounds of %i steps)", (depth, width) => {
    const { nodes, edges } = grown(depth, width);
    const layout = layoutDag(nodes, edges);
    expect(layout.nodes).toHaveLength(nodes.length);
    for (const [i, a] of layout.nodes.entries()) {
      expect(a.x).toBeGreaterThanOrEqual(0);
      expect(a.y).toBeGreaterThanOrEqual(0);
      expect(a.x + a.width).toBeLessThanOrEqual(layout.width);
      expect(a.y + a.height).toBeLessThanOrEqual(layout.height);
      for (const b of layout.nodes.slice(i + 1)) expect(overlaps(a, b), `${a.id} and ${b.id}`).toBe(false);
    }
  });

  it("is deterministic", () => {
    const trace = crpRagTrace();
    expect(layoutDag(trace.nodes, trace.edges)).toEqual(layoutDag(trace.nodes, trace.edges));
    const { nodes, edges } = grown(3, 4);
    expect(layoutDag(nodes, edges)).toEqual(layoutDag(nodes, edges));
  });

  it("draws the question alone, and nothing for no nodes", () => {
    expect(layoutDag([], [])).toEqual({ width: 0, height: 0, nodes: [], edges: [] });
    const alone = layoutDag([step(0, "Which band has more members?")], []);
    expect(alone.nodes).toHaveLength(1);
    expect(alone.edges).toHaveLength(0);
    expect(alone.width).toBeGreaterThanOrEqual(QUESTION_WIDTH);
  });

  it("drops edges it cannot place and draws a repeated node or edge once", () => {
    const layout = layoutDag(
      [step(0), step(1), step(1, "again")],
      [
        { from: 0, to: 1 },
        { from: 0, to: 1 },
        { from: 1, to: 1 },
        { from: 1, to: 9 },
      ],
    );
    expect(layout.nodes.map((n) => n.id)).toEqual([0, 1]);
    expect(layout.edges.map((e) => [e.from, e.to])).toEqual([[0, 1]]);
  });
});
