//! Tables as tables. Whatever the format, a table becomes one content node
//! whose text has a line per row, its cells joined by [`CELL_SEPARATOR`],
//! the header row(s) first, and whose [`TableShape`] says how many lines
//! the header is. The chunker can then split a long table between rows and
//! repeat the header in every piece, and a citation can name its rows.
//!
//! So that a line is always a row, a cell's own line breaks become spaces
//! and a `|` in it is written `\|`. A cell that spans rows is repeated in
//! each row it covers (its first [`CARRIED_CHARS`] characters), so every
//! row reads on its own as a person reads the grid; one that spans
//! columns leaves the columns after it empty, so later cells stay under
//! their header. Spans and columns are capped, and every row is charged to
//! the file's expansion budget, so no table grows past what its file may
//! produce (`crate::expansion`).

use serde::{Deserialize, Serialize};

/// Between the cells of a row in a table node's text.
pub const CELL_SEPARATOR: &str = " | ";

/// The most characters of a cell that are repeated into the rows it spans.
pub const CARRIED_CHARS: usize = 120;

/// Columns past this are neither padded nor carried into: a table this
/// wide is text, not a grid anyone reads across.
const MAX_COLUMNS: usize = 1000;

/// HTML's own caps on `rowspan` and `colspan`.
const MAX_ROWSPAN: u32 = 65_534;
const MAX_COLSPAN: u32 = 1_000;

/// What makes a content node a table: its first `header_rows` lines are
/// the header, and every other line is one row. `first_row` is the
/// source's own number of the first row below the header, when the source
/// numbers its rows and the node's are consecutive (a spreadsheet's), so
/// citations name the rows as the source does.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
pub struct TableShape {
    pub header_rows: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub first_row: Option<u32>,
}

impl TableShape {
    /// A table whose rows are counted from 1 below its header.
    pub fn headed(header_rows: u32) -> TableShape {
        TableShape {
            header_rows,
            first_row: None,
        }
    }
}

/// The rows of a table a passage holds, 1-based and inclusive, its header
/// not counted: what a citation names.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
pub struct TableRows {
    pub first: u32,
    pub last: u32,
}

impl std::fmt::Display for TableRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.first == self.last {
            true => write!(f, "row {}", self.first),
            false => write!(f, "rows {}–{}", self.first, self.last),
        }
    }
}

/// How many rows and columns a cell covers (1 and 1 for a plain cell).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellSpan {
    pub rows: u32,
    pub columns: u32,
}

impl Default for CellSpan {
    fn default() -> Self {
        CellSpan {
            rows: 1,
            columns: 1,
        }
    }
}

/// A cell that covers rows: its text and how many rows it covers from the
/// current one on.
struct Carried {
    text: String,
    rows_left: u32,
}

/// A table's text, built a cell and a row at a time in reading order.
#[derive(Default)]
pub struct TableText {
    text: String,
    rows: u32,
    header_rows: u32,
    /// The header rows seen so far are all at the top.
    header_on_top: bool,
    /// The current row's cells by column; `None` where nothing was written.
    row: Vec<Option<String>>,
    carried: Vec<Option<Carried>>,
    /// The file ran out of expansion budget: later rows are dropped.
    over: bool,
}

impl TableText {
    pub fn new() -> Self {
        TableText {
            header_on_top: true,
            ..TableText::default()
        }
    }

    /// Adds a cell to the current row, in the first column no cell from
    /// above still covers.
    pub fn cell(&mut self, text: &str, span: CellSpan) {
        let column = self.next_free_column();
        let cleaned = clean_cell(text);
        let rows = span.rows.clamp(1, MAX_ROWSPAN);
        let columns = span.columns.clamp(1, MAX_COLSPAN) as usize;
        if rows > 1 && column < MAX_COLUMNS {
            let carried: String = cleaned.chars().take(CARRIED_CHARS).collect();
            self.carry_at(column, carried, rows);
        }
        self.put(column, cleaned);
        // The columns it spans are left empty, but taken.
        for extra in column + 1..(column + columns).min(MAX_COLUMNS) {
            self.put(extra, String::new());
        }
    }

