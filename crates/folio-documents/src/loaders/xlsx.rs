//! XLSX: one structure node per sheet, in the workbook's order, named by
//! the sheet. A sheet is read as a table: its first row with text is the
//! header, and the rows below it are table nodes (`crate::table`) of up to
//! [`ROWS_PER_BLOCK`] consecutive rows each, every one with the header as
//! its first line and the sheet's number for its first row, so citations
//! name the sheet's own rows; a sheet of one row is that row. A merged
//! range's value is repeated down its first column, as a spanned table
//! cell is. The title is `dc:title` of `docProps/core.xml`. Spans are byte
//! ranges in the sheet's XML, with `page` the sheet number.

use super::package::{targets, Package};
use super::xml::{walk, Node};
use super::LoadError;
use crate::expansion;
use crate::structure_tree::{NodeKind, Span, StructureTree, ROOT};
use crate::table::{CellSpan, TableShape, TableText, CARRIED_CHARS};

const WORKBOOK_PART: &str = "xl/workbook.xml";
const CORE_PART: &str = "docProps/core.xml";

/// Rows that become one content node: small enough to cite, large enough
/// that a 50,000-row sheet is not 50,000 nodes.
const ROWS_PER_BLOCK: usize = 25;

/// Columns past this are left out; a cell placed at column XFD would
/// otherwise pad every row with thousands of empty cells.
const MAX_COLUMNS: usize = 512;

pub(super) fn parse(
    bytes: &[u8],
    fallback_title: &str,
    budget: u64,
) -> Result<StructureTree, LoadError> {
    let mut package = Package::open(bytes, "xlsx", budget)?;
    let workbook = package.required_text(WORKBOOK_PART, "an Excel workbook")?;
    let sheets = sheets(&workbook)?;
    let relationships = package.relationships(WORKBOOK_PART)?;
    let strings = match relationships.iter().find(|r| r.is("sharedStrings")) {
        Some(r) => {
            let part = r.target.clone();
            match package.text(&part)? {
                Some(xml) => shared_strings(&xml, &part)?,
                None => Vec::new(),
            }
        }
        None => Vec::new(),
    };
    let title = package.dublin_core_title(CORE_PART, b"coreProperties")?;
    let mut tree = StructureTree::new(title.as_deref().unwrap_or(fallback_title), Span::default());
    let worksheets = targets(&relationships, "worksheet");
    for (index, (name, id)) in sheets.iter().enumerate() {
        let Some(part) = worksheets.get(id.as_str()).map(|&t| t.to_owned()) else {
            continue;
        };
        let Some(xml) = package.text(&part)? else {
            continue;
        };
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let rows = read_sheet(&xml, &part, &strings)?;
        push_sheet(&mut tree, name, number, rows);
    }
    if tree.len() == 1 || tree.nodes().iter().all(|n| n.kind == NodeKind::Structure) {
        return Err(LoadError::Empty {
            reason: "the workbook's sheets have no cells with text".to_owned(),
        });
    }
    Ok(tree)
}

/// (name, relationship id) of each sheet, in the workbook's order.
fn sheets(xml: &str) -> Result<Vec<(String, String)>, LoadError> {
    let mut found = Vec::new();
    walk(xml, "xlsx", WORKBOOK_PART, b"workbook", |node| {
        if let Node::Open { element, .. } = node {
            if element.local == b"sheet" {
                if let (Some(name), Some(id)) = (
                    element.attribute(b"name"),
                    element.prefixed_attribute(b"id"),
                ) {
                    found.push((name, id));
                }
            }
        }
    })?;
    Ok(found)
}

/// The shared strings table: each `si`'s text, rich-text runs joined and
/// single-spaced once here rather than in every cell that names it.
fn shared_strings(xml: &str, part: &str) -> Result<Vec<String>, LoadError> {
    let mut strings = Vec::new();
    let mut current: Option<String> = None;
    let mut in_text = false;
    // Phonetic runs (`rPh`) repeat the reading of East Asian text.
    let mut in_phonetic = false;
    walk(xml, "xlsx", part, b"sst", |node| match node {
        Node::Open { element, empty } => match element.local {
            b"si" if !empty => current = Some(String::new()),
            b"si" => strings.push(String::new()),
            b"t" if !empty => in_text = true,
            b"rPh" if !empty => in_phonetic = true,
            _ => {}
        },
        Node::Close { local, .. } => match local {
            b"si" => strings.extend(current.take().map(|s| single_spaced(&s))),
            b"t" => in_text = false,
            b"rPh" => in_phonetic = false,
            _ => {}
        },
        Node::Text(text) if in_text && !in_phonetic => {
            if let Some(s) = &mut current {
                s.push_str(text);
            }
        }
        Node::Text(_) => {}
    })?;
    Ok(strings)
}

