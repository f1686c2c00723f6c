// Where CRP-RAG's trace draws its reasoning graph: dagre ranks the steps top
// to bottom from the question and spaces them so no two boxes overlap; this
// module sizes each box for its wrapped text first and turns dagre's edge
// routes into polylines that stop an arrowhead short of the step they lead
// to. Pure and deterministic; the trace draws the result as an SVG of its
// own (a graph library would write inline styles, which the app's content
// security policy refuses).
import dagre, { type EdgeLabel, type GraphLabel, type NodeLabel } from "@dagrejs/dagre";
import type { ReasoningEdge } from "$lib/bindings/ReasoningEdge";
import type { ReasoningNode } from "$lib/bindings/ReasoningNode";

/** Box widths in SVG user units: a step, and the wider question at the top. */
export const STEP_WIDTH = 172;
export const QUESTION_WIDTH = 224;
/** Lines of text a box shows before it cuts the text off with an ellipsis. */
export const STEP_LINES = 3;
export const QUESTION_LINES = 4;
/** Inside a box: padding, the header line (step number, marks, check), and each text line. */
export const PAD_X = 8;
export const PAD_Y = 6;
export const HEADER = 14;
export const LINE = 14;
/** Text size in the boxes, and the width a character is assumed to take at that size (the question's is bold). */
export const FONT_SIZE = 11;
const CHAR_WIDTH = 6.3;
const BOLD_CHAR_WIDTH = 7;
/** The arrowhead's length: an edge's polyline stops this short of its target. */
export const ARROW = 7;
const NODE_SEP = 18;
const RANK_SEP = 34;
const MARGIN = 12;

export type Point = { x: number; y: number };

export type NodeBox = {
  id: number;
  /** The box's top-left corner and size. */
  x: number;
  y: number;
  width: number;
  height: number;
  /** The text as drawn: wrapped, and cut off with an ellipsis past the box's lines. */
  lines: string[];
  truncated: boolean;
  question: boolean;
};

export type EdgeLine = {
  key: string;
  from: number;
  to: number;
  /** From the source box's outline to an arrowhead's length short of the target's. */
  points: Point[];
  /** The same route as an SVG path, its bends rounded. */
  d: string;
};

export type DagLayout = {
  width: number;
  height: number;
  nodes: NodeBox[];
  edges: EdgeLine[];
};

const round = (v: number) => Math.round(v * 10) / 10;

/** How many characters fit on one line of a box this wide. */
export function lineChars(width: number, bold = false): number {
  return Math.max(4, Math.floor((width - 2 * PAD_X) / (bold ? BOLD_CHAR_WIDTH : CHAR_WIDTH)));
}

/**
 * `text` broken into at most `maxLines` lines of at most `maxChars`
 * characters, at spaces where it can and inside a word that is longer than
 * a line; what does not fit ends the last line with an ellipsis.
 */
export function wrapText(text: string, maxChars: number, maxLines: number): { lines: string[]; truncated: boolean } {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const lines: string[] = [];
  let line = "";
  const push = () => {
    lines.push(line);
    line = "";
  };
  for (let word of words) {
    while (word.length > 0) {
      const room = line === "" ? maxChars : maxChars - line.length - 1;
      if (word.length <= room) {
        line = line === "" ? word : `${line} ${word}`;
        word = "";
      } else if (line !== "") {
        push();
      } else {
        line = word.slice(0, maxChars);
        word = word.slice(maxChars);
        push();
      }
    }
  }
  if (line !== "") push();
  if (lines.length === 0) return { lines: [""], truncated: false };
  if (lines.length <= maxLines) return { lines, truncated: false };
  const kept = lines.slice(0, maxLines);
  const last = kept[maxLines - 1];
  kept[maxLines - 1] = `${last.length >= maxChars ? last.slice(0, maxChars - 1).trimEnd() : last}…`;
  return { lines: kept, truncated: true };
}

/** The height of a box showing `lines` lines under its header. */
export function boxHeight(lines: number): number {
  return 2 * PAD_Y + HEADER + lines * LINE;
}