    /// Ends the current row; `header` says it belongs to the table's head
    /// (a markdown header row, HTML's `thead` or a row of `th`).
    pub fn end_row(&mut self, header: bool) {
        self.fill_carried(self.carried.len());
        let cells = std::mem::take(&mut self.row);
        for carried in self.carried.iter_mut() {
            if let Some(c) = carried {
                c.rows_left -= 1;
                if c.rows_left == 0 {
                    *carried = None;
                }
            }
        }
        let kept = cells
            .iter()
            .rposition(|c| c.as_deref().is_some_and(|c| !c.is_empty()))
            .map_or(0, |last| last + 1);
        if kept == 0 || self.over {
            return;
        }
        let line = cells[..kept]
            .iter()
            .map(|c| c.as_deref().unwrap_or(""))
            .collect::<Vec<_>>()
            .join(CELL_SEPARATOR);
        if crate::expansion::charge(line.len() as u64 + 1).is_err() {
            self.over = true;
            return;
        }
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(&line);
        if header && self.header_on_top && self.header_rows == self.rows {
            self.header_rows += 1;
        } else if !header {
            self.header_on_top = false;
        }
        self.rows += 1;
    }

    /// The table's text and shape; `None` when it has no text. A table
    /// that marks no header row is read with its first row as the header,
    /// as most tables are written.
    pub fn finish(mut self) -> Option<(String, TableShape)> {
        if !self.row.is_empty() {
            self.end_row(false);
        }
        if self.text.is_empty() {
            return None;
        }
        let header_rows = if self.header_rows == 0 || self.header_rows == self.rows {
            u32::from(self.rows > 1)
        } else {
            self.header_rows
        };
        Some((self.text, TableShape::headed(header_rows)))
    }

    fn next_free_column(&mut self) -> usize {
        loop {
            let column = self.row.len();
            match self.carried.get(column) {
                Some(Some(_)) if column < MAX_COLUMNS => self.fill_carried(column + 1),
                _ => return column,
            }
        }
    }

    /// Writes the carried cells of the columns before `to` that the
    /// current row has not written yet.
    fn fill_carried(&mut self, to: usize) {
        for column in self.row.len()..to.min(self.carried.len()) {
            let text = self.carried[column]
                .as_ref()
                .map(|c| c.text.clone())
                .unwrap_or_default();
            self.put(column, text);
        }
    }

    fn put(&mut self, column: usize, text: String) {
        if column < self.row.len() {
            let cell = &mut self.row[column];
            match cell {
                Some(old) if !text.is_empty() => {
                    old.push(' ');
                    old.push_str(&text);
                }
                Some(_) => {}
                None => *cell = Some(text),
            }
            return;
        }
        self.row.resize(column, None);
        self.row.push(Some(text));
    }

    fn carry_at(&mut self, column: usize, text: String, rows_left: u32) {
        if self.carried.len() <= column {
            self.carried.resize_with(column + 1, || None);
        }
        self.carried[column] = Some(Carried { text, rows_left });
    }
}

/// A cell's text on one line: runs of whitespace become one space, and
/// `|` is written `\|` so it never reads as a cell boundary.
pub fn clean_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        for c in word.chars() {
            if c == '|' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
}

/// The byte ranges of a table node's lines, in order.
pub fn line_ranges(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = 0;
    text.split('\n').map(move |line| {
        let range = (start, start + line.len());
        start += line.len() + 1;
        range
    })
}

