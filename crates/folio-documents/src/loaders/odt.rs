//! ODT (OpenDocument text): paragraphs of `content.xml`, with `text:h`
//! headings nested by their outline level, the "Title" paragraph style (or
//! else `dc:title` in `meta.xml`) as the document title, and each table as
//! one content node. Spans are byte ranges in `content.xml`.

use super::flow::{Flow, Role};
use super::package::Package;
use super::xml::{walk, Element, Node, Skip};
use super::LoadError;
use crate::expansion;
use crate::structure_tree::StructureTree;
use crate::table::CellSpan;

const CONTENT_PART: &str = "content.xml";
const META_PART: &str = "meta.xml";

const TEXT_NAMESPACE: &[u8] = b"urn:oasis:names:tc:opendocument:xmlns:text:1.0";
const TABLE_NAMESPACE: &[u8] = b"urn:oasis:names:tc:opendocument:xmlns:table:1.0";
const OFFICE_NAMESPACE: &[u8] = b"urn:oasis:names:tc:opendocument:xmlns:office:1.0";

/// `text:s` repeats a space this many times at most; the count is the
/// file's to choose.
const MAX_SPACES: usize = 64;

pub(super) fn parse(
    bytes: &[u8],
    fallback_title: &str,
    budget: u64,
) -> Result<StructureTree, LoadError> {
    let mut package = Package::open(bytes, "odt", budget)?;
    let content = package.required_text(CONTENT_PART, "an OpenDocument text")?;
    let mut tree = read_content(&content, fallback_title)?;
    if tree.title() == fallback_title {
        if let Some(title) = package.dublin_core_title(META_PART, b"document-meta")? {
            tree.set_title(title, tree.node(0).span);
        }
    }
    Ok(tree)
}

/// Walks `content.xml` once. Annotations (comments) and tracked deletions
/// are skipped; notes and text boxes join the paragraph they sit in.
struct ContentReader {
    flow: Flow,
    /// The open outermost paragraph is a `text:h` of this level, or a
    /// `text:p` styled "Title".
    role: Role,
    skip: Skip,
    /// Inside `table:table-header-rows`: its rows are the table's header.
    in_header_rows: bool,
}

fn read_content(xml: &str, fallback_title: &str) -> Result<StructureTree, LoadError> {
    let mut reader = ContentReader {
        flow: Flow::new(fallback_title),
        role: Role::Body,
        skip: Skip::default(),
        in_header_rows: false,
    };
    walk(
        xml,
        "odt",
        CONTENT_PART,
        b"document-content",
        |node| match node {
            Node::Open { element, empty } => reader.open(&element, empty),
            Node::Close { ns, local, end } => reader.close(ns, local, end),
            Node::Text(text) if !reader.skip.active() => reader.flow.push_text(text),
            Node::Text(_) => {}
        },
    )?;
    Ok(reader.flow.finish())
}

impl ContentReader {
    fn open(&mut self, element: &Element<'_>, empty: bool) {
        if self.skip.opens(empty) {
            return;
        }
        let flow = &mut self.flow;
        match (element.ns, element.local) {
            (OFFICE_NAMESPACE, b"annotation") | (TEXT_NAMESPACE, b"tracked-changes") if !empty => {
                self.skip.start()
            }
            (TEXT_NAMESPACE, b"p" | b"h") if !empty => {
                flow.open_paragraph(element.at);
                if flow.paragraph_depth() == 1 {
                    self.role = paragraph_role(element);
                }
            }
            (TEXT_NAMESPACE, b"s") => {
                let count = element.attribute(b"c").and_then(|c| c.parse().ok());
                let spaces = count.unwrap_or(1).min(MAX_SPACES);
                // Text the XML does not spell out, gathered into one
                // paragraph before its node counts it (crate::expansion).
                if expansion::charge(spaces as u64).is_ok() {
                    flow.push_text(&" ".repeat(spaces));
                }
            }
            (TEXT_NAMESPACE, b"tab") => flow.push_text("\t"),
            (TEXT_NAMESPACE, b"line-break") => flow.push_text("\n"),
            (TABLE_NAMESPACE, b"table") if !empty => flow.open_table(element.at),
            (TABLE_NAMESPACE, b"table-header-rows") if !empty => self.in_header_rows = true,
            (TABLE_NAMESPACE, b"table-row") => {
                flow.open_row();
                if self.in_header_rows {
                    flow.mark_header_row();
                }
            }
            // A cell states what it spans; the cells it covers are written
            // as `table:covered-table-cell`, which are left out here.
            (TABLE_NAMESPACE, b"table-cell") => flow.open_cell(CellSpan {
                rows: element.span_attribute(b"number-rows-spanned"),
                columns: element.span_attribute(b"number-columns-spanned"),
            }),
            _ => {}
        }
    }

    fn close(&mut self, ns: &[u8], local: &[u8], end: usize) {
        if self.skip.closes() {
            return;
        }
        match (ns, local) {
            (TEXT_NAMESPACE, b"p" | b"h") => {
                let role = self.role;
                self.flow.close_paragraph(end, || role);
            }
            (TABLE_NAMESPACE, b"table") => self.flow.close_table(end),
            (TABLE_NAMESPACE, b"table-header-rows") => self.in_header_rows = false,
            _ => {}
        }
    }
}