/** The point `by` units back from `to` toward `from`, or `to` when the segment is too short. */
function pullBack(from: Point, to: Point, by: number): Point {
  const dx = to.x - from.x;
  const dy = to.y - from.y;
  const length = Math.hypot(dx, dy);
  if (length <= by + 1) return to;
  return { x: to.x - (dx / length) * by, y: to.y - (dy / length) * by };
}

export function layoutDag(nodes: readonly Pick<ReasoningNode, "id" | "text">[], edges: readonly ReasoningEdge[]): DagLayout {
  const unique = nodes.filter((n, i) => nodes.findIndex((m) => m.id === n.id) === i);
  if (unique.length === 0) return { width: 0, height: 0, nodes: [], edges: [] };
  const known = new Set(unique.map((n) => n.id));
  const seen = new Set<string>();
  const drawn = edges.filter((e) => {
    const key = `${e.from}>${e.to}`;
    if (e.from === e.to || !known.has(e.from) || !known.has(e.to) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });

  const g = new dagre.graphlib.Graph<GraphLabel, NodeLabel, EdgeLabel>();
  g.setGraph({ rankdir: "TB", nodesep: NODE_SEP, ranksep: RANK_SEP, marginx: MARGIN, marginy: MARGIN });
  g.setDefaultEdgeLabel(() => ({}));
  const text = new Map<number, { lines: string[]; truncated: boolean; width: number; question: boolean }>();
  for (const node of unique) {
    const question = node.id === 0;
    const width = question ? QUESTION_WIDTH : STEP_WIDTH;
    const wrapped = wrapText(node.text, lineChars(width, question), question ? QUESTION_LINES : STEP_LINES);
    text.set(node.id, { ...wrapped, width, question });
    g.setNode(String(node.id), { width, height: boxHeight(wrapped.lines.length) });
  }
  for (const edge of drawn) g.setEdge(String(edge.from), String(edge.to));
  dagre.layout(g);

  const placed: NodeBox[] = unique.map((node) => {
    const at = g.node(String(node.id));
    const t = text.get(node.id)!;
    return {
      id: node.id,
      x: round(at.x! - at.width / 2),
      y: round(at.y! - at.height / 2),
      width: at.width,
      height: at.height,
      lines: t.lines,
      truncated: t.truncated,
      question: t.question,
    };
  });

  const lines: EdgeLine[] = drawn.map((edge, i) => {
    const route = (g.edge(String(edge.from), String(edge.to)).points ?? []).map((p) => ({ x: p.x, y: p.y }));
    if (route.length >= 2) route[route.length - 1] = pullBack(route[route.length - 2], route[route.length - 1], ARROW);
    const points = route.map((p) => ({ x: round(p.x), y: round(p.y) }));
    return { key: `${edge.from}>${edge.to}#${i}`, from: edge.from, to: edge.to, points, d: roundedPath(points) };
  });

  const graph = g.graph();
  return {
    width: Math.ceil(graph.width ?? 0),
    height: Math.ceil(graph.height ?? 0),
    nodes: placed,
    edges: lines,
  };
}

/**
 * A path along `points` that cuts each bend with a curve through the
 * middles of the segments either side of it; the last segment stays
 * straight, so an arrowhead at its end points along it.
 */
export function roundedPath(points: readonly Point[]): string {
  if (points.length === 0) return "";
  const parts = [`M ${points[0].x} ${points[0].y}`];
  for (let i = 1; i < points.length - 1; i++) {
    const next = points[i + 1];
    const mid = { x: round((points[i].x + next.x) / 2), y: round((points[i].y + next.y) / 2) };
    parts.push(`Q ${points[i].x} ${points[i].y} ${mid.x} ${mid.y}`);
  }
  const last = points[points.length - 1];
  if (points.length > 1) parts.push(`L ${last.x} ${last.y}`);
  return parts.join(" ");
}

/** A polyline's `points` attribute. */
export function pointsAttr(points: readonly Point[]): string {
  return points.map((p) => `${p.x},${p.y}`).join(" ");
}
