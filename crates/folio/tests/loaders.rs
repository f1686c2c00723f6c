//! Loaders through the public API, on real PDF, DOCX, PPTX, XLSX, ODT and
//! EPUB files built by the fixtures: structure, titles, spans and the errors bad files give.

mod common;

use common::fixtures::{
    docx_bytes, docx_from_body, docx_paragraph, docx_table, epub_bytes, odt_bytes, pdf_bytes,
    pptx_bytes, xlsx_bytes, zip_bytes, SlideSpec,
};
use folio_engine::documents::loaders::{load, Format, LoadError, LoadOptions, LoadedDocument};
use folio_engine::documents::structure_tree::{NodeKind, StructureTree, ROOT};
use folio_engine::documents::table::TableShape;
use lopdf::dictionary;

/// The decompression budget at the default 64 MiB file-size limit.
const BUDGET: u64 = 256 << 20;

/// Text with whitespace runs collapsed, so expectations do not depend on how
/// pdf-extract lays out spaces and line ends.
fn flat(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// (depth, kind, flattened text, page) of every node, in order.
fn shape(tree: &StructureTree) -> Vec<(u32, NodeKind, String, Option<u32>)> {
    tree.nodes()
        .iter()
        .map(|n| (n.depth, n.kind, flat(&n.text), n.span.page))
        .collect()
}

fn load_pdf(bytes: &[u8]) -> LoadedDocument {
    load(Format::Pdf, bytes, "fallback", &LoadOptions::budget(BUDGET)).expect("PDF loads")
}

fn manual_pdf() -> Vec<u8> {
    pdf_bytes(
        Some("Fixture Manual"),
        &[
            "Cover words here",
            "Chapter one opens here.\nIts second line.\n\nSecond paragraph (with parens) of one.",
            "Section text about caf\u{e9}s.",
            "Chapter Two\n\nChapter two body.",
        ],
        &[
            (1, "Chapter One", 2),
            (2, "Section A", 3),
            (1, "Chapter Two", 4),
        ],
    )
}

#[test]
fn pdf_outline_becomes_structure_with_pages_under_it() {
    let doc = load_pdf(&manual_pdf());
    assert_eq!(doc.format, Format::Pdf);
    assert_eq!(doc.note, None);
    let tree = &doc.tree;
    assert_eq!(tree.title(), "Fixture Manual");
    use NodeKind::*;
    assert_eq!(
        shape(tree),
        vec![
            (0, Structure, "Fixture Manual".into(), None),
            (1, Content, "Cover words here".into(), Some(1)),
            (1, Structure, "Chapter One".into(), Some(2)),
            (
                2,
                Content,
                "Chapter one opens here. Its second line.".into(),
                Some(2)
            ),
            (
                2,
                Content,
                "Second paragraph (with parens) of one.".into(),
                Some(2)
            ),
            (2, Structure, "Section A".into(), Some(3)),
            (3, Content, "Section text about caf\u{e9}s.".into(), Some(3)),
            // The entry's title is printed on its page: that paragraph is
            // the heading, not content.
            (1, Structure, "Chapter Two".into(), Some(4)),
            (2, Content, "Chapter two body.".into(), Some(4)),
        ]
    );
    assert_eq!(
        tree.heading_path(6),
        vec!["Fixture Manual", "Chapter One", "Section A"]
    );
    for n in tree.nodes().iter().filter(|n| n.kind == NodeKind::Content) {
        assert!(n.span.start < n.span.end, "{n:?}");
        assert_eq!(
            n.span.end - n.span.start,
            n.text.len(),
            "spans index the page text the node was cut from"
        );
    }
}

#[test]
fn pdf_entries_with_equal_titles_are_all_kept() {
    let bytes = pdf_bytes(
        None,
        &["a text", "b text", "c text", "d text"],
        &[
            (1, "Part 1", 1),
            (2, "Summary", 2),
            (1, "Part 2", 3),
            (2, "Summary", 4),
        ],
    );
    let tree = load_pdf(&bytes).tree;
    let headings: Vec<(u32, &str)> = tree
        .nodes()
        .iter()
        .filter(|n| n.kind == NodeKind::Structure)
        .map(|n| (n.depth, n.text.as_str()))
        .collect();
    assert_eq!(
        headings,
        vec![
            (0, "fallback"),
            (1, "Part 1"),
            (2, "Summary"),
            (1, "Part 2"),
            (2, "Summary")
        ]
    );
}

#[test]
fn pdf_without_outline_is_one_level_under_the_root() {
    let bytes = pdf_bytes(
        None,
        &[
            "First page para one.\n\nFirst page para two.",
            "",
            "Third page only.",
        ],
        &[],
    );
    let tree = load_pdf(&bytes).tree;
    assert_eq!(tree.title(), "fallback");
    use NodeKind::*;
    assert_eq!(
        shape(&tree)[1..],
        [
            (1, Content, "First page para one.".into(), Some(1)),
            (1, Content, "First page para two.".into(), Some(1)),
            (1, Content, "Third page only.".into(), Some(3)),
        ]
    );
    assert!(tree.nodes()[1..].iter().all(|n| n.parent == Some(ROOT)));
}

/// Two pages that both name their font F1: on the first it is Helvetica,
/// on the second a font whose encoding reads code 65 ('A') as "B". Fonts
/// are kept from page to page by object (third_party/pdf-extract), never
/// by the name a page gives them, and one object used on two pages is the
/// same font on both.
#[test]
fn a_font_name_means_the_font_its_own_page_gives_it() {
    use lopdf::content::{Content, Operation};
    use lopdf::{Document, Object, Stream};

    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let plain = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let shifted = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => dictionary! {
            "BaseEncoding" => "WinAnsiEncoding",
            "Differences" => vec![65.into(), Object::Name(b"B".to_vec())],
        },
    });
    let mut kids = Vec::new();
    for font in [plain, shifted, plain] {
        let content = Content {
            operations: vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 12.into()]),
                Operation::new("Td", vec![72.into(), 700.into()]),
                Operation::new("Tj", vec![Object::string_literal("AAA")]),
                Operation::new("ET", vec![]),
            ],
        };
        let contents = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
        kids.push(Object::from(doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => contents,
            "Resources" => dictionary! { "Font" => dictionary! { "F1" => font } },
        })));
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids, "Count" => 3,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();

    let loaded = load_pdf(&bytes);
    let pages: Vec<(Option<u32>, String)> = loaded.tree.nodes()[1..]
        .iter()
        .map(|n| (n.span.page, flat(&n.text)))
        .collect();
    assert_eq!(
        pages,
        [
            (Some(1), "AAA".to_owned()),
            (Some(2), "BBB".to_owned()),
            (Some(3), "AAA".to_owned()),
        ]
    );
}

