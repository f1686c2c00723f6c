//! XLSX: one structure node per sheet, in the workbook's order, named by
//! the sheet. A sheet is read as a table: its first row with text is the
//! header, a structure node whose text is the column names, and the rows
//! below it are content nodes of up to [`ROWS_PER_BLOCK`] rows each, cells
//! separated by " | "; a sheet of one row is that row. The title is `dc:title` of `docProps/core.xml`.
//! Spans are byte ranges in the sheet's XML, with `page` the sheet number.

use super::package::{targets, Package};
use super::xml::{walk, Node};
use super::LoadError;
use crate::expansion;
use crate::structure_tree::{NodeKind, Span, StructureTree, ROOT};

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

/// A row with text: its cells joined, and where it is in the sheet's XML.
struct Row {
    text: String,
    start: usize,
    end: usize,
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
    let mut rows = Vec::new();
    let mut cells: Vec<String> = Vec::new();
    let mut row_start = 0;
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
            }
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
                        text: cells.join(" | "),
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
    Ok(rows)
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

/// The sheet's node, its header row below it, and blocks of rows below
/// the header.
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
        let span = Span::on_page(number, first.start, first.end);
        tree.push(sheet, NodeKind::Content, first.text.as_str(), span);
        return;
    }
    let header = tree.push(
        sheet,
        NodeKind::Structure,
        first.text.as_str(),
        Span::on_page(number, first.start, first.end),
    );
    for block in rest.chunks(ROWS_PER_BLOCK) {
        let text = block
            .iter()
            .map(|r| r.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let span = Span::on_page(number, block[0].start, block[block.len() - 1].end);
        tree.push(header, NodeKind::Content, text, span);
    }
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
        let texts: Vec<&str> = rows.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(texts, ["Port |  | Depth", "Dover harbour | TRUE | 12.5"]);
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
    fn rows_below_the_header_come_in_blocks() {
        let rows: Vec<Row> = (0..60)
            .map(|i| Row {
                text: format!("row {i}"),
                start: i * 10,
                end: i * 10 + 9,
            })
            .collect();
        let mut tree = StructureTree::new("Book", Span::default());
        push_sheet(&mut tree, "Tides", 2, rows);
        let shape: Vec<(u32, NodeKind, usize)> = tree
            .nodes()
            .iter()
            .map(|n| (n.depth, n.kind, n.text.lines().count()))
            .collect();
        assert_eq!(
            shape,
            [
                (0, NodeKind::Structure, 1),
                (1, NodeKind::Structure, 1),
                (2, NodeKind::Structure, 1),
                (3, NodeKind::Content, 25),
                (3, NodeKind::Content, 25),
                (3, NodeKind::Content, 9),
            ]
        );
        assert_eq!(tree.node(2).text, "row 0");
        assert_eq!(tree.node(5).span, Span::on_page(2, 510, 599));
    }
}