/// `text:h` is a heading of its `text:outline-level` (1 when unsaid, as
/// the format defines); a paragraph styled "Title" is the title.
fn paragraph_role(element: &Element<'_>) -> Role {
    if element.local == b"h" {
        let level = element
            .attribute(b"outline-level")
            .and_then(|l| l.parse::<u32>().ok())
            .unwrap_or(1);
        return Role::Heading(level.clamp(1, 10));
    }
    match element.attribute(b"style-name") {
        Some(style) if style.eq_ignore_ascii_case("title") => Role::Title,
        _ => Role::Body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structure_tree::NodeKind;

    fn content(body: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><office:body><office:text>{body}</office:text></office:body></office:document-content>"#
        )
    }

    fn shape(tree: &StructureTree) -> Vec<(u32, NodeKind, &str)> {
        tree.nodes()
            .iter()
            .map(|n| (n.depth, n.kind, n.text.as_str()))
            .collect()
    }

    #[test]
    fn headings_nest_by_outline_level_and_spaces_tabs_breaks_make_the_text() {
        let xml = content(
            r#"<text:p text:style-name="Title">Harbour notes</text:p>
<text:h text:outline-level="1">Tides</text:h>
<text:p>High<text:s text:c="3"/>water<text:tab/>at <text:span>noon</text:span><text:line-break/>daily.</text:p>
<text:h text:outline-level="3">Spring tides</text:h>
<text:p>Larger range.<office:annotation><text:p>a reviewer's comment</text:p></office:annotation></text:p>
<text:h>Ships</text:h>
<text:list><text:list-item><text:p>Ferry<text:note><text:note-body><text:p>runs hourly</text:p></text:note-body></text:note></text:p></text:list-item></text:list>"#,
        );
        let tree = read_content(&xml, "fallback").unwrap();
        assert_eq!(
            shape(&tree),
            [
                (0, NodeKind::Structure, "Harbour notes"),
                (1, NodeKind::Structure, "Tides"),
                (2, NodeKind::Content, "High   water\tat noon\ndaily."),
                (2, NodeKind::Structure, "Spring tides"),
                (3, NodeKind::Content, "Larger range."),
                (1, NodeKind::Structure, "Ships"),
                (2, NodeKind::Content, "Ferry\nruns hourly"),
            ]
        );
        let span = tree.node(2).span;
        assert!(xml[span.start..span.end].starts_with("<text:p>High"));
        assert!(xml[span.start..span.end].ends_with("daily.</text:p>"));
    }

    #[test]
    fn a_table_is_one_content_node() {
        let xml = content(
            r#"<table:table><table:table-row><table:table-cell><text:p>Port</text:p></table:table-cell><table:table-cell><text:p>Depth</text:p></table:table-cell></table:table-row><table:table-row><table:table-cell><text:p>Dover</text:p></table:table-cell><table:table-cell><text:p>12 m</text:p></table:table-cell></table:table-row></table:table><text:p>After.</text:p>"#,
        );
        let tree = read_content(&xml, "f").unwrap();
        assert_eq!(tree.node(1).text, "Port | Depth\nDover | 12 m");
        assert_eq!(tree.node(2).text, "After.");
    }

    #[test]
    fn header_rows_and_spanned_cells_keep_the_grid() {
        let cell = |text: &str, attrs: &str| {
            format!("<table:table-cell {attrs}><text:p>{text}</text:p></table:table-cell>")
        };
        let row =
            |cells: &[String]| format!("<table:table-row>{}</table:table-row>", cells.concat());
        let covered = "<table:covered-table-cell/>".to_owned();
        let xml = content(&format!(
            "<table:table><table:table-header-rows>{}</table:table-header-rows>{}{}{}</table:table>",
            row(&[cell("Zone", ""), cell("Port", ""), cell("Depth", "")]),
            row(&[cell("North", r#"table:number-rows-spanned="2""#), cell("Leith", ""), cell("9 m", "")]),
            row(&[covered.clone(), cell("Tyne", ""), cell("11 m", "")]),
            row(&[cell("Closed for works", r#"table:number-columns-spanned="2""#), covered, cell("-", "")]),
        ));
        let tree = read_content(&xml, "f").unwrap();
        assert_eq!(
            tree.node(1).text,
            "Zone | Port | Depth\nNorth | Leith | 9 m\nNorth | Tyne | 11 m\nClosed for works |  | -"
        );
        assert_eq!(tree.node(1).table.map(|t| t.header_rows), Some(1));
    }

    #[test]
    fn foreign_and_malformed_content_is_corrupt() {
        for xml in [
            "<html/>".to_owned(),
            content("<text:p>open"),
            content("<text:p>&nbsp;</text:p>"),
        ] {
            assert!(
                matches!(
                    read_content(&xml, "f"),
                    Err(LoadError::Corrupt { format: "odt", .. })
                ),
                "{xml}"
            );
        }
    }
}