/// The fixtures draw 12-point Helvetica from x = 72 with baselines at 770,
/// 756, 742, ...; a box reaches a fifth of the size below the baseline and
/// four fifths above it.
#[test]
fn pdf_text_comes_with_where_each_line_is_drawn() {
    let doc = load_pdf(&pdf_bytes(
        None,
        &["", "First line here\nsecond line\n\nA new paragraph"],
        &[],
    ));
    let paragraphs: Vec<_> = doc.tree.nodes()[1..].iter().collect();
    assert_eq!(paragraphs.len(), 2);
    assert_eq!(paragraphs[0].span.page, Some(2));
    let close = |a: f32, b: f64| (f64::from(a) - b).abs() < 0.01;

    let first = doc.boxes(&paragraphs[0].span);
    assert_eq!(first.len(), 2, "one box per line: {first:?}");
    assert!(close(first[0].x0, 72.0) && close(first[1].x0, 72.0));
    assert!(close(first[0].y0, 770.0 - 2.4) && close(first[0].y1, 770.0 + 9.6));
    assert!(close(first[1].y0, 756.0 - 2.4) && close(first[1].y1, 756.0 + 9.6));
    // "First line here" is 6,057 thousandths of an em wide in Helvetica.
    assert!(close(first[0].x1, 72.0 + 6.057 * 12.0), "{:?}", first[0]);

    let second = doc.boxes(&paragraphs[1].span);
    assert_eq!(second.len(), 1);
    assert!(close(second[0].y0, 728.0 - 2.4));

    // Part of a paragraph covers the lines it touches; other pages have none.
    let mut tail = paragraphs[0].span;
    tail.start = paragraphs[0].text.find("second").unwrap() + tail.start;
    assert_eq!(doc.boxes(&tail), first[1..]);
    tail.page = Some(1);
    assert!(doc.boxes(&tail).is_empty());
}

