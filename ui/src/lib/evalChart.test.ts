import { describe, expect, it } from "vitest";
import {
  CHART_DEFAULTS,
  fitLabel,
  formatTick,
  layoutChart,
  linearScale,
  niceStep,
  niceTicks,
  type Box,
  type PlacedPoint,
} from "./evalChart";

/** The label's box as drawn, by the same width estimate the layout uses. */
function box(p: PlacedPoint): Box {
  const w = p.label.length * CHART_DEFAULTS.charWidth;
  const left = p.anchor === "start" ? p.labelX : p.labelX - w;
  const h = CHART_DEFAULTS.lineHeight;
  return { left, right: left + w, top: p.labelY - h / 2, bottom: p.labelY + h / 2 };
}

function expectInside(inner: Box, outer: Box) {
  expect(inner.left).toBeGreaterThanOrEqual(outer.left);
  expect(inner.right).toBeLessThanOrEqual(outer.right);
  expect(inner.top).toBeGreaterThanOrEqual(outer.top);
  expect(inner.bottom).toBeLessThanOrEqual(outer.bottom);
}

const overlap = (a: Box, b: Box) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

describe("niceTicks", () => {
  it("steps by 1, 2, 2.5 or 5 times a power of ten", () => {
    expect(niceStep(100, 5)).toBe(20);
    expect(niceStep(1234, 5)).toBe(250);
    expect(niceStep(0.9, 5)).toBe(0.2);
    expect(niceStep(7000, 5)).toBe(2000);
  });

  it("covers the range with round values from a round start", () => {
    expect(niceTicks(0, 100)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(0, 1234)).toEqual([0, 250, 500, 750, 1000, 1250]);
    expect(niceTicks(0, 0.9)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(niceTicks(130, 870)).toEqual([0, 200, 400, 600, 800, 1000]);
    expect(niceTicks(0, 3, 5, 1)).toEqual([0, 1, 2, 3]);
  });

  it("never gives a zero-width range", () => {
    expect(niceTicks(0, 0)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(niceTicks(0, 0, 5, 1)).toEqual([0, 1]);
    expect(niceTicks(500, 500)).toEqual([0, 100, 200, 300, 400, 500]);
    expect(niceTicks(Number.NaN, 3)).toEqual([0, 1]);
  });
});

describe("linearScale", () => {
  it("maps the domain's extremes to the range's, inverted or not", () => {
    const x = linearScale(0, 1250, 56, 620);
    expect(x(0)).toBe(56);
    expect(x(1250)).toBe(620);
    expect(x(625)).toBe(338);
    const y = linearScale(0, 100, 308, 16);
    expect(y(0)).toBe(308);
    expect(y(100)).toBe(16);
  });

  it("maps a zero-width domain to the middle instead of dividing by zero", () => {
    expect(linearScale(3, 3, 0, 10)(3)).toBe(5);
  });
});

describe("formatTick", () => {
  it("shortens large token counts", () => {
    expect(formatTick(0)).toBe("0");
    expect(formatTick(2500)).toBe("2,500");
    expect(formatTick(12_500)).toBe("12.5k");
    expect(formatTick(0.2)).toBe("0.2");
  });
});

describe("fitLabel", () => {
  it("keeps a label that fits and shortens one that does not", () => {
    expect(fitLabel("vanilla-rag", 100, 7)).toBe("vanilla-rag");
    expect(fitLabel("pager:variant=parallel", 70, 7)).toBe("pager:var…");
  });
});

describe("layoutChart", () => {
  it("puts the axes' extremes on the plot's edges", () => {
    const layout = layoutChart([
      { label: "llm-only", x: 120, y: 20 },
      { label: "vanilla-rag", x: 1180, y: 64 },
    ]);
    const { plot, xTicks, yTicks } = layout;
    expect(plot).toEqual({ left: 56, top: 16, right: 620, bottom: 308 });
    expect(xTicks.map((t) => t.value)).toEqual([0, 250, 500, 750, 1000, 1250]);
    expect(xTicks[0].position).toBe(plot.left);
    expect(xTicks[xTicks.length - 1].position).toBe(plot.right);
    expect(yTicks.map((t) => t.label)).toEqual(["0", "20", "40", "60", "80", "100"]);
    expect(yTicks[0].position).toBe(plot.bottom);
    expect(yTicks[yTicks.length - 1].position).toBe(plot.top);
    const [a, b] = layout.points;
    expect(a.cx).toBeCloseTo(56 + (120 / 1250) * 564);
    expect(b.cy).toBeCloseTo(308 - 0.64 * 292);
  });

  it("draws a single spec, or specs that used no tokens, without dividing by zero", () => {
    const single = layoutChart([{ label: "vanilla-rag", x: 900, y: 50 }]);
    expect(single.xTicks.map((t) => t.value)).toEqual([0, 200, 400, 600, 800, 1000]);
    expect(single.points[0].cx).toBeCloseTo(56 + 0.9 * 564);
    const zero = layoutChart([
      { label: "a", x: 0, y: 0 },
      { label: "b", x: 0, y: 100 },
    ]);
    expect(zero.xTicks.map((t) => t.value)).toEqual([0, 1]);
    for (const p of zero.points) {
      expect(Number.isFinite(p.cx) && Number.isFinite(p.cy)).toBe(true);
      expect(p.cx).toBe(zero.plot.left);
    }
    expect(layoutChart([]).points).toEqual([]);
  });

  it("keeps every label inside the plot, even at its corners and when too long", () => {
    const long = "pager:variant=parallel:slots=9:k=12:overlap=0.5:sufficiency=perplexity:more=options";
    const layout = layoutChart([
      { label: "top-right-corner", x: 5000, y: 100 },
      { label: "bottom-left", x: 0, y: 0 },
      { label: "top-left", x: 0, y: 100 },
      { label: "bottom-right", x: 5000, y: 0 },
      { label: long, x: 2500, y: 50 },
    ]);
    for (const p of layout.points) expectInside(box(p), layout.plot);
    const cut = layout.points[4];
    expect(cut.fullLabel).toBe(long);
    expect(cut.label.endsWith("…")).toBe(true);
  });

  it("moves a label aside when a neighbour's is in the way", () => {
    const layout = layoutChart([
      { label: "vanilla-rag", x: 1000, y: 60 },
      { label: "vanilla-rag:mode=bm25", x: 1010, y: 60.5 },
      { label: "pager", x: 1020, y: 61 },
    ]);
    const boxes = layout.points.map(box);
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) expect(overlap(boxes[i], boxes[j]), `${i} and ${j}`).toBe(false);
    }
  });
});