/// A row with text: its cells by column, the sheet's number for it, and
/// where it is in the sheet's XML.
struct Row {
    cells: Vec<String>,
    number: u32,
    start: usize,
    end: usize,
}

/// A merged range: its first row and column, and its last row.
struct Merge {
    row: u32,
    column: usize,
    last_row: u32,
}

/// What kind of value a cell holds (its `t` attribute).
#[derive(Clone, Copy, PartialEq, Eq)]
enum CellType {
    Shared,
    Inline,
    Boolean,
    Other,
}

struct Cell {
    column: Option<usize>,
    kind: CellType,
    value: String,
}

fn read_sheet(xml: &str, part: &str, strings: &[String]) -> Result<Vec<Row>, LoadError> {
    let mut rows: Vec<Row> = Vec::new();
    let mut merges = Vec::new();
    let mut cells: Vec<String> = Vec::new();
    let mut row_start = 0;
    let mut row_number = 0u32;
    let mut cell: Option<Cell> = None;
    let mut in_value = false;
    let mut in_phonetic = false;
    // Shared-string bytes the row's cells were charged for as they were
    // copied; the row's text counts once in all.
    let mut shared_in_row = 0u64;
    walk(xml, "xlsx", part, b"worksheet", |node| match node {
        Node::Open { element, empty } => match element.local {
            b"row" => {
                cells.clear();
                shared_in_row = 0;
                row_start = element.at;
                row_number = element
                    .attribute(b"r")
                    .and_then(|r| r.parse().ok())
                    .unwrap_or(row_number.saturating_add(1));
            }
            b"mergeCell" => merges.extend(element.attribute(b"ref").and_then(|r| merge_of(&r))),
            b"c" if !empty => {
                cell = Some(Cell {
                    column: element.attribute(b"r").and_then(|r| column_of(&r)),
                    kind: match element.attribute(b"t").as_deref() {
                        Some("s") => CellType::Shared,
                        Some("inlineStr") => CellType::Inline,
                        Some("b") => CellType::Boolean,
                        _ => CellType::Other,
                    },
                    value: String::new(),
                })
            }
            b"v" | b"t" if !empty => in_value = true,
            b"rPh" if !empty => in_phonetic = true,
            _ => {}
        },
        Node::Close { local, end, .. } => match local {
            b"v" | b"t" => in_value = false,
            b"rPh" => in_phonetic = false,
            b"c" => {
                if let Some(c) = cell.take() {
                    shared_in_row += place(&mut cells, c, strings);
                }
            }
            b"row" => {
                while cells.last().is_some_and(String::is_empty) {
                    cells.pop();
                }
                // A row is text the sheet keeps until its nodes are made,
                // however few bytes of XML it took (crate::expansion).
                let length: usize = cells.iter().map(|c| c.len() + 3).sum();
                let rest = (length as u64).saturating_sub(shared_in_row);
                if !cells.is_empty() && expansion::charge(rest).is_ok() {
                    rows.push(Row {
                        cells: std::mem::take(&mut cells),
                        number: row_number,
                        start: row_start,
                        end,
                    });
                }
            }
            _ => {}
        },
        Node::Text(text) if in_value && !in_phonetic => {
            if let Some(c) = &mut cell {
                c.value.push_str(text);
            }
        }
        Node::Text(_) => {}
    })?;
    fill_merges(&mut rows, &merges);
    Ok(rows)
}

/// A merged range from its reference ("B2:B4"), when it spans rows.
fn merge_of(reference: &str) -> Option<Merge> {
    let (first, last) = reference.split_once(':')?;
    let row_of = |cell: &str| -> Option<u32> {
        cell.trim_start_matches(|c: char| c.is_ascii_alphabetic())
            .parse()
            .ok()
    };
    let merge = Merge {
        row: row_of(first)?,
        column: column_of(first)?,
        last_row: row_of(last)?,
    };
    (merge.last_row > merge.row && merge.column < MAX_COLUMNS).then_some(merge)
}