#[test]
fn pdf_with_a_blank_info_title_uses_the_fallback() {
    let tree = load_pdf(&pdf_bytes(Some("   "), &["text"], &[])).tree;
    assert_eq!(tree.title(), "fallback");
}

#[test]
fn pdf_without_text_is_empty() {
    let bytes = pdf_bytes(Some("Scanned"), &["", ""], &[]);
    match load(Format::Pdf, &bytes, "f", &LoadOptions::budget(BUDGET)) {
        Err(LoadError::Empty { reason }) => {
            assert!(reason.contains("no text layer"), "{reason}")
        }
        other => panic!("expected Empty, got {other:?}"),
    }
}

#[test]
fn corrupt_pdfs_are_errors_not_panics() {
    let valid = manual_pdf();
    let mut seed = 0x0ddb_1a5e_u64;
    let mut random = |len: usize| -> Vec<u8> {
        (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect()
    };
    let mut inputs: Vec<Vec<u8>> =
        vec![Vec::new(), b"%PDF-1.7\n".to_vec(), random(10), random(4096)];
    let mut header_then_noise = b"%PDF-1.5\n".to_vec();
    header_then_noise.extend(random(2000));
    inputs.push(header_then_noise);
    for cut in [
        1,
        valid.len() / 4,
        valid.len() / 2,
        valid.len() * 3 / 4,
        valid.len() - 10,
    ] {
        inputs.push(valid[..cut].to_vec());
    }
    for bytes in &inputs {
        match load(Format::Pdf, bytes, "f", &LoadOptions::budget(BUDGET)) {
            Err(LoadError::Corrupt {
                format: "pdf",
                reason,
            }) => assert!(!reason.is_empty()),
            other => panic!(
                "{} bytes: expected Corrupt, got {:?}",
                bytes.len(),
                other.map(|d| d.tree.len())
            ),
        }
    }
}

#[test]
fn pdf_with_damaged_bytes_never_panics() {
    let valid = manual_pdf();
    let mut seed = 0x5eed_u64;
    for _ in 0..200 {
        let mut bytes = valid.clone();
        for _ in 0..8 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = (seed % bytes.len() as u64) as usize;
            bytes[at] = (seed >> 32) as u8;
        }
        // Any outcome is fine except a panic escaping the loader.
        let _ = load(Format::Pdf, &bytes, "f", &LoadOptions::budget(BUDGET));
    }
}

fn load_docx(bytes: &[u8]) -> StructureTree {
    load(
        Format::Docx,
        bytes,
        "fallback",
        &LoadOptions::budget(BUDGET),
    )
    .expect("DOCX loads")
    .tree
}

#[test]
fn docx_headings_nest_by_level_and_title_style_names_the_document() {
    let bytes = docx_bytes(&[
        (Some("Title"), "Quarterly Report"),
        (None, "Opening words."),
        (Some("Heading1"), "Background"),
        (None, "Why we did it."),
        (Some("Heading3"), "Deep detail"),
        (None, "Skipped a level."),
        (Some("Heading2"), "History"),
        (None, ""),
        (Some("Normal"), "Long ago."),
        (Some("Heading1"), "Results"),
        (None, "It worked & more."),
    ]);
    let tree = load_docx(&bytes);
    assert_eq!(tree.title(), "Quarterly Report");
    use NodeKind::*;
    assert_eq!(
        shape(&tree),
        vec![
            (0, Structure, "Quarterly Report".into(), None),
            (1, Content, "Opening words.".into(), None),
            (1, Structure, "Background".into(), None),
            (2, Content, "Why we did it.".into(), None),
            (2, Structure, "Deep detail".into(), None),
            (3, Content, "Skipped a level.".into(), None),
            (2, Structure, "History".into(), None),
            (3, Content, "Long ago.".into(), None),
            (1, Structure, "Results".into(), None),
            (2, Content, "It worked & more.".into(), None),
        ]
    );
}

