//! PDF: page text through pdf-extract, title and outline (bookmarks) through
//! lopdf. Outline entries become structure nodes nested by level; each
//! page's paragraphs go under the last entry starting on or before that page
//! (split mid-page where an entry's title is found on its page). Spans are
//! byte ranges in the page's extracted text, with the page number, and each
//! page's layout says where on the page those bytes are drawn
//! (`pdf_layout.rs`).

use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};

use lopdf::{Dictionary, Document, Object, ObjectId};

use super::pdf_layout::{PageLayout, PageWriter};
use super::pdf_ocr::{self, Pages, PagesRead};
use super::pdf_streams;
use super::text::paragraphs;
use super::{LoadError, LoadOptions, Parsed};
use crate::structure_tree::{HeadingStack, NodeKind, Span, StructureTree};

/// Bounds on the outline walk: hostile files can make outline and name
/// trees arbitrarily large or deep.
const MAX_OUTLINE_ENTRIES: usize = 10_000;
const MAX_OUTLINE_DEPTH: u32 = 32;
const MAX_NAME_TREE_DEPTH: u32 = 32;
const MAX_NAMED_DESTINATIONS: usize = 100_000;

pub(super) fn parse(
    bytes: &[u8],
    fallback_title: &str,
    options: &LoadOptions,
) -> Result<Parsed, LoadError> {
    let doc = guarded(|| pdf_streams::load(bytes, options.budget, corrupt))??;
    let page_ids = guarded(|| doc.get_pages())?;
    let (mut pages, mut layout) = extract_pages(&doc, &page_ids)?;
    let read = if options.ocr.enabled {
        let mut read_into = Pages {
            texts: &mut pages,
            layouts: &mut layout,
        };
        pdf_ocr::read_blank_pages(bytes, &doc, &page_ids, &mut read_into, options)?
    } else {
        PagesRead::default()
    };
    if pages.iter().all(|page| page.trim().is_empty()) {
        let reason = match (&read.unavailable, options.ocr.enabled) {
            (Some(why), _) => format!("the PDF has no text layer, and OCR could not run: {why}"),
            (None, true) => {
                "the PDF has no text layer, and OCR found no text on its pages".to_owned()
            }
            (None, false) => {
                "the PDF has no text layer (a scan?); turn OCR on to read it".to_owned()
            }
        };
        return Err(LoadError::Empty { reason });
    }
    // A broken outline or info dictionary costs the structure, not the text.
    let title = guarded(|| info_title(&doc)).ok().flatten();
    let outline = guarded(|| outline(&doc, &page_ids)).unwrap_or_default();
    Ok(Parsed {
        tree: assemble(title.as_deref().unwrap_or(fallback_title), &pages, &outline),
        facts: Default::default(),
        note: read.note(),
        ocr_pages: read.pages,
        layout,
    })
}

fn corrupt(reason: String) -> LoadError {
    LoadError::Corrupt {
        format: "pdf",
        reason,
    }
}

/// Runs `f`, turning a panic (pdf-extract and lopdf both panic on some
/// malformed files) into a Corrupt error.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, LoadError> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| corrupt(panic_reason(payload.as_ref())))
}

fn panic_reason(payload: &(dyn Any + Send)) -> String {
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("unknown error");
    format!("the PDF parser failed: {message}")
}

/// Text of every page, in page order, and where it is drawn. A page that
/// fails on its own is left empty so that one bad page does not lose the
/// rest; a document where every page fails is corrupt.
fn extract_pages(
    doc: &Document,
    page_ids: &std::collections::BTreeMap<u32, ObjectId>,
) -> Result<(Vec<String>, Vec<PageLayout>), LoadError> {
    let mut pages = Vec::with_capacity(page_ids.len());
    let mut layouts = Vec::with_capacity(page_ids.len());
    let mut first_error = None;
    // One extractor for the whole document keeps its fonts from page to
    // page; a page that panics leaves it holding only fonts made whole.
    let mut extractor = guarded(|| pdf_extract::PageExtractor::new(doc))?;
    for &number in page_ids.keys() {
        let outcome = guarded(|| {
            let mut writer = PageWriter::default();
            extractor
                .output_page(&mut writer, number)
                .map(|()| writer.finish())
                .map_err(|e| corrupt(e.to_string()))
        })
        .and_then(|result| result);
        let (text, layout) = outcome.unwrap_or_else(|e| {
            first_error.get_or_insert(e);
            Default::default()
        });
        pages.push(text);
        layouts.push(layout);
    }
    match first_error {
        Some(error) if pages.iter().all(String::is_empty) => Err(error),
        _ if pages.is_empty() => Err(corrupt("the PDF has no pages".to_owned())),
        _ => Ok((pages, layouts)),
    }
}

