//! Every format against the expansion budget ([`crate::expansion`]): a
//! small document that repeats one part, or spells a node in a few bytes,
//! is refused by what it produces while what it inflates stays under the
//! budget; the same document loads when the budget holds what it makes.

use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, Stream};

use super::package::tests::zip;
use super::{load, Format, LoadError, LoadOptions};

/// The budget the documents below go past; each inflates to less.
const SMALL: u64 = 64 << 10;
/// A budget each of them fits.
const LARGE: u64 = 64 << 20;

/// Loads `bytes` under the small budget, expecting the expansion error,
/// and under the large one, expecting a document of more nodes than
/// `nodes_at_least`.
fn refused_then_loaded(format: Format, bytes: &[u8], nodes_at_least: usize) {
    match load(format, bytes, "doc", &LoadOptions::budget(SMALL)) {
        Err(LoadError::Expanded {
            format: f,
            budget_mib,
        }) => {
            assert_eq!((f, budget_mib), (format.as_str(), SMALL >> 20));
        }
        other => panic!("{format:?} under {SMALL} bytes: {other:?}"),
    }
    let loaded = load(format, bytes, "doc", &LoadOptions::budget(LARGE))
        .unwrap_or_else(|e| panic!("{format:?} under {LARGE} bytes: {e}"));
    assert!(
        loaded.tree.len() > nodes_at_least,
        "{format:?}: {} nodes",
        loaded.tree.len()
    );
}

