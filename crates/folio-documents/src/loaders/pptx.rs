//! PPTX: one structure node per slide, in the presentation's order, named
//! by the slide's title placeholder (or "Slide N"); under it one content
//! node per shape or table with text, and the speaker notes under a "Notes"
//! node. The title is `dc:title` of `docProps/core.xml`. Spans are byte
//! ranges in the slide's (or its notes') XML, with `page` the slide number.

use super::package::{targets, Package};
use super::xml::{walk, Node};
use super::LoadError;
use crate::expansion;
use crate::structure_tree::{NodeKind, Span, StructureTree, ROOT};

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
            tree.push(parent, NodeKind::Content, block.text, span);
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
    cells_in_row: u32,
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
                            cells_in_row: 0,
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
                    if let Some(shape) = &mut open {
                        if paragraphs_in_shape > 0 && shape.cells_in_row == 0 {
                            shape.text.push('\n');
                        } else if paragraphs_in_shape > 0 {
                            shape.text.push(' ');
                        }
                        paragraphs_in_shape += 1;
                    }
                }
                (_, true, b"tr") => {
                    if let Some(shape) = &mut open {
                        if !shape.text.is_empty() {
                            shape.text.push('\n');
                        }
                        shape.cells_in_row = 0;
                        paragraphs_in_shape = 0;
                    }
                }
                (_, true, b"tc") => {
                    if let Some(shape) = &mut open {
                        if shape.cells_in_row > 0 {
                            shape.text.push_str(" | ");
                        }
                        shape.cells_in_row += 1;
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
            if DRAWING_NAMESPACES.contains(&ns) && local == b"t" {
                in_text = false;
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
    if let Some(shape) = open {
        shape.text.push_str(text);
    }
}

fn finish_shape(slide: &mut Slide, shape: Open, end: usize, skip: bool) {
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
        });
    }
}