/// The document information dictionary's /Title, if it says anything.
fn info_title(doc: &Document) -> Option<String> {
    let (_, info) = doc.dereference(doc.trailer.get(b"Info").ok()?).ok()?;
    let (_, title) = doc
        .dereference(info.as_dict().ok()?.get(b"Title").ok()?)
        .ok()?;
    let title = collapse_whitespace(&lopdf::decode_text_string(title).ok()?);
    (!title.is_empty()).then_some(title)
}

fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct OutlineEntry {
    /// 1 for top-level entries.
    level: u32,
    title: String,
    /// 1-based page the entry points at, when its destination resolves.
    page: Option<u32>,
}

/// The outline in reading order (pre-order). Walked here rather than with
/// lopdf's `get_toc`, which merges entries with equal titles ("Summary" in
/// every chapter) and follows /Next and /First links without cycle checks.
fn outline(
    doc: &Document,
    page_ids: &std::collections::BTreeMap<u32, ObjectId>,
) -> Vec<OutlineEntry> {
    let Ok(catalog) = doc.catalog() else {
        return Vec::new();
    };
    let Ok(root) = doc.get_dict_in_dict(catalog, b"Outlines") else {
        return Vec::new();
    };
    let page_numbers: HashMap<ObjectId, u32> =
        page_ids.iter().map(|(&number, &id)| (id, number)).collect();
    let mut names = NamedDestinations::default();
    let mut entries = Vec::new();
    let mut visited = HashSet::new();
    let mut stack: Vec<(ObjectId, u32)> = root
        .get(b"First")
        .and_then(Object::as_reference)
        .map(|id| (id, 1))
        .into_iter()
        .collect();
    while let Some((id, level)) = stack.pop() {
        if entries.len() >= MAX_OUTLINE_ENTRIES {
            break;
        }
        if !visited.insert(id) {
            continue;
        }
        let Ok(item) = doc.get_dictionary(id) else {
            continue;
        };
        // Siblings go on the stack first so that children are read first.
        if let Ok(next) = item.get(b"Next").and_then(Object::as_reference) {
            stack.push((next, level));
        }
        if level < MAX_OUTLINE_DEPTH {
            if let Ok(child) = item.get(b"First").and_then(Object::as_reference) {
                stack.push((child, level + 1));
            }
        }
        let title = item
            .get(b"Title")
            .ok()
            .and_then(|t| doc.dereference(t).ok())
            .and_then(|(_, t)| lopdf::decode_text_string(t).ok())
            .map(|t| collapse_whitespace(&t))
            .unwrap_or_default();
        if title.is_empty() {
            continue;
        }
        let page = entry_destination(doc, item)
            .and_then(|dest| destination_page(doc, dest, &page_numbers, &mut names, 0));
        entries.push(OutlineEntry { level, title, page });
    }
    entries
}

/// The destination of an outline item: /Dest, or the /D of a GoTo action.
fn entry_destination<'a>(doc: &'a Document, item: &'a Dictionary) -> Option<&'a Object> {
    if let Ok(dest) = item.get(b"Dest") {
        return Some(dest);
    }
    let action = doc.get_dict_in_dict(item, b"A").ok()?;
    (action.get(b"S").and_then(Object::as_name).ok()? == b"GoTo")
        .then(|| action.get(b"D").ok())
        .flatten()
}