/// Repeats each merged range's value down its first column, in the rows
/// below it that the sheet has (rows are in order, so each is found by
/// binary search), each copy charged to the file's budget.
fn fill_merges(rows: &mut [Row], merges: &[Merge]) {
    for merge in merges {
        let Ok(top) = rows.binary_search_by_key(&merge.row, |r| r.number) else {
            continue;
        };
        let Some(value) = rows[top].cells.get(merge.column).filter(|v| !v.is_empty()) else {
            continue;
        };
        let value: String = value.chars().take(CARRIED_CHARS).collect();
        for row in rows[top + 1..]
            .iter_mut()
            .take_while(|r| r.number <= merge.last_row)
        {
            if expansion::charge(value.len() as u64).is_err() {
                return;
            }
            if row.cells.len() <= merge.column {
                row.cells.resize(merge.column + 1, String::new());
            }
            if row.cells[merge.column].is_empty() {
                row.cells[merge.column] = value.clone();
            }
        }
    }
}

/// Puts a finished cell's text in its column, padding skipped columns, and
/// returns the bytes it charged. A shared string is counted against what
/// the file may produce before it is copied, so one string referenced by
/// every cell of a row cannot copy itself past the budget; once over,
/// cells are left out.
fn place(cells: &mut Vec<String>, cell: Cell, strings: &[String]) -> u64 {
    let mut charged = 0;
    let text = match cell.kind {
        CellType::Shared => cell
            .value
            .trim()
            .parse::<usize>()
            .ok()
            .and_then(|i| strings.get(i))
            .filter(|s| {
                charged = s.len() as u64;
                expansion::charge(charged).is_ok()
            })
            .cloned()
            .unwrap_or_default(),
        CellType::Boolean => match cell.value.trim() {
            "1" => "TRUE".to_owned(),
            _ => "FALSE".to_owned(),
        },
        CellType::Inline | CellType::Other => single_spaced(&cell.value),
    };
    let column = cell.column.unwrap_or(cells.len());
    if column >= MAX_COLUMNS || text.is_empty() {
        return charged;
    }
    if cells.len() <= column {
        cells.resize(column + 1, String::new());
    }
    cells[column] = text;
    charged
}

