// The layout of the Evaluate view's accuracy-against-cost chart, as plain
// numbers: scales, ticks and where each label goes. Kept apart from the
// component so the geometry can be tested without a DOM (jsdom measures no
// text), which is also why label widths are estimated from their length.

export type Box = { left: number; top: number; right: number; bottom: number };

export type Tick = { value: number; position: number; label: string };

/** One method spec: x is tokens per question, y is accuracy in percent. */
export type ChartPoint = { label: string; x: number; y: number };

export type PlacedPoint = {
  /** As drawn: shortened with an ellipsis when wider than the plot. */
  label: string;
  fullLabel: string;
  x: number;
  y: number;
  cx: number;
  cy: number;
  labelX: number;
  /** The label's vertical centre (drawn with dominant-baseline="central"). */
  labelY: number;
  anchor: "start" | "end";
};

export type ChartLayout = {
  width: number;
  height: number;
  plot: Box;
  xTicks: Tick[];
  yTicks: Tick[];
  points: PlacedPoint[];
};

export type ChartOptions = {
  width: number;
  height: number;
  margin: { left: number; right: number; top: number; bottom: number };
  pointRadius: number;
  /** A generous average advance of the label font, so estimates err wide. */
  charWidth: number;
  lineHeight: number;
};

export const CHART_DEFAULTS: ChartOptions = {
  width: 640,
  height: 360,
  margin: { left: 56, right: 20, top: 16, bottom: 52 },
  pointRadius: 5,
  charWidth: 7,
  lineHeight: 14,
};

/** The round step (1, 2, 2.5 or 5 times a power of ten) giving about `count` intervals. */
export function niceStep(span: number, count: number): number {
  if (!(span > 0) || !Number.isFinite(span)) return 1;
  const raw = span / Math.max(1, count);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const residual = raw / magnitude;
  const nice = residual <= 1 ? 1 : residual <= 2 ? 2 : residual <= 2.5 ? 2.5 : residual <= 5 ? 5 : 10;
  return nice * magnitude;
}

/**
 * Evenly spaced round values covering [min, max]; the first and last are the
 * axis's extremes. A single value gets a range reaching to zero, and zero
 * alone gets [0, 1], so a scale never divides by a zero span. `minStep`
 * keeps counts of whole things (tokens) from getting fractional ticks.
 */
export function niceTicks(min: number, max: number, count = 5, minStep = 0): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  let lo = Math.min(min, max);
  let hi = Math.max(min, max);
  if (lo === hi) {
    if (lo > 0) lo = 0;
    else if (hi < 0) hi = 0;
    else hi = 1;
  }
  const step = Math.max(minStep, niceStep(hi - lo, count));
  const start = Math.floor(lo / step) * step;
  const intervals = Math.ceil(hi / step - start / step - 1e-9);
  // toPrecision drops the float noise of repeated multiples (0.30000000000000004).
  return Array.from({ length: intervals + 1 }, (_, i) => Number((start + i * step).toPrecision(12)));
}

/** Maps [d0, d1] onto [r0, r1]; a zero-width domain maps to the middle. */
export function linearScale(d0: number, d1: number, r0: number, r1: number): (value: number) => number {
  if (d1 === d0) return () => (r0 + r1) / 2;
  const ratio = (r1 - r0) / (d1 - d0);
  return (value) => r0 + (value - d0) * ratio;
}

export function formatTick(value: number): string {
  if (Math.abs(value) >= 10_000) return `${Number((value / 1000).toPrecision(3)).toLocaleString()}k`;
  return value.toLocaleString();
}

function overlaps(a: Box, b: Box): boolean {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}

function inside(box: Box, plot: Box): boolean {
  return box.left >= plot.left && box.right <= plot.right && box.top >= plot.top && box.bottom <= plot.bottom;
}

function labelBox(x: number, y: number, width: number, anchor: "start" | "end", height: number): Box {
  const left = anchor === "start" ? x : x - width;
  return { left, right: left + width, top: y - height / 2, bottom: y + height / 2 };
}