fn destination_page(
    doc: &Document,
    dest: &Object,
    page_numbers: &HashMap<ObjectId, u32>,
    names: &mut NamedDestinations,
    hops: u32,
) -> Option<u32> {
    if hops > 4 {
        return None;
    }
    let (_, dest) = doc.dereference(dest).ok()?;
    match dest {
        Object::Array(parts) => match parts.first()? {
            Object::Reference(page) => page_numbers.get(page).copied(),
            // Some writers give a 0-based page index instead of a page object.
            Object::Integer(index) => u32::try_from(*index).ok().and_then(|i| i.checked_add(1)),
            _ => None,
        },
        Object::Dictionary(dict) => {
            destination_page(doc, dict.get(b"D").ok()?, page_numbers, names, hops + 1)
        }
        Object::Name(name) | Object::String(name, _) => {
            let target = names.lookup(doc, name)?.clone();
            destination_page(doc, &target, page_numbers, names, hops + 1)
        }
        _ => None,
    }
}

/// Named destinations, read once on first use: the catalog's /Dests
/// dictionary (PDF 1.1) and the /Names /Dests name tree.
#[derive(Default)]
struct NamedDestinations {
    map: Option<HashMap<Vec<u8>, Object>>,
}

impl NamedDestinations {
    fn lookup(&mut self, doc: &Document, name: &[u8]) -> Option<&Object> {
        self.map
            .get_or_insert_with(|| read_named_destinations(doc))
            .get(name)
    }
}

fn read_named_destinations(doc: &Document) -> HashMap<Vec<u8>, Object> {
    let mut map = HashMap::new();
    let Ok(catalog) = doc.catalog() else {
        return map;
    };
    if let Ok(dests) = doc.get_dict_in_dict(catalog, b"Dests") {
        for (key, value) in dests.iter().take(MAX_NAMED_DESTINATIONS) {
            map.insert(key.clone(), value.clone());
        }
    }
    if let Ok(tree) = doc
        .get_dict_in_dict(catalog, b"Names")
        .and_then(|names| doc.get_dict_in_dict(names, b"Dests"))
    {
        let mut visited = HashSet::new();
        collect_name_tree(doc, tree, 0, &mut visited, &mut map);
    }
    map
}

fn collect_name_tree(
    doc: &Document,
    node: &Dictionary,
    depth: u32,
    visited: &mut HashSet<ObjectId>,
    map: &mut HashMap<Vec<u8>, Object>,
) {
    if depth > MAX_NAME_TREE_DEPTH || map.len() >= MAX_NAMED_DESTINATIONS {
        return;
    }
    if let Ok(pairs) = node
        .get(b"Names")
        .and_then(|n| doc.dereference(n))
        .and_then(|(_, n)| n.as_array())
    {
        for pair in pairs.chunks_exact(2) {
            if let Ok(key) = pair[0].as_str() {
                map.insert(key.to_vec(), pair[1].clone());
            }
        }
    }
    if let Ok(kids) = node
        .get(b"Kids")
        .and_then(|k| doc.dereference(k))
        .and_then(|(_, k)| k.as_array())
    {
        for kid in kids {
            let Ok(id) = kid.as_reference() else {
                continue;
            };
            if visited.insert(id) {
                if let Ok(child) = doc.get_dictionary(id) {
                    collect_name_tree(doc, child, depth + 1, visited, map);
                }
            }
        }
    }
}

