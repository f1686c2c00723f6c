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
        let content = Content {
            operations: text_operations(text),
        }
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

/// A page of `text` in Helvetica (font resource F1), one line per line
/// from the top; a blank line leaves its gap.
fn text_operations(text: &str) -> Vec<Operation> {
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
    operations
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

const PRESENTATION_NS: &str = "http://schemas.openxmlformats.org/presentationml/2006/main";
const DRAWING_NS: &str = "http://schemas.openxmlformats.org/drawingml/2006/main";
const RELATIONSHIP_NS: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const RELATIONSHIP_TYPES: &str =
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/// `docProps/core.xml` with a `dc:title`.
fn core_xml(title: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{}</dc:title></cp:coreProperties>"#,
        xml_escape(title)
    )
}

/// A relationships part: `(id, type name, target)` each.
fn rels_xml(relationships: &[(String, &str, String)]) -> String {
    let mut xml = String::from(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">"#,
    );
    for (id, kind, target) in relationships {
        xml.push_str(&format!(
            r#"<Relationship Id="{id}" Type="{RELATIONSHIP_TYPES}/{kind}" Target="{}"/>"#,
            xml_escape(target)
        ));
    }
    xml.push_str("</Relationships>");
    xml
}

/// A text shape: the title placeholder when `title`, else a text box, one
/// `a:p` per line.
fn pptx_shape(text: &str, placeholder: Option<&str>) -> String {
    let ph = placeholder.map_or(String::new(), |kind| format!(r#"<p:ph type="{kind}"/>"#));
    let paragraphs: String = text
        .lines()
        .map(|line| format!("<a:p><a:r><a:t>{}</a:t></a:r></a:p>", xml_escape(line)))
        .collect();
    format!(
        r#"<p:sp><p:nvSpPr><p:cNvPr id="2" name="Shape"/><p:cNvSpPr/><p:nvPr>{ph}</p:nvPr></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/>{paragraphs}</p:txBody></p:sp>"#
    )
}

/// One slide's (or notes page's) XML around `shapes`.
pub fn pptx_slide_xml(root: &str, shapes: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<p:{root} xmlns:p="{PRESENTATION_NS}" xmlns:a="{DRAWING_NS}" xmlns:r="{RELATIONSHIP_NS}"><p:cSld><p:spTree>{shapes}</p:spTree></p:cSld></p:{root}>"#
    )
}

/// A slide of a built presentation: its title, body text boxes (one
/// shape each) and speaker notes.
pub struct SlideSpec<'a> {
    pub title: Option<&'a str>,
    pub bodies: &'a [&'a str],
    pub notes: Option<&'a str>,
}

