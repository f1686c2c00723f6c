//! DOCX: paragraphs of `word/document.xml`, with heading styles ("Heading
//! 1"–"Heading 6", by style id or by name in `word/styles.xml`) as structure
//! nodes nested by level, the "Title" style as the document title, and each
//! table as one content node. Spans are byte ranges in `word/document.xml`.

use std::collections::HashMap;
use std::io::{Cursor, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};

use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::NsReader;
use zip::result::ZipError;
use zip::ZipArchive;

use super::LoadError;
use crate::ingest::structure_tree::{HeadingStack, NodeKind, Span, StructureTree};

const DOCUMENT_PART: &str = "word/document.xml";
const STYLES_PART: &str = "word/styles.xml";

/// A part this large is a zip bomb or not a text document.
const MAX_PART_BYTES: u64 = 256 * 1024 * 1024;

/// Legacy `.doc` files and password-protected DOCX are OLE compound files.
const OLE_SIGNATURE: &[u8] = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";

const WORD_NAMESPACES: [&[u8]; 2] = [
    b"http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    b"http://purl.oclc.org/ooxml/wordprocessingml/main",
];
const COMPATIBILITY_NAMESPACE: &[u8] =
    b"http://schemas.openxmlformats.org/markup-compatibility/2006";

/// Base styles followed at most this far when looking for a heading level.
const MAX_STYLE_CHAIN: usize = 10;

pub(super) fn parse(bytes: &[u8], fallback_title: &str) -> Result<StructureTree, LoadError> {
    // The zip reader is the one part fed raw, attacker-shaped bytes; a panic
    // there must not take the batch down.
    catch_unwind(AssertUnwindSafe(|| parse_package(bytes, fallback_title)))
        .unwrap_or_else(|_| Err(corrupt("the DOCX reader failed on this file".to_owned())))
}

fn corrupt(reason: String) -> LoadError {
    LoadError::Corrupt {
        format: "docx",
        reason,
    }
}

fn parse_package(bytes: &[u8], fallback_title: &str) -> Result<StructureTree, LoadError> {
    if bytes.starts_with(OLE_SIGNATURE) {
        return Err(corrupt(
            "an OLE compound file (a legacy .doc, or a password-protected document), not DOCX"
                .to_owned(),
        ));
    }
    let mut archive = ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| corrupt(format!("not a zip archive: {e}")))?;
    // Styles only refine headings; a missing or broken styles part leaves
    // the style ids to go on.
    let styles = read_part(&mut archive, STYLES_PART)
        .ok()
        .flatten()
        .and_then(|xml| read_styles(&xml).ok())
        .unwrap_or_default();
    let document = read_part(&mut archive, DOCUMENT_PART)?
        .ok_or_else(|| corrupt(format!("{DOCUMENT_PART} is missing (not a Word document?)")))?;
    read_document(&document, &styles, fallback_title)
}

