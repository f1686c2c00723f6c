// Where a stored passage's rectangles fall on a rendered PDF page: PDF user
// space (points, origin bottom left, unrotated) to boxes in the page's CSS
// pixels, through the same viewport the page was drawn with.
import type { PdfRect } from "$lib/bindings/PdfRect";

/** The part of pdf.js's PageViewport used here: one PDF point to viewport (CSS pixel) coordinates. */
export interface PointConverter {
  convertToViewportPoint(x: number, y: number): number[];
}

/** A box in CSS pixels from the top left of the rendered page. */
export type CssBox = { left: number; top: number; width: number; height: number };

/**
 * One box per rectangle, in order, none merged. The viewport flips the y
 * axis and may rotate the page, so either corner can land anywhere: each box
 * spans the two converted corners' minimum and maximum.
 */
export function viewportBoxes(rects: PdfRect[], viewport: PointConverter): CssBox[] {
  return rects.map(({ x0, y0, x1, y1 }) => {
    const [ax, ay] = viewport.convertToViewportPoint(x0, y0);
    const [bx, by] = viewport.convertToViewportPoint(x1, y1);
    return {
      left: Math.min(ax, bx),
      top: Math.min(ay, by),
      width: Math.abs(bx - ax),
      height: Math.abs(by - ay),
    };
  });
}