/// `text` with every run of whitespace made one space, none at the ends.
fn single_spaced(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The 0-based column of a cell reference ("A1" → 0, "AB7" → 27).
fn column_of(reference: &str) -> Option<usize> {
    let letters: Vec<u8> = reference
        .bytes()
        .take_while(u8::is_ascii_alphabetic)
        .collect();
    if letters.is_empty() || letters.len() > 3 {
        return None;
    }
    let column = letters.iter().fold(0usize, |n, &b| {
        n * 26 + usize::from(b.to_ascii_uppercase() - b'A' + 1)
    });
    Some(column - 1)
}

/// The sheet's node, and below it its rows as table nodes: blocks of up to
/// [`ROWS_PER_BLOCK`] rows the sheet numbers consecutively, each headed by
/// the sheet's first row.
fn push_sheet(tree: &mut StructureTree, name: &str, number: u32, rows: Vec<Row>) {
    let Some((first, rest)) = rows.split_first() else {
        return;
    };
    let sheet = tree.push(
        ROOT,
        NodeKind::Structure,
        name,
        Span::on_page(number, first.start, first.start),
    );
    if rest.is_empty() {
        // One row is data, not a header over nothing.
        push_rows(tree, sheet, number, None, std::slice::from_ref(first));
        return;
    }
    let mut block_start = 0;
    for i in 1..=rest.len() {
        let ends = i == rest.len()
            || i - block_start == ROWS_PER_BLOCK
            || rest[i].number != rest[i - 1].number + 1;
        if ends {
            push_rows(tree, sheet, number, Some(first), &rest[block_start..i]);
            block_start = i;
        }
    }
}

/// One table node of `rows`, with `header` as its first line.
fn push_rows(
    tree: &mut StructureTree,
    sheet: usize,
    number: u32,
    header: Option<&Row>,
    rows: &[Row],
) {
    let mut table = TableText::new();
    for (row, is_header) in header
        .map(|h| (h, true))
        .into_iter()
        .chain(rows.iter().map(|r| (r, false)))
    {
        for cell in &row.cells {
            table.cell(cell, CellSpan::default());
        }
        table.end_row(is_header);
    }
    let Some((text, shape)) = table.finish() else {
        return;
    };
    let shape = TableShape {
        first_row: header.map(|_| rows[0].number),
        ..shape
    };
    let span = Span::on_page(number, rows[0].start, rows[rows.len() - 1].end);
    tree.push_table(sheet, text, shape, span);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_references_name_their_columns() {
        assert_eq!(column_of("A1"), Some(0));
        assert_eq!(column_of("Z9"), Some(25));
        assert_eq!(column_of("AB7"), Some(27));
        assert_eq!(column_of("XFD1048576"), Some(16_383));
        assert_eq!(column_of("17"), None);
        assert_eq!(column_of("ABCD1"), None);
    }

    #[test]
    fn cells_of_every_kind_fill_their_columns_and_far_columns_are_left_out() {
        let sheet = r#"<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>
<row r="1"><c r="A1" t="s"><v>0</v></c><c r="C1" t="inlineStr"><is><t>Depth</t></is></c></row>
<row r="2"><c r="A2" t="s"><v>1</v></c><c r="B2" t="b"><v>1</v></c><c r="C2"><v>12.5</v></c><c r="XFD2"><v>far</v></c></row>
<row r="3"><c r="B3" t="s"><v>99</v></c></row>
</sheetData></worksheet>"#;
        let strings = vec!["Port".to_owned(), "Dover harbour".to_owned()];
        let rows = read_sheet(sheet, "xl/worksheets/sheet1.xml", &strings).unwrap();
        let texts: Vec<String> = rows.iter().map(|r| r.cells.join(" | ")).collect();
        assert_eq!(texts, ["Port |  | Depth", "Dover harbour | TRUE | 12.5"]);
        assert_eq!(rows.iter().map(|r| r.number).collect::<Vec<_>>(), [1, 2]);
        assert!(sheet[rows[1].start..rows[1].end].starts_with("<row r=\"2\">"));
        assert!(sheet[rows[1].start..rows[1].end].ends_with("</row>"));
    }

    #[test]
    fn shared_strings_join_rich_runs_skip_phonetic_readings_and_are_single_spaced() {
        let xml = r#"<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>plain</t></si><si><r><t>ri</t></r><r><t>ch</t></r><rPh><t>ignored</t></rPh></si><si/><si><t xml:space="preserve"> Dover  harbour </t></si></sst>"#;
        assert_eq!(
            shared_strings(xml, "s.xml").unwrap(),
            ["plain", "rich", "", "Dover harbour"]
        );
    }

    #[test]
    fn rows_below_the_header_come_in_blocks_of_consecutive_rows() {
        // Rows 1 to 60, then a gap, then 70 and 71.
        let rows: Vec<Row> = (1..=60)
            .chain([70, 71])
            .map(|n| Row {
                cells: vec![format!("row {n}"), format!("{}", n * 2)],
                number: n,
                start: n as usize * 10,
                end: n as usize * 10 + 9,
            })
            .collect();
        let mut tree = StructureTree::new("Book", Span::default());
        push_sheet(&mut tree, "Tides", 2, rows);
        let shape: Vec<(u32, usize, Option<u32>)> = tree
            .nodes()
            .iter()
            .skip(2)
            .map(|n| {
                (
                    n.depth,
                    n.text.lines().count(),
                    n.table.and_then(|t| t.first_row),
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                (2, 26, Some(2)),
                (2, 26, Some(27)),
                (2, 10, Some(52)),
                (2, 3, Some(70))
            ]
        );
        assert!(tree.nodes()[2..]
            .iter()
            .all(|n| n.text.starts_with("row 1 | 2\n")));
        assert_eq!(tree.node(5).span, Span::on_page(2, 700, 719));
    }

    #[test]
    fn a_merged_range_is_repeated_down_its_first_column() {
        let sheet = r#"<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>
<row r="1"><c r="A1" t="inlineStr"><is><t>Zone</t></is></c><c r="B1" t="inlineStr"><is><t>Port</t></is></c></row>
<row r="2"><c r="A2" t="inlineStr"><is><t>North</t></is></c><c r="B2" t="inlineStr"><is><t>Leith</t></is></c></row>
<row r="3"><c r="B3" t="inlineStr"><is><t>Tyne</t></is></c></row>
<row r="5"><c r="B5" t="inlineStr"><is><t>Dover</t></is></c></row>
</sheetData><mergeCells count="2"><mergeCell ref="A2:A3"/><mergeCell ref="A1:B1"/></mergeCells></worksheet>"#;
        let rows = read_sheet(sheet, "xl/worksheets/sheet1.xml", &[]).unwrap();
        let texts: Vec<String> = rows.iter().map(|r| r.cells.join(" | ")).collect();
        assert_eq!(
            texts,
            ["Zone | Port", "North | Leith", "North | Tyne", " | Dover"]
        );
        let mut tree = StructureTree::new("Book", Span::default());
        push_sheet(&mut tree, "Ports", 1, rows);
        assert_eq!(
            tree.node(2).text,
            "Zone | Port\nNorth | Leith\nNorth | Tyne"
        );
        assert_eq!(tree.node(3).text, "Zone | Port\n | Dover");
        assert_eq!(tree.node(3).table.and_then(|t| t.first_row), Some(5));
    }
}
