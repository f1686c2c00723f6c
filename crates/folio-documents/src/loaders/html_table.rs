//! An HTML table read as a grid for its table node (`crate::table`): `tr`
//! is a row, `td` and `th` cells with their `rowspan` and `colspan`, and a
//! row in `thead`, or made only of `th`, is a header row. A table inside a
//! cell is read as text of that cell, so the grid is the outermost table's.
//! The caption is not a row: it is given back to become a node of its own.

use crate::table::{CellSpan, TableShape, TableText};

pub(super) struct HtmlTable {
    /// Index in the element stack of its `<table>`.
    pub depth: usize,
    /// Where its start tag begins in the source.
    pub start: usize,
    /// Tables open inside its cells.
    inner: u32,
    rows: TableText,
    cell: Option<Cell>,
    /// Cells in the current row, and whether all of them were `th`.
    row_cells: u32,
    row_all_th: bool,
    in_head: bool,
    caption: Option<String>,
}

struct Cell {
    text: String,
    span: CellSpan,
}

impl HtmlTable {
    pub fn new(depth: usize, start: usize) -> Self {
        HtmlTable {
            depth,
            start,
            inner: 0,
            rows: TableText::new(),
            cell: None,
            row_cells: 0,
            row_all_th: true,
            in_head: false,
            caption: None,
        }
    }

    /// An element starts inside the table: `name` as written, `tag` its
    /// whole start tag (for a cell's spans), `el` what it is to a table.
    pub fn start(&mut self, name: &str, tag: &str, el: Part) {
        if self.inner > 0 {
            if el == Part::Table {
                self.inner += 1;
            }
            self.boundary();
            return;
        }
        match el {
            Part::Table => {
                self.inner += 1;
                self.boundary();
            }
            Part::Row => self.end_row(),
            Part::Cell => {
                self.close_cell();
                self.row_cells += 1;
                self.row_all_th &= name.eq_ignore_ascii_case("th");
                self.cell = Some(Cell {
                    text: String::new(),
                    span: cell_span(tag),
                });
            }
            Part::Caption => self.caption = Some(String::new()),
            Part::Other if name.eq_ignore_ascii_case("thead") => {
                self.end_row();
                self.in_head = true;
            }
            Part::Other if is_row_group(name) => {
                self.end_row();
                self.in_head = false;
            }
            Part::Other => self.boundary(),
        }
    }

    /// An element inside the table ends; a caption ending gives back its
    /// text.
    pub fn end(&mut self, name: &str, el: Part) -> Option<String> {
        if self.inner > 0 {
            if el == Part::Table {
                self.inner -= 1;
            }
            self.boundary();
            return None;
        }
        match el {
            Part::Cell => self.close_cell(),
            Part::Row => self.end_row(),
            Part::Caption => return self.caption.take().filter(|c| !c.trim().is_empty()),
            Part::Other if name.eq_ignore_ascii_case("thead") => {
                self.end_row();
                self.in_head = false;
            }
            _ => self.boundary(),
        }
        None
    }

    /// Text inside the table: the open caption's or cell's. Text outside
    /// any cell is a cell of its own, so none is lost, but whitespace
    /// there is only markup layout.
    pub fn text(&mut self, decoded: &str) {
        if let Some(caption) = &mut self.caption {
            caption.push_str(decoded);
            return;
        }
        if self.cell.is_none() {
            if decoded.trim().is_empty() {
                return;
            }
            self.row_cells += 1;
            self.row_all_th = false;
            self.cell = Some(Cell {
                text: String::new(),
                span: CellSpan::default(),
            });
        }
        if let Some(cell) = &mut self.cell {
            cell.text.push_str(decoded);
        }
    }

    /// A block boundary inside a cell keeps its words apart.
    pub fn boundary(&mut self) {
        if let Some(text) = self
            .caption
            .as_mut()
            .or(self.cell.as_mut().map(|c| &mut c.text))
        {
            text.push(' ');
        }
    }

    pub fn finish(mut self) -> Option<(String, TableShape)> {
        self.end_row();
        self.rows.finish()
    }

    fn close_cell(&mut self) {
        if let Some(cell) = self.cell.take() {
            self.rows.cell(&cell.text, cell.span);
        }
    }

    fn end_row(&mut self) {
        self.close_cell();
        if self.row_cells > 0 {
            self.rows.end_row(self.in_head || self.row_all_th);
        }
        self.row_cells = 0;
        self.row_all_th = true;
    }
}

/// What an element is to a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    Table,
    Row,
    Cell,
    Caption,
    Other,
}

fn is_row_group(name: &str) -> bool {
    name.eq_ignore_ascii_case("tbody") || name.eq_ignore_ascii_case("tfoot")
}

/// A cell's `rowspan` and `colspan` from its start tag; a value that is
/// missing or not a number counts as 1, as browsers read it.
fn cell_span(tag: &str) -> CellSpan {
    CellSpan {
        rows: attribute_number(tag, "rowspan").unwrap_or(1),
        columns: attribute_number(tag, "colspan").unwrap_or(1),
    }
}

/// The leading digits of attribute `name`'s value in start tag `tag`.
fn attribute_number(tag: &str, name: &str) -> Option<u32> {
    let lower = tag.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find(name) {
        let at = from + found;
        from = at + name.len();
        let before_ok = lower[..at]
            .chars()
            .next_back()
            .is_some_and(char::is_whitespace);
        let rest = lower[from..].trim_start();
        let Some(value) = rest.strip_prefix('=') else {
            continue;
        };
        if !before_ok {
            continue;
        }
        let value = value.trim_start().trim_start_matches(['"', '\'']);
        let digits: String = value
            .chars()
            .take_while(char::is_ascii_digit)
            .take(9)
            .collect();
        return digits.parse().ok().filter(|&n| n > 0);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_read_from_the_start_tag() {
        assert_eq!(
            cell_span("<td rowspan=\"3\" colspan='2'>"),
            CellSpan {
                rows: 3,
                columns: 2
            }
        );
        assert_eq!(cell_span("<TD ROWSPAN = 2>").rows, 2);
        assert_eq!(cell_span("<td data-rowspan=\"4\">"), CellSpan::default());
        assert_eq!(
            cell_span("<td rowspan=\"x\" colspan=0>"),
            CellSpan::default()
        );
    }
}