#[test]
fn docx_spans_are_paragraph_elements_in_document_xml() {
    let bytes = docx_bytes(&[(Some("Heading1"), "Alpha"), (None, "Beta gamma")]);
    let document_xml = common::fixtures::docx_document_xml(&format!(
        "{}{}",
        docx_paragraph(Some("Heading1"), "Alpha"),
        docx_paragraph(None, "Beta gamma")
    ));
    let tree = load_docx(&bytes);
    for n in &tree.nodes()[1..] {
        let element = &document_xml[n.span.start..n.span.end];
        assert!(
            element.starts_with("<w:p>") && element.ends_with("</w:p>"),
            "{element}"
        );
        assert!(element.contains(n.text.as_str()));
    }
}

#[test]
fn docx_without_title_style_uses_the_fallback() {
    let tree = load_docx(&docx_bytes(&[(None, "Just a paragraph.")]));
    assert_eq!(tree.title(), "fallback");
    assert_eq!(tree.len(), 2);
}

#[test]
fn docx_table_is_one_content_node() {
    let body = [
        docx_paragraph(Some("Heading1"), "Figures"),
        docx_table(&[&["Name", "Value"], &["alpha", "1"], &["beta", "two\nlines"]]),
        docx_paragraph(None, "After the table."),
    ]
    .concat();
    let tree = load_docx(&docx_from_body(&body));
    use NodeKind::*;
    assert_eq!(
        shape(&tree)[1..],
        [
            (1, Structure, "Figures".into(), None),
            (
                2,
                Content,
                "Name | Value alpha | 1 beta | two lines".into(),
                None
            ),
            (2, Content, "After the table.".into(), None),
        ]
    );
    assert_eq!(
        tree.node(2).text,
        "Name | Value\nalpha | 1\nbeta | two lines"
    );
}

#[test]
fn docx_table_header_rows_spans_and_nested_tables_keep_the_grid() {
    let cell = |props: &str, text: &str| {
        format!(
            "<w:tc><w:tcPr>{props}</w:tcPr>{}</w:tc>",
            docx_paragraph(None, text)
        )
    };
    let nested = docx_table(&[&["inner a", "inner b"], &["inner c", "inner d"]]);
    let body = format!(
        "<w:tbl><w:tr><w:trPr><w:tblHeader/></w:trPr>{}{}{}</w:tr>\
         <w:tr>{}{}</w:tr><w:tr>{}{}<w:tc>{nested}</w:tc></w:tr></w:tbl>",
        cell("", "Zone"),
        cell("", "Port"),
        cell("", "Depth"),
        cell(r#"<w:gridSpan w:val="2"/>"#, "Closed for works"),
        cell("", "-"),
        cell("", "North"),
        cell("", "Leith"),
    );
    let tree = load_docx(&docx_from_body(&body));
    assert_eq!(
        tree.node(1).text,
        "Zone | Port | Depth\nClosed for works |  | -\nNorth | Leith | inner a inner b inner c inner d"
    );
    assert_eq!(tree.node(1).table, Some(TableShape::headed(1)));
}

#[test]
fn corrupt_docx_files_are_errors() {
    let valid = docx_bytes(&[(None, "hello")]);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("not a zip", b"This is plain text, not a DOCX.".to_vec()),
        ("zip without document.xml", zip_bytes(&[("word/styles.xml", b"<w:styles/>"), ("readme.txt", b"hi")])),
        (
            "malformed XML",
            zip_bytes(&[(
                "word/document.xml",
                br#"<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>x</w:p></w:body></w:document>"#,
            )]),
        ),
        ("truncated package", valid[..valid.len() / 2].to_vec()),
        ("empty file", Vec::new()),
    ];
    for (what, bytes) in cases {
        match load(Format::Docx, &bytes, "f", &LoadOptions::budget(BUDGET)) {
            Err(LoadError::Corrupt {
                format: "docx",
                reason,
            }) => assert!(!reason.is_empty(), "{what}"),
            other => panic!(
                "{what}: expected Corrupt, got {:?}",
                other.map(|d| d.tree.len())
            ),
        }
    }
}

