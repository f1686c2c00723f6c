//! Builders for binary test documents (PDF, DOCX, bare zips), so integration
//! tests can make exactly the file they need instead of carrying binaries.
#![allow(dead_code)]

use std::io::{Cursor, Write};

use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Bookmark, Document, Object, ObjectId, Stream};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// Font size and line advance of PDF text. The advance stays under
/// pdf-extract's paragraph threshold (1.5 × font size) so the lines of a
/// paragraph come out on consecutive lines; a blank line in `pages` adds one
/// more advance, which comes out as a blank line.
const FONT_SIZE: i64 = 12;
const LINE_ADVANCE: i64 = 14;
const TOP: i64 = 770;

/// A real PDF: one page per entry of `pages` in standard Helvetica, one text
/// line per line of the page text (blank lines leave a gap, so blank-line
/// separated paragraphs are recoverable), an Info /Title when `title` is
/// given, and an outline from `outline` entries `(level starting at 1,
/// title, 1-based page)`, each nesting under the nearest shallower entry
/// before it.
pub fn pdf_bytes(title: Option<&str>, pages: &[&str], outline: &[(u8, &str, u32)]) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let resources_id = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font_id } });

    let mut page_ids: Vec<ObjectId> = Vec::new();
    for text in pages {
        let mut operations = vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), FONT_SIZE.into()]),
        ];
        let mut y = TOP;
        for line in text.lines() {
            if !line.trim().is_empty() {
                operations.push(Operation::new(
                    "Tm",
                    vec![1.into(), 0.into(), 0.into(), 1.into(), 72.into(), y.into()],
                ));
                operations.push(Operation::new(
                    "Tj",
                    vec![Object::string_literal(win_ansi(line))],
                ));
            }
            y -= LINE_ADVANCE;
        }
        operations.push(Operation::new("ET", vec![]));
        let content = Content { operations }
            .encode()
            .expect("encode page content");
        let content_id = doc.add_object(Stream::new(dictionary! {}, content));
        page_ids.push(doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content_id,
        }));
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => page_ids.iter().map(|&id| id.into()).collect::<Vec<Object>>(),
            "Count" => i64::try_from(page_ids.len()).expect("page count"),
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );

    let mut open: Vec<(u8, u32)> = Vec::new();
    for &(level, entry_title, page) in outline {
        while open.last().is_some_and(|&(l, _)| l >= level) {
            open.pop();
        }
        let page_id = page_ids[usize::try_from(page).expect("page index") - 1];
        let bookmark = Bookmark::new(entry_title.to_owned(), [0.0, 0.0, 0.0], 0, page_id);
        let id = doc.add_bookmark(bookmark, open.last().map(|&(_, id)| id));
        open.push((level, id));
    }
    let mut catalog = dictionary! { "Type" => "Catalog", "Pages" => pages_id };
    if let Some(outline_id) = doc.build_outline() {
        catalog.set("Outlines", outline_id);
    }
    let catalog_id = doc.add_object(catalog);
    doc.trailer.set("Root", catalog_id);
    if let Some(title) = title {
        let info_id = doc.add_object(dictionary! { "Title" => lopdf::text_string(title) });
        doc.trailer.set("Info", info_id);
    }

    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).expect("write PDF");
    bytes
}

/// WinAnsiEncoding agrees with Latin-1 on the characters tests use; others
/// become '?'.
fn win_ansi(line: &str) -> Vec<u8> {
    line.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

const WORD_NS: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

/// A minimal valid DOCX with one paragraph per entry: `(style id, text)`,
/// style ids such as "Title" or "Heading1" (all defined in its styles part).
pub fn docx_bytes(paragraphs: &[(Option<&str>, &str)]) -> Vec<u8> {
    let body: String = paragraphs
        .iter()
        .map(|&(style, text)| docx_paragraph(style, text))
        .collect();
    docx_from_body(&body)
}

/// One `w:p` element with an optional paragraph style.
pub fn docx_paragraph(style: Option<&str>, text: &str) -> String {
    let properties = style
        .map(|s| format!(r#"<w:pPr><w:pStyle w:val="{}"/></w:pPr>"#, xml_escape(s)))
        .unwrap_or_default();
    format!(
        r#"<w:p>{properties}<w:r><w:t xml:space="preserve">{}</w:t></w:r></w:p>"#,
        xml_escape(text)
    )
}

/// One `w:tbl` element; each cell holds one paragraph per line of its text.
pub fn docx_table(rows: &[&[&str]]) -> String {
    let mut xml = String::from("<w:tbl><w:tblPr/>");
    for row in rows {
        xml.push_str("<w:tr>");
        for cell in *row {
            xml.push_str("<w:tc><w:tcPr/>");
            for line in cell.lines() {
                xml.push_str(&docx_paragraph(None, line));
            }
            xml.push_str("</w:tc>");
        }
        xml.push_str("</w:tr>");
    }
    xml.push_str("</w:tbl>");
    xml
}

/// The `word/document.xml` holding `body_xml` inside `w:body`.
pub fn docx_document_xml(body_xml: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="{WORD_NS}"><w:body>{body_xml}<w:sectPr/></w:body></w:document>"#
    )
}

/// A DOCX package around `body_xml` (raw WordprocessingML body content).
pub fn docx_from_body(body_xml: &str) -> Vec<u8> {
    let document = docx_document_xml(body_xml);
    zip_bytes(&[
        ("[Content_Types].xml", CONTENT_TYPES.as_bytes()),
        ("_rels/.rels", ROOT_RELS.as_bytes()),
        ("word/document.xml", document.as_bytes()),
        ("word/styles.xml", styles_xml().as_bytes()),
    ])
}

/// A zip archive of `(path, contents)` entries, deflated.
pub fn zip_bytes(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    for (name, contents) in files {
        writer.start_file(*name, options).expect("start zip entry");
        writer.write_all(contents).expect("write zip entry");
    }
    writer.finish().expect("finish zip").into_inner()
}

const CONTENT_TYPES: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>
</Types>"#;

const ROOT_RELS: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>
</Relationships>"#;

fn styles_xml() -> String {
    let mut styles = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="{WORD_NS}">
<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>
<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/><w:basedOn w:val="Normal"/></w:style>
"#
    );
    for level in 1..=6 {
        styles.push_str(&format!(
            r#"<w:style w:type="paragraph" w:styleId="Heading{level}"><w:name w:val="heading {level}"/><w:basedOn w:val="Normal"/><w:pPr><w:outlineLvl w:val="{}"/></w:pPr></w:style>
"#,
            level - 1
        ));
    }
    styles.push_str("</w:styles>");
    styles
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
