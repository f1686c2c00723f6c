//! DOCX: paragraphs of `word/document.xml`, with heading styles ("Heading
//! 1"–"Heading 6", by style id or by name in `word/styles.xml`) as structure
//! nodes nested by level, the "Title" style as the document title, and each
//! table as one content node. Spans are byte ranges in `word/document.xml`.

use std::collections::HashMap;

use super::flow::{Flow, Role};
use super::package::Package;
use super::xml::{walk, Element, Node, Skip};
use super::LoadError;
use crate::structure_tree::StructureTree;
use crate::table::CellSpan;

const DOCUMENT_PART: &str = "word/document.xml";
const STYLES_PART: &str = "word/styles.xml";

const WORD_NAMESPACES: [&[u8]; 2] = [
    b"http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    b"http://purl.oclc.org/ooxml/wordprocessingml/main",
];
const COMPATIBILITY_NAMESPACE: &[u8] =
    b"http://schemas.openxmlformats.org/markup-compatibility/2006";

/// Base styles followed at most this far when looking for a heading level.
const MAX_STYLE_CHAIN: usize = 10;

pub(super) fn parse(
    bytes: &[u8],
    fallback_title: &str,
    budget: u64,
) -> Result<StructureTree, LoadError> {
    let mut package = Package::open(bytes, "docx", budget)?;
    // Styles only refine headings; a missing or broken styles part leaves
    // the style ids to go on. A bomb in it still fails the file.
    let styles = package
        .optional_text(STYLES_PART)?
        .and_then(|xml| read_styles(&xml).ok())
        .unwrap_or_default();
    let document = package.required_text(DOCUMENT_PART, "a Word document")?;
    read_document(&document, &styles, fallback_title)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ns {
    Word,
    Compatibility,
    Other,
}

fn namespace(ns: &[u8]) -> Ns {
    if WORD_NAMESPACES.contains(&ns) {
        Ns::Word
    } else if ns == COMPATIBILITY_NAMESPACE {
        Ns::Compatibility
    } else {
        Ns::Other
    }
}

#[derive(Debug, Default)]
struct Style {
    name: Option<String>,
    based_on: Option<String>,
    outline_level: Option<u32>,
}

#[derive(Debug, Default)]
struct Styles(HashMap<String, Style>);

impl Styles {
    /// What a paragraph with style `id` is: the style's id or name says
    /// "Title" or "Heading N", or its outline level (its own or inherited
    /// through base styles, as Word's navigation pane reads it) makes it a
    /// heading.
    fn role(&self, id: &str) -> Role {
        let style = self.0.get(id);
        let name = style.and_then(|s| s.name.as_deref());
        if is_title(id) || name.is_some_and(is_title) {
            return Role::Title;
        }
        let mut current = id;
        for _ in 0..MAX_STYLE_CHAIN {
            let style = self.0.get(current);
            let level = heading_level(current)
                .or_else(|| {
                    style
                        .and_then(|s| s.name.as_deref())
                        .and_then(heading_level)
                })
                .or_else(|| {
                    style
                        .and_then(|s| s.outline_level)
                        .filter(|l| *l < 6)
                        .map(|l| l + 1)
                });
            if let Some(level) = level {
                return Role::Heading(level);
            }
            match style.and_then(|s| s.based_on.as_deref()) {
                Some(base) => current = base,
                None => break,
            }
        }
        Role::Body
    }
}

fn compact_lowercase(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

fn is_title(style: &str) -> bool {
    compact_lowercase(style) == "title"
}

/// 1–6 for "Heading1", "heading 1", "HEADING 3", …
fn heading_level(style: &str) -> Option<u32> {
    let level: u32 = compact_lowercase(style)
        .strip_prefix("heading")?
        .parse()
        .ok()?;
    (1..=6).contains(&level).then_some(level)
}

fn read_styles(xml: &str) -> Result<Styles, LoadError> {
    let mut styles = Styles::default();
    let mut current: Option<(String, Style)> = None;
    walk(xml, "docx", STYLES_PART, b"styles", |node| match node {
        Node::Open { element, .. } if namespace(element.ns) == Ns::Word => {
            let value = || element.attribute(b"val");
            match (element.local, &mut current) {
                (b"style", _) => {
                    current = element
                        .attribute(b"styleId")
                        .map(|id| (id, Style::default()))
                }
                (b"name", Some((_, style))) => style.name = value(),
                (b"basedOn", Some((_, style))) => style.based_on = value(),
                (b"outlineLvl", Some((_, style))) => {
                    style.outline_level = value().and_then(|v| v.parse().ok())
                }
                _ => {}
            }
        }
        Node::Close {
            ns,
            local: b"style",
            ..
        } if namespace(ns) == Ns::Word => {
            if let Some((id, style)) = current.take() {
                styles.0.insert(id, style);
            }
        }
        _ => {}
    })?;
    Ok(styles)
}

/// Walks `word/document.xml` once, telling the flow where paragraphs,
/// tables, rows and cells begin and end.
struct DocumentReader<'s> {
    styles: &'s Styles,
    flow: Flow,
    /// The style of the open outermost paragraph.
    style: Option<String>,
    run_depth: u32,
    in_text: bool,
    /// Inside mc:Fallback, whose content repeats mc:Choice for old readers.
    skip: Skip,
}

fn read_document(
    xml: &str,
    styles: &Styles,
    fallback_title: &str,
) -> Result<StructureTree, LoadError> {
    let mut doc = DocumentReader {
        styles,
        flow: Flow::new(fallback_title),
        style: None,
        run_depth: 0,
        in_text: false,
        skip: Skip::default(),
    };
    walk(xml, "docx", DOCUMENT_PART, b"document", |node| match node {
        Node::Open { element, empty } => doc.open(&element, empty),
        Node::Close { ns, local, end } => doc.close(namespace(ns), local, end),
        Node::Text(text) if doc.in_text && !doc.skip.active() => doc.flow.push_text(text),
        Node::Text(_) => {}
    })?;
    Ok(doc.flow.finish())
}

impl DocumentReader<'_> {
    fn open(&mut self, element: &Element<'_>, empty: bool) {
        if self.skip.opens(empty) {
            return;
        }
        let flow = &mut self.flow;
        match (namespace(element.ns), element.local) {
            (Ns::Compatibility, b"Fallback") if !empty => self.skip.start(),
            (Ns::Word, b"tbl") if !empty => flow.open_table(element.at),
            (Ns::Word, b"tr") => flow.open_row(),
            (Ns::Word, b"tblHeader") => flow.mark_header_row(),
            (Ns::Word, b"tc") => flow.open_cell(CellSpan::default()),
            (Ns::Word, b"gridSpan") => {
                flow.span_cell_columns(element.span_attribute(b"val"));
            }
            (Ns::Word, b"p") if !empty => {
                flow.open_paragraph(element.at);
                if flow.paragraph_depth() == 1 {
                    self.style = None;
                }
            }
            (Ns::Word, b"pStyle") if flow.paragraph_depth() == 1 && self.style.is_none() => {
                self.style = element.attribute(b"val");
            }
            (Ns::Word, b"r") if !empty => self.run_depth += 1,
            (Ns::Word, b"t") if !empty => self.in_text = true,
            (Ns::Word, b"tab") if self.run_depth > 0 => flow.push_text("\t"),
            (Ns::Word, b"br" | b"cr") if self.run_depth > 0 => flow.push_text("\n"),
            (Ns::Word, b"noBreakHyphen") if self.run_depth > 0 => flow.push_text("-"),
            _ => {}
        }
    }

    fn close(&mut self, ns: Ns, local: &[u8], end: usize) {
        if self.skip.closes() {
            return;
        }
        match (ns, local) {
            (Ns::Word, b"t") => self.in_text = false,
            (Ns::Word, b"r") => self.run_depth = self.run_depth.saturating_sub(1),
            (Ns::Word, b"p") => {
                let (styles, style) = (self.styles, &self.style);
                self.flow.close_paragraph(end, || {
                    style.as_deref().map_or(Role::Body, |id| styles.role(id))
                });
            }
            (Ns::Word, b"tbl") => self.flow.close_table(end),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heading_styles_are_recognised_by_id_and_name() {
        assert_eq!(heading_level("Heading1"), Some(1));
        assert_eq!(heading_level("heading 3"), Some(3));
        assert_eq!(heading_level("HEADING 6"), Some(6));
        assert_eq!(heading_level("Heading7"), None);
        assert_eq!(heading_level("Heading"), None);
        assert_eq!(heading_level("Normal"), None);
        assert!(is_title("Title") && is_title("title") && !is_title("Subtitle"));
    }

    #[test]
    fn styles_resolve_names_outline_levels_and_bases() {
        let xml = r#"<?xml version="1.0"?>
<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
  <w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/></w:style>
  <w:style w:type="paragraph" w:styleId="Chapter"><w:name w:val="Chapter"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>
  <w:style w:type="paragraph" w:styleId="MyChapter"><w:basedOn w:val="Chapter"/></w:style>
  <w:style w:type="paragraph" w:styleId="Titel"><w:name w:val="Title"/></w:style>
  <w:style w:type="paragraph" w:styleId="Loop"><w:basedOn w:val="Loop"/></w:style>
</w:styles>"#;
        let styles = read_styles(xml).unwrap();
        assert_eq!(styles.role("berschrift1"), Role::Heading(1));
        assert_eq!(styles.role("Chapter"), Role::Heading(2));
        assert_eq!(styles.role("MyChapter"), Role::Heading(2));
        assert_eq!(styles.role("Titel"), Role::Title);
        assert_eq!(styles.role("Heading4"), Role::Heading(4));
        assert_eq!(styles.role("Loop"), Role::Body);
        assert_eq!(styles.role("Normal"), Role::Body);
    }

    fn document(body: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><w:body>{body}</w:body></w:document>"#
        )
    }

    #[test]
    fn runs_tabs_breaks_and_entities_make_the_text() {
        let xml = document(
            r#"<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr><w:r><w:t xml:space="preserve">Fish &amp; </w:t></w:r><w:r><w:t>chips</w:t><w:tab/><w:t>&#233;</w:t><w:br/><w:t>next</w:t></w:r><w:r><w:delText>gone</w:delText></w:r></w:p>"#,
        );
        let tree = read_document(&xml, &Styles::default(), "f").unwrap();
        assert_eq!(tree.len(), 2);
        assert_eq!(tree.node(1).text, "Fish & chips\té\nnext");
        let span = tree.node(1).span;
        assert!(
            xml[span.start..span.end].starts_with("<w:p>")
                && xml[span.start..span.end].ends_with("</w:p>")
        );
    }

    #[test]
    fn fallback_content_is_not_duplicated() {
        let xml = document(
            r#"<w:p><w:r><w:t>Before</w:t></w:r><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:txbxContent><w:p><w:r><w:t>In box</w:t></w:r></w:p></w:txbxContent></mc:Choice><mc:Fallback><w:txbxContent><w:p><w:r><w:t>In box</w:t></w:r></w:p></w:txbxContent></mc:Fallback></mc:AlternateContent></w:r></w:p>"#,
        );
        let tree = read_document(&xml, &Styles::default(), "f").unwrap();
        assert_eq!(tree.len(), 2);
        assert_eq!(tree.node(1).text, "Before\nIn box");
    }

    #[test]
    fn malformed_and_foreign_xml_is_corrupt() {
        for xml in [
            document("<w:p><w:r><w:t>open</w:r></w:p>"),
            document("<w:p>").replace("</w:body></w:document>", ""),
            "<html><body>not word</body></html>".to_owned(),
            "just text".to_owned(),
            document("<w:p><w:r><w:t>&nbsp;</w:t></w:r></w:p>"),
        ] {
            assert!(
                matches!(
                    read_document(&xml, &Styles::default(), "f"),
                    Err(LoadError::Corrupt { format: "docx", .. })
                ),
                "{xml}"
            );
        }
    }

    #[test]
    fn random_bytes_are_corrupt_not_a_panic() {
        let mut seed = 0x1234_5678_9abc_def1_u64;
        for len in [0, 1, 4, 22, 100, 1000] {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed as u8
                })
                .collect();
            assert!(matches!(
                parse(&bytes, "f", 1 << 20),
                Err(LoadError::Corrupt { .. })
            ));
        }
        let mut zip_header = b"PK\x03\x04".to_vec();
        zip_header.extend_from_slice(&[0; 40]);
        assert!(matches!(
            parse(&zip_header, "f", 1 << 20),
            Err(LoadError::Corrupt { .. })
        ));
        assert!(matches!(
            parse(b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1", "f", 1 << 20),
            Err(LoadError::Corrupt { .. })
        ));
    }
}