/// The rows that bytes `start..end` of a table node's text cover, the
/// first and the last: counted from 1 below the header, or from the
/// shape's `first_row`.
pub fn rows_in(text: &str, shape: TableShape, start: usize, end: usize) -> Option<TableRows> {
    let header = shape.header_rows as usize;
    let mut first = None;
    let mut last = None;
    for (index, (line_start, line_end)) in line_ranges(text).enumerate() {
        if index < header || line_end <= start || line_start >= end {
            continue;
        }
        let row = (index - header) as u32 + shape.first_row.unwrap_or(1);
        first.get_or_insert(row);
        last = Some(row);
    }
    Some(TableRows {
        first: first?,
        last: last?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[(&[(&str, u32, u32)], bool)]) -> (String, TableShape) {
        let mut t = TableText::new();
        for (cells, header) in rows {
            for (text, r, c) in cells.iter() {
                t.cell(
                    text,
                    CellSpan {
                        rows: *r,
                        columns: *c,
                    },
                );
            }
            t.end_row(*header);
        }
        t.finish().unwrap()
    }

    #[test]
    fn rows_are_lines_and_the_marked_header_comes_first() {
        let (text, shape) = table(&[
            (&[("Name", 1, 1), ("Age", 1, 1)], true),
            (&[("Ada", 1, 1), ("36", 1, 1)], false),
            (&[("Bob\nSmith", 1, 1), ("a | b", 1, 1)], false),
        ]);
        assert_eq!(text, "Name | Age\nAda | 36\nBob Smith | a \\| b");
        assert_eq!(shape.header_rows, 1);
    }

    #[test]
    fn a_cell_spanning_rows_is_repeated_and_one_spanning_columns_leaves_them_empty() {
        let (text, _) = table(&[
            (&[("Fruit", 1, 1), ("Kind", 1, 1), ("Price", 1, 1)], true),
            (&[("Apple", 2, 1), ("Gala", 1, 1), ("1", 1, 1)], false),
            (&[("Fuji", 1, 1), ("2", 1, 1)], false),
            (&[("Total", 1, 2), ("3", 1, 1)], false),
        ]);
        assert_eq!(
            text,
            "Fruit | Kind | Price\nApple | Gala | 1\nApple | Fuji | 2\nTotal |  | 3"
        );
    }

    #[test]
    fn a_span_in_the_last_column_is_carried_into_short_rows() {
        let (text, _) = table(&[
            (&[("a", 1, 1), ("b", 3, 1)], true),
            (&[("c", 1, 1)], false),
            (&[("d", 1, 1)], false),
        ]);
        assert_eq!(text, "a | b\nc | b\nd | b");
    }

    #[test]
    fn without_a_marked_header_the_first_row_is_the_header() {
        let (_, shape) = table(&[(&[("x", 1, 1)], false), (&[("y", 1, 1)], false)]);
        assert_eq!(shape.header_rows, 1);
        let (_, one_row) = table(&[(&[("x", 1, 1)], false)]);
        assert_eq!(one_row.header_rows, 0);
    }

    #[test]
    fn empty_rows_are_dropped_and_an_empty_table_is_none() {
        let (text, _) = table(&[
            (&[("h", 1, 1)], true),
            (&[(" ", 1, 1)], false),
            (&[("v", 1, 1)], false),
        ]);
        assert_eq!(text, "h\nv");
        let mut t = TableText::new();
        t.cell("  ", CellSpan::default());
        assert!(t.finish().is_none());
    }

    #[test]
    fn huge_spans_stay_bounded() {
        let long = "word ".repeat(1000);
        let mut rows: Vec<(&[(&str, u32, u32)], bool)> = Vec::new();
        let first = [(long.as_str(), u32::MAX, u32::MAX)];
        rows.push((&first, true));
        let next = [("v", 1, 1)];
        for _ in 0..100 {
            rows.push((&next, false));
        }
        let (text, _) = table(&rows);
        // The spanned columns are capped, the carried text is cut short.
        assert!(text.len() < 1000 * 3 + 5000 + 100 * (CARRIED_CHARS + 10));
        assert!(text.lines().nth(1).unwrap().starts_with("word word"));
    }

    #[test]
    fn rows_in_names_the_rows_a_range_covers() {
        let text = "H\nr1\nr2\nr3";
        let shape = TableShape::headed(1);
        let rows = |first, last| Some(TableRows { first, last });
        assert_eq!(rows_in(text, shape, 5, 10), rows(2, 3));
        assert_eq!(rows_in(text, shape, 0, 1), None);
        assert_eq!(rows_in(text, shape, 0, 10), rows(1, 3));
        assert_eq!(rows(2, 3).unwrap().to_string(), "rows 2–3");
        assert_eq!(rows(4, 4).unwrap().to_string(), "row 4");
        let sheet = TableShape {
            header_rows: 1,
            first_row: Some(27),
        };
        assert_eq!(rows_in(text, sheet, 5, 10), rows(28, 29));
    }
}
