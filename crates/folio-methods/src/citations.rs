//! Citations: the `[n]` markers a model writes, mapped back to the numbered
//! passages it was given, and from there to file, heading path and span.
//! Sources the model did not mark are matched to its sentences afterwards
//! (`attribution.rs`) and carry [`CitedBy::Attribution`].

use serde::{Deserialize, Serialize};

use super::Passage;
use folio_documents::loaders::ocr::OcrMark;
use folio_documents::table::TableRows;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct Citation {
    pub number: usize,
    pub path: String,
    pub heading_path: String,
    pub span_start: i64,
    pub span_end: i64,
    pub page: Option<i64>,
    pub chunk_id: i64,
    /// Set when OCR read the cited page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub ocr: Option<OcrMark>,
    /// Who named the source: the model with `[n]`, or Folio matching an
    /// unmarked sentence to the passage. Runs stored before attribution
    /// lack it: the model cited all of theirs.
    #[serde(default, skip_serializing_if = "CitedBy::is_model")]
    #[ts(as = "Option<CitedBy>", optional)]
    pub by: CitedBy,
    /// For an attributed source: the answer's sentences matched to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub supports: Vec<String>,
    /// The table rows cited, when the source is (a piece of) one table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rows: Option<TableRows>,
}

/// How an answer came to name a source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "kebab-case")]
pub enum CitedBy {
    /// The model wrote the passage's `[n]`.
    #[default]
    Model,
    /// The model left a sentence unmarked, and Folio matched it to the
    /// passage.
    Attribution,
}

impl CitedBy {
    pub fn is_model(&self) -> bool {
        *self == CitedBy::Model
    }
}

impl Citation {
    pub fn of(passage: &Passage) -> Citation {
        Citation {
            number: passage.number,
            path: passage.path.clone(),
            heading_path: passage.heading_path.clone(),
            span_start: passage.span_start,
            span_end: passage.span_end,
            page: passage.page,
            chunk_id: passage.chunk_id,
            ocr: passage.ocr,
            by: CitedBy::Model,
            supports: Vec::new(),
            rows: passage.rows,
        }
    }
}

/// Where in its document a source is, as a person reads it: the page
/// (a PDF's, or a slide, sheet or chapter) and the table rows when it has
/// them, else its bytes.
pub fn place_in_document(
    start: i64,
    end: i64,
    page: Option<i64>,
    rows: Option<TableRows>,
) -> String {
    match (page, rows) {
        (Some(page), Some(rows)) => format!("page {page}, {rows}"),
        (Some(page), None) => format!("page {page}"),
        (None, Some(rows)) => rows.to_string(),
        (None, None) => format!("bytes {start}–{end}"),
    }
}

/// Every number inside square brackets, in order of first appearance:
/// `[2]`, `[1, 3]`, `[1][4]` and `[2-3]` (a range) all count. Brackets
/// holding anything else (`[see below]`) are not citations.
pub fn cited_numbers(text: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        rest = &rest[open + 1..];
        let Some(close) = rest.find(']') else { break };
        let inside = &rest[..close];
        if let Some(numbers) = parse_group(inside) {
            for n in numbers {
                if !found.contains(&n) {
                    found.push(n);
                }
            }
            rest = &rest[close + 1..];
        }
    }
    found
}

/// `text` without its citation markers, for showing an earlier answer to
/// the model again: its numbers named passages it will not see.
pub fn without_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        match after.find(']') {
            Some(close) if parse_group(&after[..close]).is_some() => {
                out.push_str(rest[..open].trim_end_matches(' '));
                rest = &after[close + 1..];
            }
            _ => {
                out.push_str(&rest[..=open]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether `text` is citation markers and nothing they could stand beside:
/// "[1]", "[2][3]." A small model can take "end each sentence with its
/// number" for the form of the answer and write the number alone.
pub fn only_markers(text: &str) -> bool {
    !cited_numbers(text).is_empty() && !without_markers(text).chars().any(char::is_alphanumeric)
}

fn parse_group(inside: &str) -> Option<Vec<usize>> {
    let mut numbers = Vec::new();
    for part in inside.split([',', ';']) {
        let part = part.trim();
        match part.split_once(['-', '–']) {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 20 {
                    return None;
                }
                numbers.extend(a..=b);
            }
            None => numbers.push(part.parse().ok()?),
        }
    }
    Some(numbers)
}

/// The passages the answer cites, in citation order, and the cited numbers
/// that match no passage.
pub fn resolve(answer: &str, passages: &[Passage]) -> (Vec<Citation>, Vec<usize>) {
    let mut citations = Vec::new();
    let mut unknown = Vec::new();
    for n in cited_numbers(answer) {
        match passages.iter().find(|p| p.number == n) {
            Some(p) => citations.push(Citation::of(p)),
            None => unknown.push(n),
        }
    }
    (citations, unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_markers_in_order_without_repeats() {
        assert_eq!(
            cited_numbers("A [2]. B [1, 3][2]. C [4-5]."),
            vec![2, 1, 3, 4, 5]
        );
        assert_eq!(
            cited_numbers("see [note] and [x, 1] and [1"),
            Vec::<usize>::new()
        );
        assert_eq!(cited_numbers("[[3]]"), vec![3]);
        assert!(cited_numbers("[1-999999999]").is_empty());
    }

    #[test]
    fn markers_are_taken_out_and_other_brackets_kept() {
        assert_eq!(
            without_markers("A [2]. B [1, 3][2], C [note] [x"),
            "A. B, C [note] [x"
        );
        assert_eq!(without_markers("[[3]]"), "[]");
    }

    #[test]
    fn a_reply_of_markers_alone_is_told_from_an_answer() {
        for bare in ["[1]", " [3]\n", "[2][4].", "[1, 2]"] {
            assert!(only_markers(bare), "{bare:?}");
        }
        for answer in ["Ferris [1].", "4 [2]", "Ferris", "", "[see below]", "[x]"] {
            assert!(!only_markers(answer), "{answer:?}");
        }
    }

    #[test]
    fn unknown_numbers_are_reported_not_cited() {
        let passage = |number| Passage {
            number,
            chunk_id: number as i64,
            path: format!("/d/{number}.md"),
            heading_path: "H".into(),
            span_start: 0,
            span_end: 1,
            page: None,
            ocr: None,
            score: 1.0,
            text: "t".into(),
            suspected_instructions: None,
            rows: None,
        };
        let (citations, unknown) = resolve("x [2] y [7]", &[passage(1), passage(2)]);
        assert_eq!(
            citations.iter().map(|c| c.number).collect::<Vec<_>>(),
            vec![2]
        );
        assert_eq!(citations[0].path, "/d/2.md");
        assert_eq!(unknown, vec![7]);
    }
}