/// A real PPTX: slides in the order given (stored in reverse member order,
/// so the order comes from the presentation, not the zip), with a title in
/// `docProps/core.xml` when `title` is given.
pub fn pptx_bytes(title: Option<&str>, slides: &[SlideSpec<'_>]) -> Vec<u8> {
    let mut members: Vec<(String, String)> = Vec::new();
    let mut ids = String::new();
    let mut presentation_rels = Vec::new();
    for (i, slide) in slides.iter().enumerate().rev() {
        let n = i + 1;
        let mut shapes = slide
            .title
            .map(|t| pptx_shape(t, Some("title")))
            .unwrap_or_default();
        for body in slide.bodies {
            shapes.push_str(&pptx_shape(body, None));
        }
        members.push((
            format!("ppt/slides/slide{n}.xml"),
            pptx_slide_xml("sld", &shapes),
        ));
        presentation_rels.push((format!("rId{n}"), "slide", format!("slides/slide{n}.xml")));
        if let Some(notes) = slide.notes {
            let shapes = [
                pptx_shape("slide image", Some("sldImg")),
                pptx_shape(notes, Some("body")),
            ]
            .concat();
            members.push((
                format!("ppt/notesSlides/notesSlide{n}.xml"),
                pptx_slide_xml("notes", &shapes),
            ));
            members.push((
                format!("ppt/slides/_rels/slide{n}.xml.rels"),
                rels_xml(&[(
                    "rId1".to_owned(),
                    "notesSlide",
                    format!("../notesSlides/notesSlide{n}.xml"),
                )]),
            ));
        }
    }
    for i in 0..slides.len() {
        ids.push_str(&format!(
            r#"<p:sldId id="{}" r:id="rId{}"/>"#,
            256 + i,
            i + 1
        ));
    }
    members.push((
        "ppt/presentation.xml".to_owned(),
        format!(
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<p:presentation xmlns:p="{PRESENTATION_NS}" xmlns:a="{DRAWING_NS}" xmlns:r="{RELATIONSHIP_NS}"><p:sldIdLst>{ids}</p:sldIdLst></p:presentation>"#
        ),
    ));
    members.push((
        "ppt/_rels/presentation.xml.rels".to_owned(),
        rels_xml(&presentation_rels),
    ));
    if let Some(title) = title {
        members.push(("docProps/core.xml".to_owned(), core_xml(title)));
    }
    package(&members)
}

/// A real XLSX: one sheet per `(name, rows)`, strings through the shared
/// strings table, numbers as numbers.
pub fn xlsx_bytes(sheets: &[(&str, &[&[&str]])]) -> Vec<u8> {
    let mut strings: Vec<String> = Vec::new();
    let mut members: Vec<(String, String)> = Vec::new();
    let mut listed = String::new();
    let mut rels = Vec::new();
    for (i, (name, rows)) in sheets.iter().enumerate() {
        let n = i + 1;
        let mut data = String::new();
        for (r, row) in rows.iter().enumerate() {
            data.push_str(&format!(r#"<row r="{}">"#, r + 1));
            for (c, value) in row.iter().enumerate() {
                let reference = format!("{}{}", (b'A' + c as u8) as char, r + 1);
                if value.parse::<f64>().is_ok() {
                    data.push_str(&format!(r#"<c r="{reference}"><v>{value}</v></c>"#));
                } else if !value.is_empty() {
                    strings.push(value.to_string());
                    data.push_str(&format!(
                        r#"<c r="{reference}" t="s"><v>{}</v></c>"#,
                        strings.len() - 1
                    ));
                }
            }
            data.push_str("</row>");
        }
        members.push((
            format!("xl/worksheets/sheet{n}.xml"),
            format!(
                r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{data}</sheetData></worksheet>"#
            ),
        ));
        listed.push_str(&format!(
            r#"<sheet name="{}" sheetId="{n}" r:id="rId{n}"/>"#,
            xml_escape(name)
        ));
        rels.push((
            format!("rId{n}"),
            "worksheet",
            format!("worksheets/sheet{n}.xml"),
        ));
    }
    rels.push((
        "rIdStrings".to_owned(),
        "sharedStrings",
        "sharedStrings.xml".to_owned(),
    ));
    let shared: String = strings
        .iter()
        .map(|s| format!("<si><t>{}</t></si>", xml_escape(s)))
        .collect();
    members.push((
        "xl/sharedStrings.xml".to_owned(),
        format!(r#"<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">{shared}</sst>"#),
    ));
    members.push((
        "xl/workbook.xml".to_owned(),
        format!(
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="{RELATIONSHIP_NS}"><sheets>{listed}</sheets></workbook>"#
        ),
    ));
    members.push(("xl/_rels/workbook.xml.rels".to_owned(), rels_xml(&rels)));
    package(&members)
}

/// A real ODT around `body` (raw `office:text` content), with `meta.xml`
/// naming it `title` when given.
pub fn odt_bytes(title: Option<&str>, body: &str) -> Vec<u8> {
    let mut members = vec![
        (
            "mimetype".to_owned(),
            "application/vnd.oasis.opendocument.text".to_owned(),
        ),
        (
            "content.xml".to_owned(),
            format!(
                r#"<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" office:version="1.3"><office:body><office:text>{body}</office:text></office:body></office:document-content>"#
            ),
        ),
    ];
    if let Some(title) = title {
        members.push((
            "meta.xml".to_owned(),
            format!(
                r#"<?xml version="1.0" encoding="UTF-8"?>
<office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta><dc:title>{}</dc:title></office:meta></office:document-meta>"#,
                xml_escape(title)
            ),
        ));
    }
    package(&members)
}

/// A real EPUB 3: the package document in `OEBPS/`, one XHTML chapter per
/// `(file name, <title>, body)` in spine order.
pub fn epub_bytes(title: &str, chapters: &[(&str, &str, &str)]) -> Vec<u8> {
    let mut members = vec![
        ("mimetype".to_owned(), "application/epub+zip".to_owned()),
        (
            "META-INF/container.xml".to_owned(),
            r#"<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#
                .to_owned(),
        ),
    ];
    let (mut manifest, mut spine) = (String::new(), String::new());
    for (i, (file, chapter_title, body)) in chapters.iter().enumerate() {
        manifest.push_str(&format!(
            r#"<item id="c{i}" href="Text/{}" media-type="application/xhtml+xml"/>"#,
            xml_escape(file)
        ));
        spine.push_str(&format!(r#"<itemref idref="c{i}"/>"#));
        members.push((
            format!("OEBPS/Text/{file}"),
            format!(
                r#"<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{}</title></head><body>{body}</body></html>"#,
                xml_escape(chapter_title)
            ),
        ));
    }
    members.push((
        "OEBPS/content.opf".to_owned(),
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">urn:uuid:1</dc:identifier><dc:title>{}</dc:title><dc:language>en</dc:language></metadata><manifest>{manifest}</manifest><spine>{spine}</spine></package>"#,
            xml_escape(title)
        ),
    ));
    package(&members)
}

fn package(members: &[(String, String)]) -> Vec<u8> {
    let files: Vec<(&str, &[u8])> = members
        .iter()
        .map(|(name, text)| (name.as_str(), text.as_bytes()))
        .collect();
    zip_bytes(&files)
}

/// A page of `text` as poppler renders it: `pdf_bytes` of that one page,
/// drawn by `pdftoppm` at `dpi` in `format` ("-png" or "-gray" for PGM).
/// What a scanner would have produced from a printed page.
pub fn rendered_page(text: &str, dpi: u32, format: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("temp dir");
    let pdf = dir.path().join("page.pdf");
    std::fs::write(&pdf, pdf_bytes(None, &[text], &[])).expect("write page");
    let out = std::process::Command::new("pdftoppm")
        .args(["-r", &dpi.to_string(), format, "-singlefile"])
        .arg(&pdf)
        .output()
        .expect("pdftoppm runs (scripts/setup.sh installs poppler-utils)");
    assert!(
        out.status.success(),
        "pdftoppm: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A scanned PDF: a page `(text, true)` is only an image (8-bit grey,
/// Flate) of that text rendered at 200 dpi, with no text layer; a page
/// `(text, false)` is typed text as in `pdf_bytes`, so documents can mix them.
pub fn scanned_pdf_bytes(pages: &[(&str, bool)]) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let mut page_ids: Vec<ObjectId> = Vec::new();
    for &(text, scanned) in pages {
        let operations = if scanned {
            let (width, height, pixels) = pgm(&rendered_page(text, 200, "-gray"));
            let mut image = Stream::new(
                dictionary! {
                    "Type" => "XObject", "Subtype" => "Image",
                    "Width" => width, "Height" => height,
                    "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8,
                },
                pixels,
            );
            image.compress().expect("compress the scan");
            let image_id = doc.add_object(image);
            let resources = dictionary! { "XObject" => dictionary! { "Im1" => image_id } };
            (
                vec![
                    Operation::new("q", vec![]),
                    Operation::new(
                        "cm",
                        vec![
                            595.into(),
                            0.into(),
                            0.into(),
                            842.into(),
                            0.into(),
                            0.into(),
                        ],
                    ),
                    Operation::new("Do", vec!["Im1".into()]),
                    Operation::new("Q", vec![]),
                ],
                resources,
            )
        } else {
            (
                text_operations(text),
                dictionary! { "Font" => dictionary! { "F1" => font_id } },
            )
        };
        let (operations, resources) = operations;
        let content = Content { operations }
            .encode()
            .expect("encode page content");
        let content_id = doc.add_object(Stream::new(dictionary! {}, content));
        page_ids.push(doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
            "Resources" => resources,
        }));
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => page_ids.iter().map(|&id| id.into()).collect::<Vec<Object>>(),
            "Count" => i64::try_from(page_ids.len()).expect("page count"),
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).expect("write PDF");
    bytes
}

/// Width, height and pixels of a binary 8-bit PGM (`P5`), as pdftoppm writes it.
fn pgm(bytes: &[u8]) -> (i64, i64, Vec<u8>) {
    let mut fields = Vec::new();
    let mut at = 0;
    while fields.len() < 4 {
        while bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        let start = at;
        while !bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        fields.push(String::from_utf8_lossy(&bytes[start..at]).into_owned());
    }
    assert_eq!(
        (fields[0].as_str(), fields[3].as_str()),
        ("P5", "255"),
        "an 8-bit PGM"
    );
    let number = |s: &str| s.parse::<i64>().expect("PGM size");
    (
        number(&fields[1]),
        number(&fields[2]),
        bytes[at + 1..].to_vec(),
    )
}

/// A scanned PDF of `pages` small pages (6 × 1 inches) that all draw one
/// image of `line`, rendered at 150 dpi: many pages that OCR reads fast.
pub fn repeated_scan_pdf(line: &str, pages: usize) -> Vec<u8> {
    let mut typed = Document::with_version("1.5");
    let pages_id = typed.new_object_id();
    let font_id = typed.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let content = Content {
        operations: vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 14.into()]),
            Operation::new("Td", vec![24.into(), 30.into()]),
            Operation::new("Tj", vec![Object::string_literal(win_ansi(line))]),
            Operation::new("ET", vec![]),
        ],
    };
    let content_id = typed.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
    let page_id = typed.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
        "Resources" => dictionary! { "Font" => dictionary! { "F1" => font_id } },
    });
    typed.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1,
            "MediaBox" => vec![0.into(), 0.into(), 432.into(), 72.into()],
        }),
    );
    let catalog = typed.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    typed.trailer.set("Root", catalog);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("line.pdf");
    typed.save(&path).expect("write the typed page");
    let out = std::process::Command::new("pdftoppm")
        .args(["-r", "150", "-gray", "-singlefile"])
        .arg(&path)
        .output()
        .expect("pdftoppm runs");
    let (width, height, pixels) = pgm(&out.stdout);

    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let mut image = Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Image", "Width" => width, "Height" => height,
            "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8,
        },
        pixels,
    );
    image.compress().expect("compress the scan");
    let image_id = doc.add_object(image);
    let draw = Content {
        operations: vec![
            Operation::new("q", vec![]),
            Operation::new(
                "cm",
                vec![
                    432.into(),
                    0.into(),
                    0.into(),
                    72.into(),
                    0.into(),
                    0.into(),
                ],
            ),
            Operation::new("Do", vec!["Scan".into()]),
            Operation::new("Q", vec![]),
        ],
    };
    let draw_id = doc.add_object(Stream::new(dictionary! {}, draw.encode().unwrap()));
    let kids: Vec<Object> = (0..pages)
        .map(|_| {
            doc.add_object(dictionary! {
                "Type" => "Page", "Parent" => pages_id, "Contents" => draw_id,
                "Resources" => dictionary! { "XObject" => dictionary! { "Scan" => image_id } },
            })
            .into()
        })
        .collect();
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids,
            "Count" => i64::try_from(pages).expect("page count"),
            "MediaBox" => vec![0.into(), 0.into(), 432.into(), 72.into()],
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).expect("write PDF");
    bytes
}
