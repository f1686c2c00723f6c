import { describe, expect, it } from "vitest";
import { viewportBoxes, type PointConverter } from "./pdfGeometry";

/** pdf.js's viewport transform for an A4 page (595 × 842 points) at `scale`, rotated by `rotation` degrees. */
function a4Viewport(scale: number, rotation: 0 | 90 | 180 | 270): PointConverter {
  const [w, h] = [595, 842];
  return {
    convertToViewportPoint(x: number, y: number): number[] {
      switch (rotation) {
        case 0:
          return [x * scale, (h - y) * scale];
        case 90:
          return [y * scale, x * scale];
        case 180:
          return [(w - x) * scale, y * scale];
        case 270:
          return [(h - y) * scale, (w - x) * scale];
      }
    },
  };
}

describe("viewportBoxes", () => {
  const line = { x0: 72, y0: 746, x1: 272, y1: 760 };

  it("flips the y axis and scales an upright page", () => {
    expect(viewportBoxes([line], a4Viewport(2, 0))).toEqual([{ left: 144, top: 164, width: 400, height: 28 }]);
  });

  it("keeps one box per rectangle, in order, merging nothing", () => {
    const next = { x0: 72, y0: 730, x1: 300, y1: 744 };
    const boxes = viewportBoxes([line, next, line], a4Viewport(1, 0));
    expect(boxes).toHaveLength(3);
    expect(boxes[0]).toEqual(boxes[2]);
    expect(boxes[1].top).toBeGreaterThan(boxes[0].top);
  });

  it("normalises swapped corners", () => {
    const swapped = { x0: line.x1, y0: line.y1, x1: line.x0, y1: line.y0 };
    expect(viewportBoxes([swapped], a4Viewport(1, 0))).toEqual(viewportBoxes([line], a4Viewport(1, 0)));
  });

  it("turns the box with a rotated page", () => {
    expect(viewportBoxes([line], a4Viewport(1, 90))).toEqual([{ left: 746, top: 72, width: 14, height: 200 }]);
    expect(viewportBoxes([line], a4Viewport(1, 180))).toEqual([{ left: 323, top: 746, width: 200, height: 14 }]);
    expect(viewportBoxes([line], a4Viewport(1, 270))).toEqual([{ left: 82, top: 323, width: 14, height: 200 }]);
  });

  it("draws nothing for no rectangles", () => {
    expect(viewportBoxes([], a4Viewport(1, 0))).toEqual([]);
  });
});
