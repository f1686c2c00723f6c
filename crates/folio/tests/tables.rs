//! Tables end to end, with the real CLI, SQLite and embedding model: a
//! markdown table of 5,000 rows, an HTML table with rowspan and colspan, a
//! table inside a list, a sheet with merged cells and a slide's table with
//! a merged cell are indexed as table nodes; every chunk of the long table carries its header and none cuts
//! through a row; search names the rows a hit holds (a sheet's own row
//! numbers), and so do a SmolLM2 answer's sources and its markdown export.

mod common;

use std::collections::HashSet;
use std::path::Path;

use common::engine::{folio, folio_json, open};
use common::fixtures::{pptx_bytes, xlsx_bytes, zip_bytes, SlideSpec};
use serde_json::Value;

const ROWS: usize = 5000;
const HEADER: &str = "Part | Stock | Bin";

fn parts_markdown() -> String {
    let mut text = String::from(
        "# Parts\n\nStock held for each part.\n\n| Part | Stock | Bin |\n|---|---|---|\n",
    );
    for i in 0..ROWS {
        text.push_str(&format!("| part-{i} | {} | bin {} |\n", i * 3, i % 40));
    }
    text
}

const PRICES: &str = "<html><head><title>Fruit prices</title></head><body>\
    <table><thead><tr><th>Fruit<th>Kind<th>Price</thead>\
    <tbody><tr><td rowspan=2>Apple<td>Gala<td>1.10\
    <tr><td>Fuji<td>1.40\
    <tr><td colspan=2>Quince, any<td>2.75</tbody></table></body></html>";

const CHECKLIST: &str = "# Checklist\n\n- Pack the tent\n- Check the stove fuel:\n\n  | Fuel | Litres |\n  |---|---|\n  | paraffin | 2 |\n\n- Leave a route card\n";

/// `archive` with each member whose name starts with `prefix` passed
/// through `edit` as text.
fn edited(archive: &[u8], prefix: &str, edit: impl Fn(String) -> String) -> Vec<u8> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(archive)).unwrap();
    let mut members: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..archive.len() {
        let mut file = archive.by_index(i).unwrap();
        let name = file.name().to_owned();
        let mut contents = String::new();
        std::io::Read::read_to_string(&mut file, &mut contents).unwrap();
        if name.starts_with(prefix) {
            contents = edit(contents);
        }
        members.push((name, contents.into_bytes()));
    }
    let files: Vec<(&str, &[u8])> = members
        .iter()
        .map(|(n, c)| (n.as_str(), c.as_slice()))
        .collect();
    zip_bytes(&files)
}

/// A workbook whose sheet merges A2:A3 ("North" over two ports), with a
/// gap in its row numbers.
fn ports_workbook() -> Vec<u8> {
    let rows: &[&[&str]] = &[
        &["Zone", "Port", "Depth"],
        &["North", "Leith", "9"],
        &["", "Tyne", "11"],
    ];
    edited(&xlsx_bytes(&[("Ports", rows)]), "xl/worksheets/", |sheet| {
        sheet.replace(
            "</sheetData>",
            r#"<row r="9"><c r="B9" t="inlineStr"><is><t>Dover</t></is></c><c r="C9"><v>12</v></c></row></sheetData><mergeCells count="1"><mergeCell ref="A2:A3"/></mergeCells>"#,
        )
    })
}