function clamp(value: number, lo: number, hi: number): number {
  return Math.min(Math.max(value, lo), hi);
}

/** The label as drawn: cut to what fits in `room` pixels, marked with an ellipsis. */
export function fitLabel(label: string, room: number, charWidth: number): string {
  const chars = Math.max(1, Math.floor(room / charWidth));
  return label.length <= chars ? label : `${label.slice(0, Math.max(0, chars - 1))}…`;
}

/**
 * Lays the chart out: x from zero to a round number of tokens at least the
 * largest, y from 0 to 100 %; each label beside its point, on the first side
 * where it stays in the plot and clear of the labels and points placed so
 * far, or else pushed inside the plot.
 */
export function layoutChart(points: ChartPoint[], options: ChartOptions = CHART_DEFAULTS): ChartLayout {
  const { width, height, margin, pointRadius, charWidth, lineHeight } = options;
  const plot: Box = {
    left: margin.left,
    top: margin.top,
    right: width - margin.right,
    bottom: height - margin.bottom,
  };
  const finiteX = points.map((p) => p.x).filter(Number.isFinite);
  const xValues = niceTicks(0, Math.max(0, ...finiteX), 5, 1);
  const yValues = niceTicks(0, 100);
  const xScale = linearScale(xValues[0], xValues[xValues.length - 1], plot.left, plot.right);
  const yScale = linearScale(yValues[0], yValues[yValues.length - 1], plot.bottom, plot.top);
  const ticks = (values: number[], scale: (v: number) => number) =>
    values.map((value) => ({ value, position: scale(value), label: formatTick(value) }));

  const gap = pointRadius + 3;
  const pointBoxes: Box[] = [];
  const located = points.map((p) => {
    const cx = clamp(xScale(Number.isFinite(p.x) ? p.x : 0), plot.left, plot.right);
    const cy = clamp(yScale(Number.isFinite(p.y) ? p.y : 0), plot.top, plot.bottom);
    pointBoxes.push({ left: cx - pointRadius, right: cx + pointRadius, top: cy - pointRadius, bottom: cy + pointRadius });
    return { ...p, cx, cy };
  });

  const placed: Box[] = [];
  const result = located.map((p, i) => {
    const label = fitLabel(p.label, plot.right - plot.left, charWidth);
    const w = label.length * charWidth;
    const candidates: [number, number, "start" | "end"][] = [
      [p.cx + gap, p.cy, "start"],
      [p.cx - gap, p.cy, "end"],
      [p.cx + gap, p.cy - lineHeight, "start"],
      [p.cx + gap, p.cy + lineHeight, "start"],
      [p.cx - gap, p.cy - lineHeight, "end"],
      [p.cx - gap, p.cy + lineHeight, "end"],
    ];
    const clear = candidates.find(([x, y, anchor]) => {
      const box = labelBox(x, y, w, anchor, lineHeight);
      return (
        inside(box, plot) &&
        !placed.some((b) => overlaps(b, box)) &&
        !pointBoxes.some((b, j) => j !== i && overlaps(b, box))
      );
    });
    let labelX: number;
    let labelY: number;
    let anchor: "start" | "end";
    if (clear) {
      [labelX, labelY, anchor] = clear;
    } else {
      // Crowded or near an edge: keep to the side with more room, inside the plot.
      anchor = plot.right - p.cx >= p.cx - plot.left ? "start" : "end";
      labelX = anchor === "start" ? clamp(p.cx + gap, plot.left, plot.right - w) : clamp(p.cx - gap, plot.left + w, plot.right);
      labelY = clamp(p.cy, plot.top + lineHeight / 2, plot.bottom - lineHeight / 2);
    }
    placed.push(labelBox(labelX, labelY, w, anchor, lineHeight));
    return { label, fullLabel: p.label, x: p.x, y: p.y, cx: p.cx, cy: p.cy, labelX, labelY, anchor };
  });

  return { width, height, plot, xTicks: ticks(xValues, xScale), yTicks: ticks(yValues, yScale), points: result };
}