/// Builds the tree from page texts and the outline. Entries keep outline
/// order; an entry pointing before the one above it (or nowhere) is taken to
/// start where that one does, so pages are never visited twice and node
/// order stays document order.
/// The tree of pages of text under `title`, split by the outline's entries
/// (image files, which have no outline, are pages too).
pub(super) fn assemble(title: &str, pages: &[String], outline: &[OutlineEntry]) -> StructureTree {
    let mut tree = StructureTree::new(title, Span::default());
    let mut headings = HeadingStack::default();
    let mut starts = Vec::with_capacity(outline.len());
    let mut running = 1;
    for entry in outline {
        running = entry.page.map_or(running, |page| page.max(running));
        starts.push(running);
    }
    let mut next_entry = 0;
    for (index, text) in pages.iter().enumerate() {
        let page = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let paras: Vec<Range<usize>> = paragraphs(text).collect();
        let mut cursor = 0;
        while next_entry < outline.len() && starts[next_entry] <= page {
            let entry = &outline[next_entry];
            next_entry += 1;
            let found = (entry.page == Some(page))
                .then(|| find_heading(text, &paras[cursor..], &entry.title))
                .flatten();
            let span = match found {
                Some(found) => {
                    push_paragraphs(
                        &mut tree,
                        headings.parent(),
                        page,
                        text,
                        &paras[cursor..cursor + found.index],
                    );
                    cursor += found.index;
                    let para = paras[cursor].clone();
                    let first_line = text[para.clone()]
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .trim_end();
                    if found.whole {
                        cursor += 1;
                    }
                    Span::on_page(page, para.start, para.start + first_line.len())
                }
                None => Span::on_page(page, 0, 0),
            };
            headings.push(&mut tree, entry.level, &entry.title, span);
        }
        push_paragraphs(&mut tree, headings.parent(), page, text, &paras[cursor..]);
    }
    // Entries pointing past the last page still belong in the outline.
    for entry in &outline[next_entry..] {
        let page = u32::try_from(pages.len()).unwrap_or(u32::MAX);
        headings.push(
            &mut tree,
            entry.level,
            &entry.title,
            Span::on_page(page, 0, 0),
        );
    }
    tree
}

fn push_paragraphs(
    tree: &mut StructureTree,
    parent: usize,
    page: u32,
    text: &str,
    paras: &[Range<usize>],
) {
    for range in paras {
        tree.push(
            parent,
            NodeKind::Content,
            &text[range.clone()],
            Span::on_page(page, range.start, range.end),
        );
    }
}

struct HeadingMatch {
    /// Index into the paragraphs searched.
    index: usize,
    /// The paragraph is the heading and nothing else.
    whole: bool,
}

/// Finds the paragraph where an outline entry's title is printed: one whose
/// first line is the title, comparing letters and digits only (so "2.1
/// Setup" matches "2.1. Setup", and spacing or case do not matter), perhaps
/// after a section number the outline leaves out ("2.1 Setup" for "Setup",
/// "A.1 Licence" for "Licence"). Body text that merely begins with the
/// title's words does not count.
fn find_heading(text: &str, paras: &[Range<usize>], title: &str) -> Option<HeadingMatch> {
    let key: Vec<char> = alphanumeric_lowercase(title).collect();
    if key.is_empty() {
        return None;
    }
    paras.iter().enumerate().find_map(|(index, range)| {
        let para = &text[range.clone()];
        let (first_line, rest) = para.split_once('\n').unwrap_or((para, ""));
        let line: Vec<char> = alphanumeric_lowercase(first_line).collect();
        let number = line.strip_suffix(key.as_slice())?;
        is_section_number(number).then(|| HeadingMatch {
            index,
            whole: rest.trim().is_empty(),
        })
    })
}

/// Nothing, digits, or one letter and digits (an appendix): what is left of
/// "2.1." or "A.1" once punctuation is gone.
fn is_section_number(chars: &[char]) -> bool {
    let digits = match chars.split_first() {
        Some((first, rest)) if first.is_alphabetic() && !rest.is_empty() => rest,
        _ => chars,
    };
    digits.iter().all(char::is_ascii_digit)
}

