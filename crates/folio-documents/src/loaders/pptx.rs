//! PPTX: one structure node per slide, in the presentation's order, named
//! by the slide's title placeholder (or "Slide N"); under it one content
//! node per shape with text and one table node per table (its first row the
//! header, merged cells read as [`TableText`] reads spans), and the speaker
//! notes under a "Notes" node. The title is `dc:title` of
//! `docProps/core.xml`. Spans are byte ranges in the slide's (or its
//! notes') XML, with `page` the slide number.

use super::package::{targets, Package};
use super::xml::{walk, Element, Node};
use super::LoadError;
use crate::expansion;
use crate::structure_tree::{NodeKind, Span, StructureTree, ROOT};
use crate::table::{CellSpan, TableShape, TableText};

const PRESENTATION_PART: &str = "ppt/presentation.xml";
const CORE_PART: &str = "docProps/core.xml";

const PRESENTATION_NAMESPACES: [&[u8]; 2] = [
    b"http://schemas.openxmlformats.org/presentationml/2006/main",
    b"http://purl.oclc.org/ooxml/presentationml/main",
];
const DRAWING_NAMESPACES: [&[u8]; 2] = [
    b"http://schemas.openxmlformats.org/drawingml/2006/main",
    b"http://purl.oclc.org/ooxml/drawingml/main",
];

pub(super) fn parse(
    bytes: &[u8],
    fallback_title: &str,
    budget: u64,
) -> Result<StructureTree, LoadError> {
    let mut package = Package::open(bytes, "pptx", budget)?;
    let presentation = package.required_text(PRESENTATION_PART, "a PowerPoint presentation")?;
    let order = slide_order(&presentation)?;
    let relationships = package.relationships(PRESENTATION_PART)?;
    let slides = targets(&relationships, "slide");
    let title = package.dublin_core_title(CORE_PART, b"coreProperties")?;
    let mut tree = StructureTree::new(title.as_deref().unwrap_or(fallback_title), Span::default());
    for (index, id) in order.iter().enumerate() {
        if expansion::over() {
            break;
        }
        let Some(part) = slides.get(id.as_str()).map(|&t| t.to_owned()) else {
            continue;
        };
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let Some(xml) = package.text(&part)? else {
            continue;
        };
        let slide = read_slide(&xml, &part, b"sld")?;
        let name = slide
            .title
            .clone()
            .unwrap_or_else(|| format!("Slide {number}"));
        let node = tree.push(ROOT, NodeKind::Structure, name, slide.title_span(number));
        slide.push_blocks(&mut tree, node, number);
        let notes_part = package
            .relationships(&part)?
            .into_iter()
            .find(|r| r.is("notesSlide"))
            .map(|r| r.target);
        if let Some(notes_part) = notes_part {
            let notes = match package.text(&notes_part)? {
                Some(xml) => read_slide(&xml, &notes_part, b"notes")?,
                None => continue,
            };
            if !notes.blocks.is_empty() {
                let heading = tree.push(
                    node,
                    NodeKind::Structure,
                    "Notes",
                    Span::on_page(number, 0, 0),
                );
                notes.push_blocks(&mut tree, heading, number);
            }
        }
    }
    if tree.len() == 1 {
        return Err(LoadError::Empty {
            reason: "the presentation has no slides with text".to_owned(),
        });
    }
    Ok(tree)
}

/// The relationship ids of the slides, in the order the presentation shows
/// them.
fn slide_order(xml: &str) -> Result<Vec<String>, LoadError> {
    let mut ids = Vec::new();
    walk(xml, "pptx", PRESENTATION_PART, b"presentation", |node| {
        if let Node::Open { element, .. } = node {
            if PRESENTATION_NAMESPACES.contains(&element.ns) && element.local == b"sldId" {
                ids.extend(element.prefixed_attribute(b"id"));
            }
        }
    })?;
    Ok(ids)
}

/// A block of text: a shape's paragraphs or a table's rows.
struct Block {
    text: String,
    span: (usize, usize),
    table: Option<TableShape>,
}

#[derive(Default)]
struct Slide {
    title: Option<String>,
    title_span: (usize, usize),
    blocks: Vec<Block>,
}