/// A workbook of one sheet whose shared-strings table holds `string` and
/// whose sheet data is `rows`.
fn workbook(string: &str, rows: &str) -> Vec<u8> {
    let main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
    let kinds = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
    zip(&[
        ("xl/workbook.xml", format!(r#"<workbook xmlns="{main}" xmlns:r="{kinds}"><sheets><sheet name="A" sheetId="1" r:id="rId1"/></sheets></workbook>"#).as_bytes()),
        ("xl/_rels/workbook.xml.rels", format!(r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{kinds}/worksheet" Target="worksheets/a.xml"/><Relationship Id="rId2" Type="{kinds}/sharedStrings" Target="sharedStrings.xml"/></Relationships>"#).as_bytes()),
        ("xl/sharedStrings.xml", format!(r#"<sst xmlns="{main}"><si><t>{string}</t></si></sst>"#).as_bytes()),
        ("xl/worksheets/a.xml", format!(r#"<worksheet xmlns="{main}"><sheetData>{rows}</sheetData></worksheet>"#).as_bytes()),
    ])
}

#[test]
fn a_shared_string_in_every_cell_of_a_workbook() {
    let row = format!("<row>{}</row>", r#"<c t="s"><v>0</v></c>"#.repeat(50));
    // 1,000 copies of a 1,100-byte string from 22 KB of XML.
    let bytes = workbook(&"lighthouse ".repeat(100), &row.repeat(20));
    refused_then_loaded(Format::Xlsx, &bytes, 2);
}

#[test]
fn one_row_of_cells_naming_one_long_string() {
    // 200 columns of a 3,200-byte string: the row alone is over before it
    // is joined, so cells are counted as they copy the string.
    let cells: String = (0..200)
        .map(|c| format!(r#"<c r="{}1" t="s"><v>0</v></c>"#, column(c)))
        .collect();
    let bytes = workbook(&"harbour ".repeat(400), &format!("<row>{cells}</row>"));
    refused_then_loaded(Format::Xlsx, &bytes, 1);
}

/// Spreadsheet column letters: 0 → A, 26 → AA.
fn column(index: usize) -> String {
    let mut letters = Vec::new();
    let mut n = index + 1;
    while n > 0 {
        letters.push(b'A' + ((n - 1) % 26) as u8);
        n = (n - 1) / 26;
    }
    letters.reverse();
    String::from_utf8(letters).unwrap()
}

#[test]
fn repeated_spaces_in_an_opendocument_paragraph() {
    let content = format!(
        r#"<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text><text:p>Tide{}tables</text:p></office:text></office:body></office:document-content>"#,
        r#"<text:s text:c="64"/>"#.repeat(2_000)
    );
    let bytes = zip(&[
        ("mimetype", b"application/vnd.oasis.opendocument.text"),
        ("content.xml", content.as_bytes()),
    ]);
    // 128,000 spaces from 42 KB of XML.
    refused_then_loaded(Format::Odt, &bytes, 1);
}

#[test]
fn one_letter_paragraphs_of_a_word_document() {
    let document = format!(
        r#"<document xmlns="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><body>{}</body></document>"#,
        "<p><r><t>x</t></r></p>".repeat(2_000)
    );
    let bytes = zip(&[("word/document.xml", document.as_bytes())]);
    // 2,000 nodes from 44 KB of XML.
    refused_then_loaded(Format::Docx, &bytes, 2_000);
}

#[test]
fn slide_entries_that_repeat_one_slide() {
    let presentation = format!(
        r#"<p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><p:sldIdLst>{}</p:sldIdLst></p:presentation>"#,
        r#"<p:sldId id="256" r:id="rId1"/>"#.repeat(300)
    );
    let slide = format!(
        r#"<sld xmlns="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><cSld><spTree>{}</spTree></cSld></sld>"#,
        "<sp><a:p><a:t>x</a:t></a:p></sp>".repeat(10)
    );
    let bytes = zip(&[
        ("ppt/presentation.xml", presentation.as_bytes()),
        ("ppt/_rels/presentation.xml.rels", br#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide1.xml"/></Relationships>"#),
        ("ppt/slides/slide1.xml", slide.as_bytes()),
    ]);
    // 300 slides of 11 nodes from one slide of 470 bytes.
    refused_then_loaded(Format::Pptx, &bytes, 3_000);
}

#[test]
fn spine_entries_that_repeat_one_chapter() {
    let opf = format!(
        r#"<package xmlns="http://www.idpf.org/2007/opf"><manifest><item id="c" href="c.xhtml"/></manifest><spine>{}</spine></package>"#,
        r#"<itemref idref="c"/>"#.repeat(100)
    );
    let chapter = format!("<html><body>{}</body></html>", "<p>x</p>".repeat(100));
    let bytes = zip(&[
        ("mimetype", b"application/epub+zip"),
        ("META-INF/container.xml", br#"<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="content.opf"/></rootfiles></container>"#),
        ("content.opf", opf.as_bytes()),
        ("c.xhtml", chapter.as_bytes()),
    ]);
    // 100 chapters of 100 nodes from one of 826 bytes.
    refused_then_loaded(Format::Epub, &bytes, 10_000);
}

#[test]
fn short_paragraphs_of_html_and_markdown() {
    let html = "<p>x</p>".repeat(2_000);
    refused_then_loaded(Format::Html, html.as_bytes(), 2_000);
    let markdown = "x\n\n".repeat(2_000);
    refused_then_loaded(Format::Markdown, markdown.as_bytes(), 1);
}

/// A one-line text drawing: what a form or a page writes.
fn line() -> Vec<Operation> {
    vec![
        Operation::new("BT", vec![]),
        Operation::new("Tf", vec!["F1".into(), 12.into()]),
        Operation::new("Td", vec![72.into(), 700.into()]),
        Operation::new(
            "Tj",
            vec![Object::string_literal("The keeper trims the wick at dusk.")],
        ),
        Operation::new("ET", vec![]),
    ]
}

/// Draws of the form named `name`, `times` over.
fn draws(name: &str, times: usize) -> Vec<Operation> {
    vec![Operation::new("Do", vec![name.into()]); times]
}

/// A one-page PDF with a Helvetica font `F1` and forms `F0`, `F1`, … :
/// `forms[i]` is the content of form `Fi`, which may draw any form. The
/// page's content is `page`.
fn pdf_with_forms(page: Vec<Operation>, forms: Vec<Vec<Operation>>) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let ids: Vec<_> = forms.iter().map(|_| doc.new_object_id()).collect();
    let mut names = lopdf::Dictionary::new();
    for (i, id) in ids.iter().enumerate() {
        names.set(format!("F{i}"), *id);
    }
    let resources = dictionary! {
        "Font" => dictionary! { "F1" => font },
        "XObject" => names,
    };
    for (id, operations) in ids.iter().zip(forms) {
        let form = Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Form",
                "BBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
                "Resources" => resources.clone(),
            },
            Content { operations }.encode().unwrap(),
        );
        doc.objects.insert(*id, Object::Stream(form));
    }
    let contents = doc.add_object(Stream::new(
        dictionary! {},
        Content { operations: page }.encode().unwrap(),
    ));
    let page = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id, "Contents" => contents,
        "Resources" => resources,
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![page.into()], "Count" => 1,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

#[test]
fn a_pdf_form_drawn_again_and_again() {
    // 68 KB of text from a page of 14 KB.
    let bytes = pdf_with_forms(draws("F0", 2_000), vec![line()]);
    assert!((bytes.len() as u64) < SMALL);
    refused_then_loaded(Format::Pdf, &bytes, 1);
}

#[test]
fn a_pdf_form_that_draws_itself_stops_at_a_depth() {
    // It used to recurse until the stack overflowed.
    let mut form = line();
    form.extend(draws("F0", 1));
    let bytes = pdf_with_forms(draws("F0", 1), vec![form]);
    let loaded = load(Format::Pdf, &bytes, "doc", &LoadOptions::budget(LARGE)).unwrap();
    assert!(loaded.tree.nodes()[1].text.contains("trims the wick"));
}

#[test]
fn pdf_forms_that_draw_each_other_are_refused_without_a_glyph() {
    // Ten forms, each drawing the next ten times: 10^10 draws of nothing
    // from a page that writes one line, refused for what drawing costs.
    let mut forms: Vec<_> = (1..=10)
        .map(|next| draws(&format!("F{next}"), 10))
        .collect();
    forms.push(Vec::new());
    let mut page = line();
    page.extend(draws("F0", 1));
    let bytes = pdf_with_forms(page, forms);
    match load(Format::Pdf, &bytes, "doc", &LoadOptions::budget(4 << 20)) {
        Err(LoadError::Expanded { .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_document_that_fits_is_not_refused_and_the_meter_ends_with_it() {
    let document = format!(
        r#"<document xmlns="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><body>{}</body></document>"#,
        "<p><r><t>x</t></r></p>".repeat(100)
    );
    let bytes = zip(&[("word/document.xml", document.as_bytes())]);
    let loaded = load(Format::Docx, &bytes, "doc", &LoadOptions::budget(SMALL)).unwrap();
    assert_eq!(loaded.tree.len(), 101);
    assert_eq!(crate::expansion::charge(u64::MAX), Ok(()));
}
