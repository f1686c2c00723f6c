// A table node's text read back as rows of cells, the way the engine
// writes it (folio-documents' table.rs): a line per row, cells joined by
// " | ", a cell's own "|" written "\|", the header's lines first.
import type { TableRows } from "$lib/bindings/TableRows";
import type { TableShape } from "$lib/bindings/TableShape";

export type ShownRow = {
  /** A header line: drawn with th cells. */
  header: boolean;
  /** The row's number as citations count it (1-based, the header not counted); null for the header. */
  number: number | null;
  cells: string[];
};

/** Splits a row's line at its separators, not at an escaped "\|". */
export function cellsOf(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  for (let i = 0; i < line.length; i++) {
    if (line.startsWith(" | ", i) && line[i - 1] !== "\\") {
      cells.push(cell);
      cell = "";
      i += 2;
    } else if (line[i] === "\\" && line[i + 1] === "|") {
      cell += "|";
      i += 1;
    } else {
      cell += line[i];
    }
  }
  cells.push(cell);
  return cells;
}

export function tableRows(text: string, shape: TableShape): ShownRow[] {
  return text.split("\n").map((line, i) => {
    const header = i < shape.header_rows;
    return { header, number: header ? null : i - shape.header_rows + 1, cells: cellsOf(line) };
  });
}

/** Whether row `number` is among the cited `rows`. */
export function isCitedRow(number: number | null, rows: TableRows | undefined): boolean {
  return number != null && rows != null && number >= rows.first && number <= rows.last;
}

/** "row 4" or "rows 8–9", as the CLI and exports say it. */
export function rowsLabel(rows: TableRows): string {
  return rows.first === rows.last ? `row ${rows.first}` : `rows ${rows.first}–${rows.last}`;
}