impl Slide {
    fn title_span(&self, number: u32) -> Span {
        Span::on_page(number, self.title_span.0, self.title_span.1)
    }

    fn push_blocks(self, tree: &mut StructureTree, parent: usize, number: u32) {
        for block in self.blocks {
            let span = Span::on_page(number, block.span.0, block.span.1);
            match block.table {
                Some(shape) => tree.push_table(parent, block.text, shape, span),
                None => tree.push(parent, NodeKind::Content, block.text, span),
            };
        }
    }
}

/// The shape or table being read: where it starts, its text so far, and
/// whether its placeholder makes it the slide's title.
struct Open {
    start: usize,
    text: String,
    title: bool,
    /// Nesting of shapes and frames inside it (a group is not read as one).
    depth: u32,
    /// The table a graphic frame holds, as it is read.
    table: Option<TableRead>,
}

struct TableRead {
    rows: TableText,
    /// The cell being read; `None` between cells and in a cell that a
    /// merged neighbour covers (`hMerge`, `vMerge`), which is not written.
    cell: Option<(String, CellSpan)>,
}

impl Open {
    /// Where text read now goes: the open table cell, or the shape.
    fn text_sink(&mut self) -> Option<&mut String> {
        match &mut self.table {
            Some(table) => table.cell.as_mut().map(|(text, _)| text),
            None => Some(&mut self.text),
        }
    }
}

/// Whether a merged neighbour covers this cell.
fn covered(element: &Element<'_>) -> bool {
    [b"hMerge".as_slice(), b"vMerge"]
        .iter()
        .any(|name| matches!(element.attribute(name).as_deref(), Some("1" | "true")))
}

/// Reads a slide (`root` "sld") or a notes page ("notes"). On a notes page
/// only the body placeholder is text: the rest repeats the slide image or
/// numbers it.
fn read_slide(xml: &str, part: &str, root: &[u8]) -> Result<Slide, LoadError> {
    let notes = root == b"notes";
    let mut slide = Slide::default();
    let mut open: Option<Open> = None;
    let mut skip = false;
    let mut in_text = false;
    let mut paragraphs_in_shape = 0u32;
    walk(xml, "pptx", part, root, |node| match node {
        Node::Open { element, empty } => {
            let drawing = DRAWING_NAMESPACES.contains(&element.ns);
            let presentation = PRESENTATION_NAMESPACES.contains(&element.ns);
            match (presentation, drawing, element.local) {
                (true, _, b"sp" | b"graphicFrame") if !empty => match &mut open {
                    Some(shape) => shape.depth += 1,
                    None => {
                        open = Some(Open {
                            start: element.at,
                            text: String::new(),
                            title: false,
                            depth: 1,
                            table: None,
                        });
                        skip = notes;
                        paragraphs_in_shape = 0;
                    }
                },
                (true, _, b"ph") => {
                    if let Some(shape) = &mut open {
                        let kind = element.attribute(b"type");
                        shape.title = matches!(kind.as_deref(), Some("title" | "ctrTitle"));
                        skip = notes && kind.as_deref() != Some("body");
                    }
                }
                (_, true, b"p") if !empty => {
                    // A cell's paragraphs join on one line (its row's).
                    let gap = if open.as_ref().is_some_and(|o| o.table.is_some()) {
                        " "
                    } else {
                        "\n"
                    };
                    if paragraphs_in_shape > 0 {
                        push(&mut open, gap);
                    }
                    paragraphs_in_shape += 1;
                }
                (_, true, b"tbl") if !empty => {
                    if let Some(shape) = &mut open {
                        shape.table = Some(TableRead {
                            rows: TableText::new(),
                            cell: None,
                        });
                    }
                }
                (_, true, b"tc") => {
                    if let Some(table) = open.as_mut().and_then(|o| o.table.as_mut()) {
                        table.cell = None;
                        if !covered(&element) {
                            let span = CellSpan {
                                rows: element.span_attribute(b"rowSpan"),
                                columns: element.span_attribute(b"gridSpan"),
                            };
                            match empty {
                                true => table.rows.cell("", span),
                                false => table.cell = Some((String::new(), span)),
                            }
                        }
                        paragraphs_in_shape = 0;
                    }
                }
                (_, true, b"t") if !empty => in_text = true,
                (_, true, b"br") => push(&mut open, "\n"),
                _ => {}
            }
        }
        Node::Close { ns, local, end } => {
            let presentation = PRESENTATION_NAMESPACES.contains(&ns);
            let drawing = DRAWING_NAMESPACES.contains(&ns);
            if drawing && local == b"t" {
                in_text = false;
            }
            if let Some(table) = open.as_mut().and_then(|o| o.table.as_mut()) {
                match (drawing, local) {
                    (true, b"tc") => {
                        if let Some((text, span)) = table.cell.take() {
                            table.rows.cell(&text, span);
                        }
                    }
                    (true, b"tr") => table.rows.end_row(false),
                    _ => {}
                }
            }
            if presentation && matches!(local, b"sp" | b"graphicFrame") {
                if let Some(shape) = &mut open {
                    shape.depth -= 1;
                    if shape.depth == 0 {
                        if let Some(shape) = open.take() {
                            finish_shape(&mut slide, shape, end, skip);
                        }
                    }
                }
            }
        }
        Node::Text(text) if in_text && !skip => push(&mut open, text),
        Node::Text(_) => {}
    })?;
    Ok(slide)
}