fn read_part(
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    name: &str,
) -> Result<Option<String>, LoadError> {
    let file = match archive.by_name(name) {
        Ok(file) => file,
        Err(ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(corrupt(format!("cannot read {name}: {e}"))),
    };
    let mut bytes = Vec::new();
    file.take(MAX_PART_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| corrupt(format!("cannot decompress {name}: {e}")))?;
    if bytes.len() as u64 > MAX_PART_BYTES {
        return Err(corrupt(format!(
            "{name} is larger than {} MiB",
            MAX_PART_BYTES >> 20
        )));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| corrupt(format!("{name} is not UTF-8")))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ns {
    Word,
    Compatibility,
    Other,
}

fn namespace(resolved: &ResolveResult<'_>) -> Ns {
    match resolved {
        ResolveResult::Bound(ns) if WORD_NAMESPACES.contains(&ns.0) => Ns::Word,
        ResolveResult::Bound(ns) if ns.0 == COMPATIBILITY_NAMESPACE => Ns::Compatibility,
        _ => Ns::Other,
    }
}

/// The value of the attribute with local name `local` (`w:val`, …).
fn attribute(element: &BytesStart<'_>, local: &[u8], reader: &NsReader<&[u8]>) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == local)
        .and_then(|a| a.decode_and_unescape_value(reader.decoder()).ok())
        .map(|v| v.into_owned())
}

#[derive(Debug, Default)]
struct Style {
    name: Option<String>,
    based_on: Option<String>,
    outline_level: Option<u32>,
}

#[derive(Debug, Default)]
struct Styles(HashMap<String, Style>);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Title,
    Heading(u32),
    Body,
}

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

fn read_styles(xml: &str) -> Result<Styles, quick_xml::Error> {
    let mut reader = NsReader::from_str(xml);
    let mut styles = Styles::default();
    let mut current: Option<(String, Style)> = None;
    loop {
        let (resolved, event) = reader.read_resolved_event()?;
        let ns = namespace(&resolved);
        match event {
            Event::Start(e) | Event::Empty(e) if ns == Ns::Word => match e.local_name().as_ref() {
                b"style" => {
                    current = attribute(&e, b"styleId", &reader).map(|id| (id, Style::default()));
                }
                b"name" => {
                    if let Some((_, style)) = &mut current {
                        style.name = attribute(&e, b"val", &reader);
                    }
                }
                b"basedOn" => {
                    if let Some((_, style)) = &mut current {
                        style.based_on = attribute(&e, b"val", &reader);
                    }
                }
                b"outlineLvl" => {
                    if let Some((_, style)) = &mut current {
                        style.outline_level =
                            attribute(&e, b"val", &reader).and_then(|v| v.parse().ok());
                    }
                }
                _ => {}
            },
            Event::End(e) if ns == Ns::Word && e.local_name().as_ref() == b"style" => {
                if let Some((id, style)) = current.take() {
                    styles.0.insert(id, style);
                }
            }
            Event::Eof => return Ok(styles),
            _ => {}
        }
    }
}

struct Paragraph {
    start: usize,
    style: Option<String>,
    text: String,
}

struct Table {
    start: usize,
    text: String,
    /// Nesting of w:tbl; a table inside a cell is flattened into this one.
    depth: u32,
    cells_in_row: u32,
    cell_has_text: bool,
}

/// Walks `word/document.xml` once. Paragraphs nested in a paragraph (text
/// boxes) join their outer paragraph, and paragraphs in a table join the
/// table, so each piece of text lands in exactly one node.
struct DocumentReader<'s> {
    styles: &'s Styles,
    tree: StructureTree,
    headings: HeadingStack,
    title_set: bool,
    paragraph: Option<Paragraph>,
    paragraph_depth: u32,
    table: Option<Table>,
    run_depth: u32,
    in_text: bool,
    /// Inside mc:Fallback, whose content repeats mc:Choice for old readers.
    skip_depth: u32,
}