/// A presentation whose slide holds a table in which berth 1 spans two rows.
fn berths_deck() -> Vec<u8> {
    let deck = pptx_bytes(
        None,
        &[SlideSpec {
            title: Some("Berths"),
            bodies: &["Where the boats tie up"],
            notes: None,
        }],
    );
    let cell = |text: &str, attributes: &str| {
        format!(
            "<a:tc{attributes}><a:txBody><a:p><a:r><a:t>{text}</a:t></a:r></a:p></a:txBody></a:tc>"
        )
    };
    let table = [
        [
            "<a:tr>".into(),
            cell("Berth", ""),
            cell("Boat", ""),
            "</a:tr>".into(),
        ]
        .concat(),
        [
            "<a:tr>".into(),
            cell("1", r#" rowSpan="2""#),
            cell("Skylark", ""),
            "</a:tr>".into(),
        ]
        .concat(),
        [
            "<a:tr>".into(),
            cell("", r#" vMerge="1""#),
            cell("Puffin", ""),
            "</a:tr>".into(),
        ]
        .concat(),
    ]
    .concat();
    edited(&deck, "ppt/slides/slide", |slide| {
        slide.replace(
            "</p:spTree>",
            &format!("<p:graphicFrame><a:graphic><a:graphicData><a:tbl>{table}</a:tbl></a:graphicData></a:graphic></p:graphicFrame></p:spTree>"),
        )
    })
}

fn rows_of(hit: &Value) -> Option<(u64, u64)> {
    let rows = hit.get("rows")?;
    Some((rows["first"].as_u64()?, rows["last"].as_u64()?))
}

fn name_of(hit: &Value) -> String {
    Path::new(hit["path"].as_str().unwrap())
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn tables_stay_tables_from_file_to_cited_rows() {
    let root = tempfile::tempdir().unwrap();
    let docs = root.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("parts.md"), parts_markdown()).unwrap();
    std::fs::write(docs.join("prices.html"), PRICES).unwrap();
    std::fs::write(docs.join("checklist.md"), CHECKLIST).unwrap();
    std::fs::write(docs.join("ports.xlsx"), ports_workbook()).unwrap();
    std::fs::write(docs.join("berths.pptx"), berths_deck()).unwrap();
    let data = root.path().join("data");
    let added = folio(&data, &["add", docs.to_str().unwrap()]);
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );

    // The stored trees hold table nodes, and the long table's chunks each
    // carry the header and whole rows, every row once.
    let library = open(&data).await;
    let store = library.store();
    let tables = |path: &str| {
        let path = std::fs::canonicalize(docs.join(path)).unwrap();
        async move {
            let document = store
                .document(path.to_str().unwrap())
                .await
                .unwrap()
                .unwrap();
            let tree = store.structure_tree(document.id).await.unwrap();
            let tables: Vec<(String, u32, Option<u32>)> = tree
                .nodes()
                .iter()
                .filter_map(|n| Some((n.text.clone(), n.table?.header_rows, n.table?.first_row)))
                .collect();
            (document.id, tables)
        }
    };
    let (parts_id, parts) = tables("parts.md").await;
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].0.lines().count(), ROWS + 1);
    let rows: HashSet<String> = parts[0].0.lines().skip(1).map(str::to_owned).collect();
    let chunks = store.chunks_of(parts_id).await.unwrap();
    assert!(chunks.len() > 100, "{} chunks", chunks.len());
    let mut seen = 0;
    for chunk in chunks
        .iter()
        .filter(|c| c.text != "Stock held for each part.")
    {
        let (header, body) = chunk
            .text
            .split_once("\n\n")
            .unwrap_or_else(|| panic!("a chunk with no header: {:?}", chunk.text));
        assert_eq!(header, HEADER);
        for line in body.lines() {
            assert!(rows.contains(line), "a cut row: {line:?}");
            seen += 1;
        }
    }
    assert_eq!(seen, ROWS);

    let (_, prices) = tables("prices.html").await;
    assert_eq!(
        prices,
        [(
            "Fruit | Kind | Price\nApple | Gala | 1.10\nApple | Fuji | 1.40\nQuince, any |  | 2.75"
                .to_string(),
            1,
            None
        )]
    );
    let (_, checklist) = tables("checklist.md").await;
    assert_eq!(
        checklist,
        [("Fuel | Litres\nparaffin | 2".to_string(), 1, None)]
    );
    let (_, ports) = tables("ports.xlsx").await;
    assert_eq!(
        ports,
        [
            (
                "Zone | Port | Depth\nNorth | Leith | 9\nNorth | Tyne | 11".to_string(),
                1,
                Some(2)
            ),
            ("Zone | Port | Depth\n | Dover | 12".to_string(), 1, Some(9)),
        ]
    );
    let (_, berths) = tables("berths.pptx").await;
    assert_eq!(
        berths,
        [("Berth | Boat\n1 | Skylark\n1 | Puffin".to_string(), 1, None)]
    );
    drop(library);

    // Search names the rows a hit holds: the markdown table's from 1 below
    // its header, the sheet's as the sheet numbers them.
    let hits = folio_json(&data, &["search", "part-4321", "--mode", "bm25", "-k", "1"]);
    let hit = &hits[0];
    assert_eq!(name_of(hit), "parts.md");
    let (first, last) = rows_of(hit).expect("the hit names its rows");
    assert!(first <= 4322 && 4322 <= last, "rows {first}–{last}");
    let hits = folio_json(&data, &["search", "Dover", "--mode", "bm25", "-k", "1"]);
    assert_eq!(name_of(&hits[0]), "ports.xlsx");
    assert_eq!(rows_of(&hits[0]), Some((9, 9)));

    // An answer's sources name the rows too, and so does its export.
    let answer = folio_json(
        &data,
        &[
            "ask",
            "What is the depth at Tyne?",
            "--temperature",
            "0",
            "--max-tokens",
            "60",
        ],
    );
    let passages = answer["run"]["trace"]["passages"].as_array().unwrap();
    let sheet = passages
        .iter()
        .find(|p| name_of(p) == "ports.xlsx")
        .expect("the sheet was retrieved");
    assert_eq!(rows_of(sheet), Some((2, 3)));
    let run = answer["run"]["id"].as_i64().unwrap().to_string();
    let file = root.path().join("answer.md");
    let export = folio(&data, &["export", &run, "-o", file.to_str().unwrap()]);
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let markdown = std::fs::read_to_string(&file).unwrap();
    assert!(markdown.contains("(page 1, rows 2–3)"), "{markdown}");
}
