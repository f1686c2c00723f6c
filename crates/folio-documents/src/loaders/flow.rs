//! The text flow of a word-processor document (DOCX, ODT) as it is read:
//! paragraphs that become the title, headings or content, and tables that
//! become one content node each. Paragraphs nested in a paragraph (text
//! boxes, notes) join their outer paragraph, and paragraphs in a table join
//! the table, so each piece of text lands in exactly one node. The loaders
//! say which element is a paragraph, a table, a row or a cell; this says
//! where its text goes.

use crate::structure_tree::{HeadingStack, NodeKind, Span, StructureTree};

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
    text: String,
    /// Nesting of tables; a table inside a cell is flattened into this one.
    depth: u32,
    cells_in_row: u32,
    cell_has_text: bool,
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
            text: String::new(),
            depth: 0,
            cells_in_row: 0,
            cell_has_text: false,
        });
        table.depth += 1;
    }

    pub fn open_row(&mut self) {
        if let (Some(table), None) = (&mut self.table, &self.paragraph) {
            if !table.text.is_empty() {
                table.text.push('\n');
            }
            table.cells_in_row = 0;
        }
    }

    pub fn open_cell(&mut self) {
        if let (Some(table), None) = (&mut self.table, &self.paragraph) {
            if table.cells_in_row > 0 {
                table.text.push_str(" | ");
            }
            table.cells_in_row += 1;
            table.cell_has_text = false;
        }
    }

    pub fn close_table(&mut self, end: usize) {
        if self.paragraph.is_some() {
            return;
        }
        if let Some(table) = &mut self.table {
            table.depth = table.depth.saturating_sub(1);
            if table.depth == 0 {
                if let Some(table) = self.table.take() {
                    let text = table.text.trim();
                    if !text.is_empty() {
                        self.tree.push(
                            self.headings.parent(),
                            NodeKind::Content,
                            text,
                            Span::bytes(table.start, end),
                        );
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
            if table.cell_has_text {
                table.text.push(' ');
            }
            table.text.push_str(text);
            table.cell_has_text = true;
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