#[test]
fn text_formats_share_decoding() {
    let doc = load(
        Format::Markdown,
        b"# Titre\n\nCaf\xE9 cr\xE8me br\xFBl\xE9e, d\xE9j\xE0 vu.\n",
        "f",
        &LoadOptions::budget(BUDGET),
    )
    .unwrap();
    assert_eq!(doc.tree.title(), "Titre");
    assert!(doc.tree.node(1).text.starts_with("Café crème"));
    assert!(doc.note.is_some_and(|n| n.starts_with("not valid UTF-8")));

    assert!(matches!(
        load(
            Format::Html,
            b"<p>\0\0binary",
            "f",
            &LoadOptions::budget(BUDGET)
        ),
        Err(LoadError::Binary { format: "html" })
    ));
    let txt = load(
        Format::Text,
        b"one\n\ntwo",
        "notes",
        &LoadOptions::budget(BUDGET),
    )
    .unwrap();
    assert_eq!(txt.tree.len(), 3);
}

fn load_ok(format: Format, bytes: &[u8]) -> StructureTree {
    load(format, bytes, "fallback", &LoadOptions::budget(BUDGET))
        .unwrap_or_else(|e| panic!("{format:?} loads: {e}"))
        .tree
}

#[test]
fn pptx_slides_come_in_presentation_order_with_titles_bodies_and_notes() {
    let bytes = pptx_bytes(
        Some("Harbour review"),
        &[
            SlideSpec {
                title: Some("Tides"),
                bodies: &["High water at noon\nLow water at six"],
                notes: Some("Mention the spring tides."),
            },
            SlideSpec {
                title: None,
                bodies: &["An untitled slide", "A second box"],
                notes: None,
            },
        ],
    );
    let tree = load_ok(Format::Pptx, &bytes);
    use NodeKind::*;
    assert_eq!(
        shape(&tree),
        vec![
            (0, Structure, "Harbour review".into(), None),
            (1, Structure, "Tides".into(), Some(1)),
            (
                2,
                Content,
                "High water at noon Low water at six".into(),
                Some(1)
            ),
            (2, Structure, "Notes".into(), Some(1)),
            (3, Content, "Mention the spring tides.".into(), Some(1)),
            (1, Structure, "Slide 2".into(), Some(2)),
            (2, Content, "An untitled slide".into(), Some(2)),
            (2, Content, "A second box".into(), Some(2)),
        ]
    );
    assert_eq!(tree.node(2).text, "High water at noon\nLow water at six");
    let slide = common::fixtures::pptx_slide_xml("sld", "");
    assert!(
        slide.len() < tree.node(2).span.end,
        "spans are in the slide's XML"
    );
}

#[test]
fn xlsx_sheets_are_tables_headed_by_their_first_row() {
    let tides: &[&[&str]] = &[
        &["Port", "High water", "Metres"],
        &["Dover", "12:05", "6.1"],
        &["Calais", "", "7"],
    ];
    let empty: &[&[&str]] = &[];
    let bytes = xlsx_bytes(&[("Tides", tides), ("Blank", empty)]);
    let tree = load_ok(Format::Xlsx, &bytes);
    assert_eq!(
        tree.node(2).table,
        Some(TableShape {
            header_rows: 1,
            first_row: Some(2)
        })
    );
    use NodeKind::*;
    assert_eq!(
        shape(&tree),
        vec![
            (0, Structure, "fallback".into(), None),
            (1, Structure, "Tides".into(), Some(1)),
            (
                2,
                Content,
                "Port | High water | Metres Dover | 12:05 | 6.1 Calais | | 7".into(),
                Some(1)
            ),
        ]
    );
}

#[test]
fn xlsx_with_no_text_is_empty_not_corrupt() {
    let empty: &[&[&str]] = &[];
    assert!(matches!(
        load(
            Format::Xlsx,
            &xlsx_bytes(&[("Sheet1", empty)]),
            "f",
            &LoadOptions::budget(BUDGET)
        ),
        Err(LoadError::Empty { .. })
    ));
}