fn push(open: &mut Option<Open>, text: &str) {
    if let Some(sink) = open.as_mut().and_then(Open::text_sink) {
        sink.push_str(text);
    }
}

fn finish_shape(slide: &mut Slide, shape: Open, end: usize, skip: bool) {
    if let Some(table) = shape.table {
        if let Some((text, shape_of_table)) = table.rows.finish().filter(|_| !skip) {
            slide.blocks.push(Block {
                text,
                span: (shape.start, end),
                table: Some(shape_of_table),
            });
        }
        return;
    }
    let text = shape.text.trim();
    if text.is_empty() || skip {
        return;
    }
    if shape.title && slide.title.is_none() {
        slide.title = Some(text.split_whitespace().collect::<Vec<_>>().join(" "));
        slide.title_span = (shape.start, end);
    } else {
        slide.blocks.push(Block {
            text: text.to_owned(),
            span: (shape.start, end),
            table: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMESPACES: &str = r#"xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main""#;

    fn cell(text: &str, attributes: &str) -> String {
        format!(
            "<a:tc{attributes}><a:txBody><a:p><a:r><a:t>{text}</a:t></a:r></a:p></a:txBody></a:tc>"
        )
    }

    #[test]
    fn a_table_is_a_table_node_with_its_merged_cells_read_as_spans() {
        let rows = [
            [cell("Fruit", ""), cell("Stock", ""), cell("Where", "")].concat(),
            // A cell over two columns, and the one it covers.
            [
                cell("Quince", r#" rowSpan="2""#),
                cell("12 crates in bay 3", r#" gridSpan="2""#),
                cell("", r#" hMerge="1""#),
            ]
            .concat(),
            // The quince cell covers this row's first column.
            [
                cell("", r#" vMerge="1""#),
                cell("4 | 5", ""),
                cell("bay 9", ""),
            ]
            .concat(),
        ];
        let table: String = rows.iter().map(|r| format!("<a:tr>{r}</a:tr>")).collect();
        let xml = format!(
            r#"<p:sld {NAMESPACES}><p:cSld><p:spTree><p:graphicFrame><a:graphic><a:graphicData><a:tbl>{table}</a:tbl></a:graphicData></a:graphic></p:graphicFrame></p:spTree></p:cSld></p:sld>"#
        );
        let slide = read_slide(&xml, "ppt/slides/slide1.xml", b"sld").unwrap();
        assert_eq!(slide.blocks.len(), 1);
        let block = &slide.blocks[0];
        assert_eq!(
            block.text,
            "Fruit | Stock | Where\nQuince | 12 crates in bay 3\nQuince | 4 \\| 5 | bay 9"
        );
        assert_eq!(block.table, Some(TableShape::headed(1)));
    }
}