fn read_document(
    xml: &str,
    styles: &Styles,
    fallback_title: &str,
) -> Result<StructureTree, LoadError> {
    let mut reader = NsReader::from_str(xml);
    let mut doc = DocumentReader {
        styles,
        tree: StructureTree::new(fallback_title, Span::default()),
        headings: HeadingStack::default(),
        title_set: false,
        paragraph: None,
        paragraph_depth: 0,
        table: None,
        run_depth: 0,
        in_text: false,
        skip_depth: 0,
    };
    let malformed = |e: quick_xml::Error, at: u64| {
        corrupt(format!("malformed {DOCUMENT_PART} near byte {at}: {e}"))
    };
    let mut depth = 0u32;
    let mut saw_root = false;
    loop {
        let before = position(&reader);
        let (ns, event) = match reader.read_resolved_event() {
            Ok((ns, event)) => (namespace(&ns), event),
            Err(e) => return Err(malformed(e, reader.error_position())),
        };
        match event {
            Event::Start(e) => {
                if !saw_root && e.local_name().as_ref() != b"document" {
                    return Err(corrupt(format!(
                        "{DOCUMENT_PART} is not a WordprocessingML document"
                    )));
                }
                saw_root = true;
                depth += 1;
                doc.open(ns, &e, before, &reader, false);
            }
            Event::Empty(e) => {
                doc.open(ns, &e, before, &reader, true);
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                doc.close(ns, e.local_name().as_ref(), position(&reader));
            }
            Event::Text(t) if doc.collecting() => {
                let text = t
                    .xml10_content()
                    .map_err(|e| malformed(e.into(), reader.buffer_position()))?;
                doc.push_text(&text);
            }
            Event::CData(t) if doc.collecting() => {
                let text = t
                    .decode()
                    .map_err(|e| malformed(e.into(), reader.buffer_position()))?;
                doc.push_text(&text);
            }
            Event::GeneralRef(r) if doc.collecting() => {
                let at = reader.buffer_position();
                if let Some(c) = r.resolve_char_ref().map_err(|e| malformed(e, at))? {
                    doc.push_text(c.encode_utf8(&mut [0; 4]));
                } else {
                    let name = r.decode().map_err(|e| malformed(e.into(), at))?;
                    match quick_xml::escape::resolve_xml_entity(&name) {
                        Some(s) => doc.push_text(s),
                        None => {
                            return Err(corrupt(format!(
                                "unknown entity &{name}; in {DOCUMENT_PART}"
                            )))
                        }
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !saw_root || depth != 0 {
        return Err(corrupt(format!(
            "{DOCUMENT_PART} ends before its elements are closed"
        )));
    }
    Ok(doc.tree)
}

fn position(reader: &NsReader<&[u8]>) -> usize {
    usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX)
}

impl DocumentReader<'_> {
    fn collecting(&self) -> bool {
        self.in_text && self.skip_depth == 0 && self.paragraph.is_some()
    }

    fn push_text(&mut self, s: &str) {
        if let Some(p) = &mut self.paragraph {
            p.text.push_str(s);
        }
    }

    fn open(
        &mut self,
        ns: Ns,
        e: &BytesStart<'_>,
        start: usize,
        reader: &NsReader<&[u8]>,
        empty: bool,
    ) {
        if self.skip_depth > 0 {
            if !empty {
                self.skip_depth += 1;
            }
            return;
        }
        match (ns, e.local_name().as_ref()) {
            (Ns::Compatibility, b"Fallback") if !empty => self.skip_depth = 1,
            (Ns::Word, b"tbl") if !empty && self.paragraph.is_none() => {
                let table = self.table.get_or_insert_with(|| Table {
                    start,
                    text: String::new(),
                    depth: 0,
                    cells_in_row: 0,
                    cell_has_text: false,
                });
                table.depth += 1;
            }
            (Ns::Word, b"tr") => {
                if let (Some(table), None) = (&mut self.table, &self.paragraph) {
                    if !table.text.is_empty() {
                        table.text.push('\n');
                    }
                    table.cells_in_row = 0;
                }
            }
            (Ns::Word, b"tc") => {
                if let (Some(table), None) = (&mut self.table, &self.paragraph) {
                    if table.cells_in_row > 0 {
                        table.text.push_str(" | ");
                    }
                    table.cells_in_row += 1;
                    table.cell_has_text = false;
                }
            }
            (Ns::Word, b"p") if !empty => {
                self.paragraph_depth += 1;
                match &mut self.paragraph {
                    Some(p) => p.text.push('\n'),
                    None => {
                        self.paragraph = Some(Paragraph {
                            start,
                            style: None,
                            text: String::new(),
                        })
                    }
                }
            }
            (Ns::Word, b"pStyle") => {
                if let (Some(p), 1) = (&mut self.paragraph, self.paragraph_depth) {
                    if p.style.is_none() {
                        p.style = attribute(e, b"val", reader);
                    }
                }
            }
            (Ns::Word, b"r") if !empty => self.run_depth += 1,
            (Ns::Word, b"t") if !empty => self.in_text = true,
            (Ns::Word, b"tab") if self.run_depth > 0 => self.push_text("\t"),
            (Ns::Word, b"br" | b"cr") if self.run_depth > 0 => self.push_text("\n"),
            (Ns::Word, b"noBreakHyphen") if self.run_depth > 0 => self.push_text("-"),
            _ => {}
        }
    }

    fn close(&mut self, ns: Ns, local: &[u8], end: usize) {
        if self.skip_depth > 0 {
            self.skip_depth -= 1;
            return;
        }
        match (ns, local) {
            (Ns::Word, b"t") => self.in_text = false,
            (Ns::Word, b"r") => self.run_depth = self.run_depth.saturating_sub(1),
            (Ns::Word, b"p") => {
                self.paragraph_depth = self.paragraph_depth.saturating_sub(1);
                if self.paragraph_depth == 0 {
                    if let Some(p) = self.paragraph.take() {
                        self.finish_paragraph(p, end);
                    }
                }
            }
            (Ns::Word, b"tbl") if self.paragraph.is_none() => {
                if let Some(table) = &mut self.table {
                    table.depth = table.depth.saturating_sub(1);
                    if table.depth == 0 {
                        if let Some(table) = self.table.take() {
                            self.finish_table(table, end);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn finish_paragraph(&mut self, p: Paragraph, end: usize) {
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
        match p
            .style
            .as_deref()
            .map_or(Role::Body, |id| self.styles.role(id))
        {
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

    fn finish_table(&mut self, table: Table, end: usize) {
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
            assert!(matches!(parse(&bytes, "f"), Err(LoadError::Corrupt { .. })));
        }
        let mut zip_header = b"PK\x03\x04".to_vec();
        zip_header.extend_from_slice(&[0; 40]);
        assert!(matches!(
            parse(&zip_header, "f"),
            Err(LoadError::Corrupt { .. })
        ));
        assert!(matches!(
            parse(OLE_SIGNATURE, "f"),
            Err(LoadError::Corrupt { .. })
        ));
    }
}