#[test]
fn odt_headings_nest_and_meta_names_the_document() {
    let body = r#"<text:h text:outline-level="1">Moorings</text:h><text:p>Buoys are checked weekly.</text:p><text:h text:outline-level="2">Winter</text:h><text:p>Chains are lifted.</text:p>"#;
    let tree = load_ok(Format::Odt, &odt_bytes(Some("Harbour manual"), body));
    use NodeKind::*;
    assert_eq!(
        shape(&tree),
        vec![
            (0, Structure, "Harbour manual".into(), None),
            (1, Structure, "Moorings".into(), None),
            (2, Content, "Buoys are checked weekly.".into(), None),
            (2, Structure, "Winter".into(), None),
            (3, Content, "Chains are lifted.".into(), None),
        ]
    );
    let untitled = load_ok(Format::Odt, &odt_bytes(None, body));
    assert_eq!(untitled.title(), "fallback");
}

#[test]
fn epub_chapters_follow_the_spine_with_their_headings() {
    let bytes = epub_bytes(
        "The Lighthouse Keeper",
        &[
            (
                "cover.xhtml",
                "The Lighthouse Keeper",
                r#"<img src="cover.jpg" alt=""/>"#,
            ),
            (
                "ch1.xhtml",
                "The Lighthouse Keeper",
                "<h1>Arrival</h1><p>The boat came at dawn.</p>",
            ),
            (
                "ch 2.xhtml",
                "Storms",
                "<h1>Storms</h1><h2>The first gale</h2><p>Waves broke over the lamp.</p>",
            ),
        ],
    );
    let tree = load_ok(Format::Epub, &bytes);
    let nodes: Vec<_> = shape(&tree);
    assert_eq!(
        nodes[0],
        (0, NodeKind::Structure, "The Lighthouse Keeper".into(), None)
    );
    // The cover has no text; a chapter whose <title> repeats the book's is
    // named by its place in the spine.
    assert_eq!(nodes[1], (1, NodeKind::Structure, "Part 2".into(), Some(2)));
    assert!(nodes.contains(&(2, NodeKind::Structure, "Arrival".into(), Some(2))));
    // A chapter's <title> that its first heading repeats is one node.
    assert!(nodes.contains(&(1, NodeKind::Structure, "Storms".into(), Some(3))));
    assert_eq!(nodes.iter().filter(|n| n.2 == "Storms").count(), 1);
    let last = tree.nodes().last().unwrap();
    assert_eq!(last.text, "Waves broke over the lamp.");
    assert_eq!(
        tree.heading_path(tree.len() - 1),
        vec!["The Lighthouse Keeper", "Storms", "The first gale"]
    );
}

#[test]
fn broken_packages_of_every_new_format_are_clear_errors() {
    let valid: [(Format, Vec<u8>); 4] = [
        (
            Format::Pptx,
            pptx_bytes(
                None,
                &[SlideSpec {
                    title: Some("t"),
                    bodies: &["b"],
                    notes: None,
                }],
            ),
        ),
        (Format::Xlsx, xlsx_bytes(&[("S", &[&["a"], &["b"]])])),
        (Format::Odt, odt_bytes(None, "<text:p>x</text:p>")),
        (
            Format::Epub,
            epub_bytes("t", &[("a.xhtml", "a", "<p>x</p>")]),
        ),
    ];
    for (format, bytes) in valid {
        for (what, broken) in [
            ("truncated", bytes[..bytes.len() / 2].to_vec()),
            ("not a zip", b"plain words".to_vec()),
            ("an empty zip", zip_bytes(&[])),
        ] {
            match load(format, &broken, "f", &LoadOptions::budget(BUDGET)) {
                Err(LoadError::Corrupt {
                    format: name,
                    reason,
                }) => {
                    assert_eq!(name, format.as_str(), "{what}");
                    assert!(!reason.is_empty());
                }
                other => panic!("{format:?} {what}: {:?}", other.map(|d| d.tree.len())),
            }
        }
    }
}

