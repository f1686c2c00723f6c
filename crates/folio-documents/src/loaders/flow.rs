//! The text flow of a word-processor document (DOCX, ODT) as it is read:
//! paragraphs that become the title, headings or content, and tables that
//! become one table node each (`crate::table`). Paragraphs nested in a
//! paragraph (text boxes, notes) join their outer paragraph, and paragraphs
//! in a table join their cell, so each piece of text lands in exactly one
//! node; a table inside a cell is text of that cell. The loaders say which
//! element is a paragraph, a table, a row or a cell, and what a cell spans;
//! this says where its text goes.

use crate::structure_tree::{HeadingStack, NodeKind, Span, StructureTree};
use crate::table::{CellSpan, TableText};

/// What a finished paragraph is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Title,
    Heading(u32),
    Body,
}

struct Paragraph {
    start: usize,
    text: String,
}

struct Table {
    start: usize,
    rows: TableText,
    /// Nesting of tables; a table inside a cell is text of that cell.
    depth: u32,
    /// The open cell's text and span.
    cell: Option<(String, CellSpan)>,
    /// Cells in the current row, and whether it is a header row.
    row_cells: u32,
    row_is_header: bool,
}

impl Table {
    fn close_cell(&mut self) {
        if let Some((text, span)) = self.cell.take() {
            self.rows.cell(&text, span);
        }
    }

    fn end_row(&mut self) {
        self.close_cell();
        if self.row_cells > 0 {
            self.rows.end_row(self.row_is_header);
        }
        self.row_cells = 0;
        self.row_is_header = false;
    }
}

pub(super) struct Flow {
    tree: StructureTree,
    headings: HeadingStack,
    title_set: bool,
    paragraph: Option<Paragraph>,
    paragraph_depth: u32,
    table: Option<Table>,
}

impl Flow {
    pub fn new(fallback_title: &str) -> Self {
        Flow {
            tree: StructureTree::new(fallback_title, Span::default()),
            headings: HeadingStack::default(),
            title_set: false,
            paragraph: None,
            paragraph_depth: 0,
            table: None,
        }
    }

    /// How many paragraphs are open: 1 inside an ordinary paragraph.
    pub fn paragraph_depth(&self) -> u32 {
        self.paragraph_depth
    }

    pub fn push_text(&mut self, s: &str) {
        if let Some(p) = &mut self.paragraph {
            p.text.push_str(s);
        }
    }

    pub fn open_paragraph(&mut self, at: usize) {
        self.paragraph_depth += 1;
        match &mut self.paragraph {
            Some(p) => p.text.push('\n'),
            None => {
                self.paragraph = Some(Paragraph {
                    start: at,
                    text: String::new(),
                })
            }
        }
    }

    /// Closes a paragraph; the outermost one is finished as `role` says.
    pub fn close_paragraph(&mut self, end: usize, role: impl FnOnce() -> Role) {
        self.paragraph_depth = self.paragraph_depth.saturating_sub(1);
        if self.paragraph_depth == 0 {
            if let Some(p) = self.paragraph.take() {
                self.finish_paragraph(p, end, role());
            }
        }
    }

    pub fn open_table(&mut self, at: usize) {
        if self.paragraph.is_some() {
            return;
        }
        let table = self.table.get_or_insert_with(|| Table {
            start: at,
            rows: TableText::new(),
            depth: 0,
            cell: None,
            row_cells: 0,
            row_is_header: false,
        });
        table.depth += 1;
    }

    /// The outermost table, when what is read now belongs to its grid (not
    /// to a paragraph, nor to a table inside one of its cells).
    fn grid(&mut self) -> Option<&mut Table> {
        match (&mut self.table, &self.paragraph) {
            (Some(table), None) if table.depth == 1 => Some(table),
            _ => None,
        }
    }

    pub fn open_row(&mut self) {
        if let Some(table) = self.grid() {
            table.end_row();
        }
    }

    /// The row being read is a header row (repeated on every page).
    pub fn mark_header_row(&mut self) {
        if let Some(table) = self.grid() {
            table.row_is_header = true;
        }
    }

    pub fn open_cell(&mut self, span: CellSpan) {
        if let Some(table) = self.grid() {
            table.close_cell();
            table.row_cells += 1;
            table.cell = Some((String::new(), span));
        }
    }

    /// The open cell spans `columns` columns (known only after it opens).
    pub fn span_cell_columns(&mut self, columns: u32) {
        if let Some((_, span)) = self.grid().and_then(|t| t.cell.as_mut()) {
            span.columns = columns;
        }
    }

    pub fn close_table(&mut self, end: usize) {
        if self.paragraph.is_some() {
            return;
        }
        if let Some(table) = &mut self.table {
            table.depth = table.depth.saturating_sub(1);
            if table.depth == 0 {
                if let Some(mut table) = self.table.take() {
                    table.end_row();
                    if let Some((text, shape)) = table.rows.finish() {
                        let span = Span::bytes(table.start, end);
                        self.tree
                            .push_table(self.headings.parent(), text, shape, span);
                    }
                }
            }
        }
    }

    pub fn finish(self) -> StructureTree {
        self.tree
    }

    fn finish_paragraph(&mut self, p: Paragraph, end: usize, role: Role) {
        let text = p.text.trim();
        if text.is_empty() {
            return;
        }
        if let Some(table) = &mut self.table {
            // Text outside any cell is a cell of its own, so none is lost.
            let (cell, _) = table.cell.get_or_insert_with(|| {
                table.row_cells += 1;
                (String::new(), CellSpan::default())
            });
            if !cell.is_empty() {
                cell.push(' ');
            }
            cell.push_str(text);
            return;
        }
        let span = Span::bytes(p.start, end);
        match role {
            Role::Title if !self.title_set => {
                self.tree.set_title(text, span);
                self.title_set = true;
            }
            Role::Heading(level) => {
                self.headings.push(&mut self.tree, level, text, span);
            }
            _ => {
                self.tree
                    .push(self.headings.parent(), NodeKind::Content, text, span);
            }
        }
    }
}