fn alphanumeric_lowercase(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(level: u32, title: &str, page: Option<u32>) -> OutlineEntry {
        OutlineEntry {
            level,
            title: title.to_owned(),
            page,
        }
    }

    fn outline_of(tree: &StructureTree) -> Vec<(u32, NodeKind, &str, Option<u32>)> {
        tree.nodes()
            .iter()
            .map(|n| (n.depth, n.kind, n.text.as_str(), n.span.page))
            .collect()
    }

    #[test]
    fn pages_go_under_the_last_entry_starting_on_or_before_them() {
        let pages = vec![
            "Cover text".to_owned(),
            "Intro body one\n\nIntro body two".to_owned(),
            "More intro".to_owned(),
            "Detail text".to_owned(),
        ];
        let outline = vec![
            entry(1, "Introduction", Some(2)),
            entry(2, "Details", Some(4)),
            entry(1, "Appendix", Some(9)),
        ];
        let tree = assemble("Doc", &pages, &outline);
        use NodeKind::*;
        assert_eq!(
            outline_of(&tree),
            vec![
                (0, Structure, "Doc", None),
                (1, Content, "Cover text", Some(1)),
                (1, Structure, "Introduction", Some(2)),
                (2, Content, "Intro body one", Some(2)),
                (2, Content, "Intro body two", Some(2)),
                (2, Content, "More intro", Some(3)),
                (2, Structure, "Details", Some(4)),
                (3, Content, "Detail text", Some(4)),
                (1, Structure, "Appendix", Some(4)),
            ]
        );
        let second = tree.node(4).span;
        assert_eq!(&pages[1][second.start..second.end], "Intro body two");
    }

    #[test]
    fn a_title_printed_on_the_page_splits_it() {
        let pages = vec![
            "1 Intro text begins here\n\n1 Intro\n\nfirst words\n\n2. Method\nwith body on the same paragraph\n\nlast words\n\nA.1 Notes\n\nnote text"
                .to_owned(),
        ];
        let outline = vec![
            entry(1, "1 Intro", Some(1)),
            entry(1, "2 Method", Some(1)),
            entry(1, "Notes", Some(1)),
        ];
        let tree = assemble("Paper", &pages, &outline);
        use NodeKind::*;
        assert_eq!(
            outline_of(&tree)[1..],
            [
                (1, Content, "1 Intro text begins here", Some(1)),
                (1, Structure, "1 Intro", Some(1)),
                (2, Content, "first words", Some(1)),
                (1, Structure, "2 Method", Some(1)),
                (
                    2,
                    Content,
                    "2. Method\nwith body on the same paragraph",
                    Some(1)
                ),
                (2, Content, "last words", Some(1)),
                (1, Structure, "Notes", Some(1)),
                (2, Content, "note text", Some(1)),
            ]
        );
    }

    #[test]
    fn section_numbers_may_prefix_the_printed_title() {
        assert!(is_section_number(&[]));
        assert!(is_section_number(&['2', '1']));
        assert!(is_section_number(&['a', '1']));
        assert!(!is_section_number(&['a']));
        assert!(!is_section_number(&['s', 'e', 'e']));
        let text = "see Setup\n\n2.1 Setup";
        let paras: Vec<_> = paragraphs(text).collect();
        assert_eq!(
            find_heading(text, &paras, "Setup").map(|m| m.index),
            Some(1)
        );
    }

    #[test]
    fn backwards_and_unresolved_entries_keep_document_order() {
        let pages = vec!["p1".to_owned(), "p2".to_owned(), "p3".to_owned()];
        let outline = vec![
            entry(1, "A", Some(3)),
            entry(1, "B", Some(1)),
            entry(2, "C", None),
        ];
        let tree = assemble("D", &pages, &outline);
        let texts: Vec<&str> = tree.nodes().iter().map(|n| n.text.as_str()).collect();
        assert_eq!(texts, vec!["D", "p1", "p2", "A", "B", "C", "p3"]);
        assert_eq!(tree.node(6).parent, Some(5));
    }

    #[test]
    fn without_an_outline_paragraphs_sit_under_the_root() {
        let pages = vec!["one\n\ntwo".to_owned(), String::new(), "three".to_owned()];
        let tree = assemble("T", &pages, &[]);
        assert!(tree.nodes()[1..]
            .iter()
            .all(|n| n.parent == Some(0) && n.kind == NodeKind::Content));
        assert_eq!(
            tree.nodes()[1..]
                .iter()
                .map(|n| n.span.page)
                .collect::<Vec<_>>(),
            vec![Some(1), Some(1), Some(3)]
        );
    }

    #[test]
    fn garbage_is_corrupt_not_a_panic() {
        for bytes in [
            &b""[..],
            b"%PDF-1.4\n",
            b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF",
            b"\x00\xff\xfe garbage",
        ] {
            match parse(bytes, "x", &LoadOptions::budget(u64::MAX)) {
                Err(LoadError::Corrupt { format: "pdf", .. }) => {}
                other => panic!("{:?}", other.map(|p| p.tree.len())),
            }
        }
    }
}