#[test]
fn a_package_decompressing_past_the_budget_is_refused_for_every_zip_format() {
    let budget = 4 << 20;
    // Zeros deflate to a few KiB.
    let big = vec![0u8; 5 << 20];
    let bombs = [
        (Format::Docx, "word/document.xml"),
        (Format::Pptx, "ppt/presentation.xml"),
        (Format::Xlsx, "xl/workbook.xml"),
        (Format::Odt, "content.xml"),
        (Format::Epub, "META-INF/container.xml"),
    ];
    for (format, member) in bombs {
        let bytes = zip_bytes(&[(member, &big)]);
        assert!(bytes.len() < 64 << 10, "a bomb is small on disk");
        match load(format, &bytes, "f", &LoadOptions::budget(budget)) {
            Err(e @ LoadError::OverBudget { .. }) => {
                assert!(
                    e.to_string().contains("decompresses to more than 4 MiB"),
                    "{e}"
                )
            }
            other => panic!("{format:?}: {:?}", other.map(|d| d.tree.len())),
        }
    }
    // The budget is for the whole file: sheets that fit one by one do not
    // fit together. (Padding, so that what they inflate to counts rather
    // than the text they make, which the expansion meter counts as well.)
    let padding = " ".repeat(3 << 20);
    let sheet = |_| {
        format!(
            r#"<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{padding}<row r="1"><c r="A1" t="inlineStr"><is><t>Tide</t></is></c></row></sheetData></worksheet>"#
        )
    };
    let one: &[&[&str]] = &[&["a"]];
    let workbook = xlsx_bytes(&[("A", one), ("B", one)]);
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(&workbook)).unwrap();
    let mut members: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..archive.len() {
        let mut file = archive.by_index(i).unwrap();
        let name = file.name().to_owned();
        let mut contents = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut contents).unwrap();
        if name.starts_with("xl/worksheets/") {
            contents = sheet(()).into_bytes();
        }
        members.push((name, contents));
    }
    let files: Vec<(&str, &[u8])> = members
        .iter()
        .map(|(n, c)| (n.as_str(), c.as_slice()))
        .collect();
    let two_big_sheets = zip_bytes(&files);
    assert!(matches!(
        load(
            Format::Xlsx,
            &two_big_sheets,
            "f",
            &LoadOptions::budget(budget)
        ),
        Err(LoadError::OverBudget { format: "xlsx", .. })
    ));
    if let Err(e) = load(
        Format::Xlsx,
        &two_big_sheets,
        "f",
        &LoadOptions::budget(2 * budget),
    ) {
        panic!("with twice the budget the workbook loads: {e}");
    }
}

