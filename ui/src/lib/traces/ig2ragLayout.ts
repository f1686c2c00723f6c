// Where iG²RAG's trace draws its graph: seeds on an inner ring, every other
// node on an outer ring, each ring in rank order (highest score first,
// clockwise from the top). Deterministic, and the rings are sized so no two
// nodes overlap, whatever their number. Plain arithmetic: the trace draws
// the result as an SVG of its own (a graph library would write inline
// styles, which the app's content security policy refuses).
import type { GainClass } from "$lib/bindings/GainClass";
import type { GraphEdge } from "$lib/bindings/GraphEdge";
import type { GraphNode } from "$lib/bindings/GraphNode";

/** Node radii, smallest and largest, in SVG user units. */
export const MIN_RADIUS = 11;
export const MAX_RADIUS = 24;
/** A seed's second ring lies this far outside its node. */
export const SEED_RING = 4;
/** Room under a seed for its "seed" badge. */
export const LABEL_ROOM = 14;
/** The arrowhead's length: an edge's path stops this short of its target. */
export const ARROW = 7;
const NODE_GAP = 10;
const RING_GAP = 26;
const MARGIN = 16;

/**
 * What an edge is drawn as: its gain class; "similarity" for sim-ppr's
 * unclassed edges; "link" for a link of the notes with no gain edge beside
 * it (a gain edge that is also a link keeps its class, and its `link`).
 */
export type EdgeKind = GainClass | "similarity" | "link";

export function edgeKind(edge: Pick<GraphEdge, "class" | "link">): EdgeKind {
  return edge.class ?? (edge.link ? "link" : "similarity");
}

export type PlacedNode = GraphNode & {
  x: number;
  y: number;
  r: number;
  /** 0 for the highest score. */
  rank: number;
};

export type PlacedEdge = GraphEdge & {
  key: string;
  kind: EdgeKind;
  /** An SVG path from the source's outline to just short of the target's. */
  d: string;
  width: number;
};

export type GraphLayout = {
  width: number;
  height: number;
  /** The rings' centre. */
  centre: { x: number; y: number };
  nodes: PlacedNode[];
  edges: PlacedEdge[];
};

const round = (v: number) => Math.round(v * 10) / 10;
const finite = (v: number) => (Number.isFinite(v) ? v : 0);

/** Area grows with the score's share of the largest, within the radius bounds. */
export function nodeRadius(score: number, maxScore: number): number {
  const max = finite(maxScore);
  if (max <= 0) return MIN_RADIUS;
  const share = Math.min(1, Math.max(0, finite(score) / max));
  return round(MIN_RADIUS + (MAX_RADIUS - MIN_RADIUS) * Math.sqrt(share));
}

/** Stroke width of an edge: 1 for no weight, 3.5 for full weight. */
export function edgeWidth(weight: number): number {
  return round(1 + 2.5 * Math.min(1, Math.max(0, finite(weight))));
}

/** How far a node's drawing reaches from its centre. */
export function outline(node: { r: number; seed: boolean }): number {
  return node.r + (node.seed ? SEED_RING : 0);
}

/** The smallest ring on which `count` nodes this far apart, centre to centre, fit. */
function ringFor(count: number, spacing: number): number {
  return count < 2 ? 0 : spacing / (2 * Math.sin(Math.PI / count));
}

export function layoutGraph(nodes: readonly GraphNode[], edges: readonly GraphEdge[]): GraphLayout {
  const unique = nodes.filter((n, i) => nodes.findIndex((m) => m.chunk_id === n.chunk_id) === i);
  const maxScore = Math.max(0, ...unique.map((n) => finite(n.score)));
  const ranked = unique
    .map((n, i) => ({ n, i }))
    .sort((a, b) => finite(b.n.score) - finite(a.n.score) || a.i - b.i)
    .map(({ n }, rank): PlacedNode => ({ ...n, x: 0, y: 0, r: nodeRadius(n.score, maxScore), rank }));

  const rings = [ranked.filter((n) => n.seed), ranked.filter((n) => !n.seed)].filter((ring) => ring.length > 0);
  let reach = 0;
  rings.forEach((ring, i) => {
    const widest = Math.max(...ring.map(outline));
    const labels = ring.some((n) => n.seed) ? LABEL_ROOM : 0;
    const spacing = 2 * widest + NODE_GAP + labels;
    const radius = i === 0 ? ringFor(ring.length, spacing) : Math.max(ringFor(ring.length, spacing), reach + RING_GAP + widest);
    ring.forEach((node, j) => {
      const angle = -Math.PI / 2 + (2 * Math.PI * j) / ring.length;
      node.x = radius * Math.cos(angle);
      node.y = radius * Math.sin(angle);
    });
    reach = radius + widest + labels;
  });

  // Crop to what is drawn: a seed's badge hangs below it, and an edge bows
  // at most 14 units off the line between its nodes, within the margin.
  const box = ranked.reduce(
    (b, n) => ({
      left: Math.min(b.left, n.x - outline(n)),
      right: Math.max(b.right, n.x + outline(n)),
      top: Math.min(b.top, n.y - outline(n)),
      bottom: Math.max(b.bottom, n.y + outline(n) + (n.seed ? LABEL_ROOM : 0)),
    }),
    { left: 0, right: 0, top: 0, bottom: 0 },
  );
  const dx = MARGIN - Math.floor(box.left);
  const dy = MARGIN - Math.floor(box.top);
  for (const node of ranked) {
    node.x = round(node.x + dx);
    node.y = round(node.y + dy);
  }

  const byId = new Map(ranked.map((n) => [n.chunk_id, n]));
  const placed: PlacedEdge[] = [];
  edges.forEach((edge, i) => {
    const from = byId.get(edge.source);
    const to = byId.get(edge.target);
    if (!from || !to || from === to) return;
    placed.push({
      ...edge,
      key: `${edge.source}>${edge.target}#${i}`,
      kind: edgeKind(edge),
      d: edgePath(from, to),
      width: edgeWidth(edge.weight),
    });
  });

  return {
    width: Math.ceil(box.right) - Math.floor(box.left) + 2 * MARGIN,
    height: Math.ceil(box.bottom) - Math.floor(box.top) + 2 * MARGIN,
    centre: { x: dx, y: dy },
    nodes: ranked,
    edges: placed,
  };
}

/**
 * A gentle curve, bowed to the same side of its direction every time, so an
 * edge and its reverse bow apart instead of drawing over each other. It
 * leaves the source's outline and stops an arrowhead's length before the
 * target's, on the line to its centre, so the arrow's tip touches it.
 */
function edgePath(from: PlacedNode, to: PlacedNode): string {
  const dx = to.x - from.x;
  const dy = to.y - from.y;
  const length = Math.hypot(dx, dy) || 1;
  const bend = Math.min(0.15 * length, 28);
  const cx = (from.x + to.x) / 2 - (dy / length) * bend;
  const cy = (from.y + to.y) / 2 + (dx / length) * bend;
  const toward = (node: PlacedNode, by: number) => {
    const ux = cx - node.x;
    const uy = cy - node.y;
    const ul = Math.hypot(ux, uy) || 1;
    return [round(node.x + (ux / ul) * by), round(node.y + (uy / ul) * by)];
  };
  const [sx, sy] = toward(from, outline(from));
  const [ex, ey] = toward(to, outline(to) + ARROW);
  return `M ${sx} ${sy} Q ${round(cx)} ${round(cy)} ${ex} ${ey}`;
}
