import { describe, expect, it } from "vitest";
import { cellsOf, isCitedRow, rowsLabel, tableRows } from "./table";

describe("table nodes", () => {
  it("splits rows at separators but not at an escaped bar", () => {
    expect(cellsOf("a | b \\| c |  | d")).toEqual(["a", "b | c", "", "d"]);
    expect(cellsOf("alone")).toEqual(["alone"]);
  });

  it("numbers body rows as citations do", () => {
    const rows = tableRows("Part | Stock\npart-1 | 3\npart-2 | 6", { header_rows: 1 });
    expect(rows.map((r) => [r.header, r.number])).toEqual([
      [true, null],
      [false, 1],
      [false, 2],
    ]);
    expect(rows[2].cells).toEqual(["part-2", "6"]);
  });

  it("marks the cited rows only", () => {
    const cited = { first: 2, last: 3 };
    expect([null, 1, 2, 3, 4].map((n) => isCitedRow(n, cited))).toEqual([false, false, true, true, false]);
    expect(isCitedRow(2, undefined)).toBe(false);
    expect(rowsLabel(cited)).toBe("rows 2–3");
    expect(rowsLabel({ first: 4, last: 4 })).toBe("row 4");
  });
});