/// A one-page PDF whose content stream is its text and then `padding`
/// spaces, encoded by `filters` (applied in the order given, so the last
/// one is undone first).
fn padded_pdf(padding: usize, filters: &[&str]) -> Vec<u8> {
    let mut doc =
        lopdf::Document::load_mem(&pdf_bytes(None, &["Tides turn at noon."], &[])).unwrap();
    let page = *doc.get_pages().values().next().unwrap();
    let content_id = doc.get_page_contents(page)[0];
    let stream = doc
        .get_object_mut(content_id)
        .unwrap()
        .as_stream_mut()
        .unwrap();
    let mut content = stream.content.clone();
    content.extend(std::iter::repeat_n(b' ', padding));
    for filter in filters {
        content = match *filter {
            "FlateDecode" => {
                let mut encoder =
                    flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
                std::io::Write::write_all(&mut encoder, &content).unwrap();
                encoder.finish().unwrap()
            }
            "LZWDecode" => weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
                .encode(&content)
                .unwrap(),
            other => panic!("no encoder for {other}"),
        };
    }
    let names: Vec<lopdf::Object> = filters
        .iter()
        .rev()
        .map(|f| lopdf::Object::Name(f.as_bytes().to_vec()))
        .collect();
    stream.dict.set("Filter", names);
    stream.set_content(content);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

#[test]
fn a_pdf_whose_streams_decompress_past_the_budget_is_refused() {
    let budget = 4 << 20;
    for filters in [
        &["FlateDecode"][..],
        &["LZWDecode"],
        &["FlateDecode", "FlateDecode"],
    ] {
        let bytes = padded_pdf(5 << 20, filters);
        assert!(bytes.len() < 1 << 20, "{filters:?}: {} bytes", bytes.len());
        match load(Format::Pdf, &bytes, "f", &LoadOptions::budget(budget)) {
            Err(e @ LoadError::OverBudget { format: "pdf", .. }) => {
                assert!(
                    e.to_string().contains("decompresses to more than 4 MiB"),
                    "{e}"
                )
            }
            other => panic!("{filters:?}: {:?}", other.map(|d| d.tree.len())),
        }
        // Within a larger budget the same file loads, and its text is read
        // through the same filters.
        let tree = load(Format::Pdf, &bytes, "f", &LoadOptions::budget(4 * budget))
            .unwrap_or_else(|e| panic!("{filters:?}: {e}"))
            .tree;
        assert_eq!(
            flat(&tree.node(1).text),
            "Tides turn at noon.",
            "{filters:?}"
        );
    }
}

#[test]
fn an_image_that_decodes_past_the_budget_on_its_own_is_refused() {
    // pdf-extract inflates every image it meets: one of 5 MiB against a
    // budget of 4 MiB is refused, while two of 3 MiB each (held one at a
    // time) are not summed.
    let with_images = |sides: &[u32]| {
        let mut doc =
            lopdf::Document::load_mem(&pdf_bytes(None, &["Tides turn at noon."], &[])).unwrap();
        let page = *doc.get_pages().get(&1).unwrap();
        let mut names = lopdf::Dictionary::new();
        for (i, &side) in sides.iter().enumerate() {
            let mut image = lopdf::Stream::new(
                dictionary! {
                    "Type" => "XObject", "Subtype" => "Image", "Width" => side, "Height" => side,
                    "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8,
                },
                vec![0; (side * side) as usize],
            );
            image.compress().unwrap();
            names.set(format!("Im{i}"), doc.add_object(image));
        }
        // The fixture's font is in the page tree's resources, which the
        // page's own would hide.
        let parent = doc.get_dictionary(page).unwrap().get(b"Parent").unwrap();
        let parent = parent.as_reference().unwrap();
        let inherited = doc
            .get_dictionary(parent)
            .unwrap()
            .get(b"Resources")
            .unwrap();
        let fonts = doc
            .get_dictionary(inherited.as_reference().unwrap())
            .unwrap();
        let fonts = fonts.get(b"Font").unwrap().clone();
        let page = doc.get_object_mut(page).unwrap().as_dict_mut().unwrap();
        page.set(
            "Resources",
            dictionary! { "Font" => fonts, "XObject" => names },
        );
        let mut bytes = Vec::new();
        doc.save_to(&mut bytes).unwrap();
        bytes
    };
    let budget = 4 << 20;
    let one_big = with_images(&[2300]);
    assert!(one_big.len() < 1 << 20);
    match load(Format::Pdf, &one_big, "f", &LoadOptions::budget(budget)) {
        Err(LoadError::OverBudget { format: "pdf", .. }) => {}
        other => panic!("{:?}", other.map(|d| d.tree.len())),
    }
    let two_smaller = with_images(&[1700, 1700]);
    let doc = load(Format::Pdf, &two_smaller, "f", &LoadOptions::budget(budget)).unwrap();
    assert_eq!(flat(&doc.tree.node(1).text), "Tides turn at noon.");
}

#[test]
fn a_pdf_with_object_and_xref_streams_loads_as_one_without_them() {
    let plain = pdf_bytes(
        Some("Harbour log"),
        &["Ships at anchor.", "Ships at sea."],
        &[(1, "Anchored", 1), (1, "Sailing", 2)],
    );
    let mut doc = lopdf::Document::load_mem(&plain).unwrap();
    let mut packed = Vec::new();
    let options = lopdf::SaveOptions::builder()
        .use_object_streams(true)
        .use_xref_streams(true)
        .build();
    doc.save_with_options(&mut packed, options).unwrap();
    assert!(
        packed.windows(6).any(|w| w == b"ObjStm"),
        "the objects are packed"
    );
    let tree = |bytes: &[u8]| {
        shape(
            &load(Format::Pdf, bytes, "f", &LoadOptions::budget(BUDGET))
                .unwrap()
                .tree,
        )
    };
    assert_eq!(tree(&packed), tree(&plain));
}
